import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, IsUUID, MaxLength, MinLength } from 'class-validator';
import { LIMITS } from '@chronicle/adventure';

const tooLong = (max: number) => ({
  message: `$property is too long; keep it to ${max} characters`,
});
const required = { message: '$property is required: write what should be remembered' };

export class AddMemoryDto {
  @ApiPropertyOptional({
    format: 'uuid',
    description: 'Client-chosen id: sending the same id again answers the memory already added.',
  })
  @IsOptional()
  @IsUUID('all', { message: 'id must be a uuid' })
  id?: string;

  @ApiProperty({ maxLength: LIMITS.memoryTextChars, example: 'Mira owes Ash a favour.' })
  @IsString()
  @MinLength(1, required)
  @MaxLength(LIMITS.memoryTextChars, tooLong(LIMITS.memoryTextChars))
  text!: string;
}

export class EditMemoryDto {
  @ApiProperty({ maxLength: LIMITS.memoryTextChars })
  @IsString()
  @MinLength(1, required)
  @MaxLength(LIMITS.memoryTextChars, tooLong(LIMITS.memoryTextChars))
  text!: string;
}

export class EditSummaryDto {
  @ApiProperty({ maxLength: LIMITS.textChars, description: "The player's own summary." })
  @IsString()
  @MinLength(1, { message: '$property is required: write the summary' })
  @MaxLength(LIMITS.textChars, tooLong(LIMITS.textChars))
  text!: string;
}

/** One story action a memory was written from, as the current path holds it. */
export class MemorySourceView {
  @ApiProperty({ format: 'uuid' })
  actionId!: string;

  @ApiProperty({ description: 'Its position on the path (the opening is 0).' })
  depth!: number;

  @ApiProperty({ enum: ['start', 'do', 'say', 'story', 'continue', 'ai'] })
  type!: string;

  @ApiProperty({ description: "The story's own text of that action, as it stands now." })
  text!: string;
}

export class MemorySourcesView {
  @ApiProperty()
  memoryId!: string;

  @ApiProperty({ description: 'The memory as the bank holds it.' })
  text!: string;

  @ApiProperty({
    type: [MemorySourceView],
    description:
      'Its source actions on the current path, oldest first; empty for a memory you wrote yourself.',
  })
  sources!: MemorySourceView[];

  @ApiProperty()
  version!: number;
}
