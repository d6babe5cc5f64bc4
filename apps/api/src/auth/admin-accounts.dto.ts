import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
} from 'class-validator';

export const USERS_PAGE_DEFAULT = 50;
export const USERS_PAGE_MAX = 200;

export class UsersPageQuery {
  @ApiPropertyOptional({ description: 'Return the users listed after this user id.' })
  @IsOptional()
  @IsUUID('all', { message: 'after must be a user id from the list (`next`)' })
  after?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: USERS_PAGE_MAX, default: USERS_PAGE_DEFAULT })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be a whole number' })
  @Min(1)
  @Max(USERS_PAGE_MAX, { message: `limit must be at most ${USERS_PAGE_MAX}` })
  limit?: number;
}

export class CreateUserDto {
  @ApiProperty({ example: 'mira', maxLength: 200 })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name!: string;

  @ApiPropertyOptional({
    description: "Model tokens a day; absent: the installation's DAILY_TOKEN_BUDGET. 0: no budget.",
    example: 200000,
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(2_000_000_000)
  dailyTokenBudget?: number;
}

/** A change to a user: each field present is set, the others stay. */
export class UpdateUserDto {
  @ApiPropertyOptional({ example: 'mira', maxLength: 200 })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({
    description:
      "Model tokens a day; null: back to the installation's DAILY_TOKEN_BUDGET. 0: no budget. Takes effect at once on every process.",
    example: 500000,
    nullable: true,
    type: Number,
  })
  // null is a value here (back to the default), so only an absent field is skipped
  @ValidateIf((_, value) => value !== undefined && value !== null)
  @IsInt()
  @Min(0)
  @Max(2_000_000_000)
  dailyTokenBudget?: number | null;
}

export class CreateApiKeyDto {
  @ApiPropertyOptional({ example: 'laptop', maxLength: 200 })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name?: string;
}
