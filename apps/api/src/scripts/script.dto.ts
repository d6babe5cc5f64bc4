import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsString,
  MaxLength,
  ArrayMaxSize,
} from 'class-validator';
import { LIMITS } from '@chronicle/adventure';
import { SCRIPT_LIMITS } from '@chronicle/scripting';

// Sizes of the sources are the decider's (UTF-8 bytes, 422 past SCRIPT_LIMITS); syntax is the
// sandbox's (422 with line and column). Here: shapes.

const SOURCE_DOC = "JavaScript, as in AI Dungeon's tab of the same name.";

export class ScriptSourcesDto {
  @ApiPropertyOptional({ description: `${SOURCE_DOC} Runs before each hook, in its environment.` })
  @IsOptional()
  @IsString()
  library?: string;

  @ApiPropertyOptional({ description: `${SOURCE_DOC} onInput.` })
  @IsOptional()
  @IsString()
  input?: string;

  @ApiPropertyOptional({ description: `${SOURCE_DOC} onModelContext.` })
  @IsOptional()
  @IsString()
  context?: string;

  @ApiPropertyOptional({ description: `${SOURCE_DOC} onOutput.` })
  @IsOptional()
  @IsString()
  output?: string;

  @ApiPropertyOptional({ default: true })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;
}

export class CreateScriptDto extends ScriptSourcesDto {
  @ApiProperty({ maxLength: SCRIPT_LIMITS.nameChars, example: 'Dice' })
  @IsString()
  @MaxLength(SCRIPT_LIMITS.nameChars)
  name!: string;
}

export class EditScriptDto extends ScriptSourcesDto {
  @ApiPropertyOptional({ maxLength: SCRIPT_LIMITS.nameChars })
  @IsOptional()
  @IsString()
  @MaxLength(SCRIPT_LIMITS.nameChars)
  name?: string;
}

export class ReorderScriptsDto {
  @ApiProperty({ type: [String], description: 'Every script id once, in the new run order.' })
  @IsArray()
  @ArrayMaxSize(SCRIPT_LIMITS.scriptsPerAdventure)
  @IsString({ each: true })
  @MaxLength(LIMITS.idChars, { each: true })
  ids!: string[];
}

export const TEST_HOOKS = ['input', 'context', 'output'] as const;

export class ScriptTestDto {
  @ApiProperty({ enum: TEST_HOOKS })
  @IsIn(TEST_HOOKS)
  hook!: (typeof TEST_HOOKS)[number];

  @ApiPropertyOptional({
    description:
      'The hook\'s text. Default: input "", context the current context view, output the last narration.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(SCRIPT_LIMITS.contextTextChars)
  text?: string;

  @ApiPropertyOptional({
    description: 'Run only this script (default: every enabled one, in order).',
  })
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.idChars)
  scriptId?: string;
}
