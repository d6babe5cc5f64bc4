import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { LIMITS } from '@chronicle/adventure';

// Page sizes of the read routes. A page bounds one response, not what may be stored: the
// story, the log and the list of adventures are read page by page.

/** Story actions in `GET /v1/adventures/:id` when no limit is asked for. */
export const ACTIONS_PAGE_DEFAULT = 60;
export const ACTIONS_PAGE_MAX = 240;
export const EVENTS_PAGE_DEFAULT = 100;
export const EVENTS_PAGE_MAX = 1000;
export const ADVENTURES_PAGE_DEFAULT = 50;
export const ADVENTURES_PAGE_MAX = 200;

export class ActionsPageQuery {
  @ApiPropertyOptional({ description: 'Return the actions before this one on the story path.' })
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.idChars)
  before?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: ACTIONS_PAGE_MAX, default: ACTIONS_PAGE_DEFAULT })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be a whole number' })
  @Min(1)
  @Max(ACTIONS_PAGE_MAX, { message: `limit must be at most ${ACTIONS_PAGE_MAX}` })
  limit?: number;
}

export class EventsPageQuery {
  @ApiPropertyOptional({ description: 'Return events after this stream version.', default: 0 })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'after must be a stream version (a whole number)' })
  @Min(0)
  after?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: EVENTS_PAGE_MAX, default: EVENTS_PAGE_DEFAULT })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be a whole number' })
  @Min(1)
  @Max(EVENTS_PAGE_MAX, { message: `limit must be at most ${EVENTS_PAGE_MAX}` })
  limit?: number;
}

export class AdventuresPageQuery {
  @ApiPropertyOptional({ description: 'Return adventures listed after this adventure id.' })
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.idChars)
  after?: string;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: ADVENTURES_PAGE_MAX,
    default: ADVENTURES_PAGE_DEFAULT,
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be a whole number' })
  @Min(1)
  @Max(ADVENTURES_PAGE_MAX, { message: `limit must be at most ${ADVENTURES_PAGE_MAX}` })
  limit?: number;
}
