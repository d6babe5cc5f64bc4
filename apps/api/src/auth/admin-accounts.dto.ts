import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsInt,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
} from 'class-validator';

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
