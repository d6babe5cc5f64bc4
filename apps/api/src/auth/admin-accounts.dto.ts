import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';

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

export class CreateApiKeyDto {
  @ApiPropertyOptional({ example: 'laptop', maxLength: 200 })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name?: string;
}
