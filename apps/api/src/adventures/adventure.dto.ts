/* eslint-disable max-lines -- the adventure routes' request bodies: declarations of decorated fields, one class per body, read together as the API's schema (Swagger is built from them) */
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
  Min,
  registerDecorator,
  ValidateNested,
} from 'class-validator';
import { checkCardFields, checkId, InvalidCommandError, LIMITS } from '@chronicle/adventure';
import { SCRIPT_LIMITS } from '@chronicle/scripting';
import { CreateScriptDto } from '../scripts/script.dto';

// Request bodies as the HTTP contract names them. The shapes and lengths are checked here, so a
// bad request is refused with every problem named at once; the ranges of settings, the
// placeholders and the text rules (NUL, lone surrogates) are the decider's, so a worker or an
// import obeys the same rules as the API.

const tooLong = (max: number) => ({
  message: `$property is too long; keep it to ${max} characters`,
});

export const INPUT_TYPES = ['do', 'say', 'story', 'continue'] as const;

/** Each field is optional (the seed's personas often have a name alone); a missing one is empty. */
export class PersonaDto {
  @ApiPropertyOptional({ maxLength: LIMITS.personaNameChars, example: 'Mira' })
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.personaNameChars, tooLong(LIMITS.personaNameChars))
  name?: string;

  @ApiPropertyOptional({ maxLength: LIMITS.personaPronounsChars, example: 'she/her' })
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.personaPronounsChars, tooLong(LIMITS.personaPronounsChars))
  pronouns?: string;

  @ApiPropertyOptional({ maxLength: LIMITS.textChars })
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.textChars, tooLong(LIMITS.textChars))
  description?: string;
}

export class StatusChangeDto {
  @ApiProperty({ example: 'dead' })
  @IsString()
  from!: string;

  @ApiProperty({ example: 'alive' })
  @IsString()
  to!: string;
}

export class CanonDto {
  @ApiProperty({ type: [String], description: 'Rules the narrator must keep.' })
  @IsArray()
  @IsString({ each: true })
  @MaxLength(LIMITS.textChars, { each: true, ...tooLong(LIMITS.textChars) })
  rules!: string[];

  @ApiProperty({ type: [StatusChangeDto], description: 'Status changes the referee refuses.' })
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => StatusChangeDto)
  forbiddenStatusChanges!: StatusChangeDto[];
}

/** Every setting is optional: what is left out keeps the predecessor's default (or its value). */
export class SettingsDto {
  @ApiPropertyOptional({ description: 'Empty: the installation default model.' })
  @IsOptional()
  @IsString()
  model?: string;

  @ApiPropertyOptional({ enum: ['chat', 'completion'] })
  @IsOptional()
  @IsIn(['chat', 'completion'], { message: 'settings.apiMode must be "chat" or "completion"' })
  apiMode?: 'chat' | 'completion';

  @ApiPropertyOptional({ example: 0.8 })
  @IsOptional()
  @IsNumber()
  temperature?: number;

  @ApiPropertyOptional({ example: 800 })
  @IsOptional()
  @IsInt()
  maxOutputTokens?: number;

  @ApiPropertyOptional({ example: 16384 })
  @IsOptional()
  @IsInt()
  contextTokenBudget?: number;

  @ApiPropertyOptional({ description: '0 = not sent, -1 = off, >0 = added to the output cap.' })
  @IsOptional()
  @IsInt()
  reasoningMaxTokens?: number;

  @ApiPropertyOptional({ enum: ['cl100k_base', 'o200k_base'] })
  @IsOptional()
  @IsIn(['cl100k_base', 'o200k_base'], {
    message: 'settings.encoding must be "cl100k_base" or "o200k_base"',
  })
  encoding?: 'cl100k_base' | 'o200k_base';

  @ApiPropertyOptional({
    enum: ['stable', 'sliding'],
    description:
      "How the history window moves: `stable` (default) by whole blocks, so the provider's prompt cache keeps serving the history; `sliding`, the seed's window, one action at a time.",
  })
  @IsOptional()
  @IsIn(['stable', 'sliding'], { message: 'settings.historyMode must be "stable" or "sliding"' })
  historyMode?: 'stable' | 'sliding';

  @ApiPropertyOptional()
  @IsOptional()
  @IsBoolean()
  autoSummarize?: boolean;

  @ApiPropertyOptional()
  @IsOptional()
  @IsBoolean()
  memoryBankEnabled?: boolean;

  @ApiPropertyOptional()
  @IsOptional()
  @IsInt()
  memoryTopK?: number;

  @ApiPropertyOptional({
    description:
      'Accepted for older clients and kept in the settings, but nothing is evicted any more: the bank keeps every memory of the path.',
  })
  @IsOptional()
  @IsInt()
  memoryCapacity?: number;

  @ApiPropertyOptional({
    enum: ['full', 'append-only'],
    description:
      "What a Context script may do to the prompt: `full` (default) applies an append or a rewrite; `append-only` (AI Dungeon's Optimized Context) keeps the provider's prompt cache: a rewrite is discarded with a notice, and an append needs `// @cache-compatible` on the hook's first line.",
  })
  @IsOptional()
  @IsIn(['full', 'append-only'], {
    message: 'settings.contextHookMode must be "full" or "append-only"',
  })
  contextHookMode?: 'full' | 'append-only';

  @ApiPropertyOptional({
    example: 2000,
    description: "One script hook's time limit, capped by the operator's SCRIPT_HOOK_TIMEOUT_MS.",
  })
  @IsOptional()
  @IsInt()
  scriptHookTimeoutMs?: number;

  @ApiPropertyOptional({
    example: 5000,
    description:
      "All scripts and hooks of one turn together, capped by the operator's SCRIPT_TURN_BUDGET_MS.",
  })
  @IsOptional()
  @IsInt()
  scriptTurnBudgetMs?: number;

  @ApiPropertyOptional({
    example: 64,
    description: "A script isolate's heap, capped by the operator's SCRIPT_MEMORY_LIMIT_MB.",
  })
  @IsOptional()
  @IsInt()
  scriptMemoryLimitMb?: number;

  @ApiPropertyOptional({
    enum: ['free', 'round', 'hot-seat'],
    description:
      "How a room's players take turns (default `free`): `free` anyone acts, an action sent during a turn is held for the next; `round` every active player submits or passes, then one narration answers all; `hot-seat` players act in turn. A one-player adventure plays the same under each.",
  })
  @IsOptional()
  @IsIn(['free', 'round', 'hot-seat'], {
    message: 'settings.turnPolicy must be "free", "round" or "hot-seat"',
  })
  turnPolicy?: 'free' | 'round' | 'hot-seat';

  @ApiPropertyOptional({
    example: 300,
    minimum: 10,
    maximum: 86400,
    description:
      'A player silent this long in a round or on the hot seat is marked away (default 300).',
  })
  @IsOptional()
  @IsInt()
  idleTimeoutSeconds?: number;

  @ApiPropertyOptional({
    example: 0,
    minimum: 0,
    maximum: 86400,
    description: 'A round closes by itself after this long; 0 (default): no timer.',
  })
  @IsOptional()
  @IsInt()
  roundTimeoutSeconds?: number;

  @ApiPropertyOptional({
    example: 0,
    minimum: 0,
    description:
      "Each member's daily model tokens charged to the host; 0 (default): no cap of its own (the host's budget still applies).",
  })
  @IsOptional()
  @IsInt()
  perPlayerDailyTokens?: number;
}

class StoryCardFieldsDto {
  @ApiPropertyOptional({ description: 'Comma-separated trigger keys.', example: 'Mira, the smith' })
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.proseChars, tooLong(LIMITS.proseChars))
  keys?: string;

  @ApiPropertyOptional({ maxLength: LIMITS.proseChars })
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.proseChars, tooLong(LIMITS.proseChars))
  entry?: string;

  @ApiPropertyOptional({ example: 'character' })
  @IsOptional()
  @IsString()
  type?: string;

  @ApiPropertyOptional({ description: 'Never sent to the model.' })
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.proseChars, tooLong(LIMITS.proseChars))
  notes?: string;

  // The lore fields (libs/context's StoryCard says what each does). Optional; in an edit, null
  // puts the default back. Their ranges and nested shapes are the decider's to check.

  @ApiPropertyOptional({
    enum: ['plain', 'aid', 'lines'],
    description:
      'How `keys` splits: plain (commas, trimmed; default), aid (commas, spaces kept), lines (one key per line). A `/pattern/flags` key is a regex.',
  })
  @IsOptional()
  @IsIn(['plain', 'aid', 'lines'])
  keySyntax?: 'plain' | 'aid' | 'lines' | null;

  @ApiPropertyOptional({ description: 'false: never fires. Default true.' })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean | null;

  @ApiPropertyOptional({
    enum: ['keys', 'always', 'inert'],
    description: 'keys (default), always (every turn), inert (never sent).',
  })
  @IsOptional()
  @IsIn(['keys', 'always', 'inert'])
  activation?: 'keys' | 'always' | 'inert' | null;

  @ApiPropertyOptional({
    description: 'Default 100: higher is budgeted first and rendered closest to the story.',
  })
  @IsOptional()
  @IsInt()
  priority?: number | null;

  @ApiPropertyOptional()
  @IsOptional()
  @IsBoolean()
  caseSensitive?: boolean | null;

  @ApiPropertyOptional({ description: 'Single-word keys match whole words only.' })
  @IsOptional()
  @IsBoolean()
  wholeWords?: boolean | null;

  @ApiPropertyOptional({
    description: '{actions?, chars?}: the end of the story the keys are looked for in.',
    example: { actions: 2 },
  })
  @IsOptional()
  @IsObject()
  scan?: { actions?: number; chars?: number } | null;

  @ApiPropertyOptional({
    description:
      'Secondary keys: [{mode: anyOf|allOf|noneOf|notAllOf, keys: [...]}], all must hold.',
    example: [{ mode: 'anyOf', keys: ['ship'] }],
  })
  @IsOptional()
  @IsArray()
  conditions?: { mode: 'anyOf' | 'allOf' | 'noneOf' | 'notAllOf'; keys: string[] }[] | null;

  @ApiPropertyOptional({
    description:
      "{kind: lore|depth|authorsNote, depth?, role?: system|user|assistant, edge?: top|bottom}: depth goes into the history as a message of its role (chat); authorsNote beside the author's note.",
    example: { kind: 'depth', depth: 2, role: 'system' },
  })
  @IsOptional()
  @IsObject()
  placement?: {
    kind: 'lore' | 'depth' | 'authorsNote';
    depth?: number;
    role?: 'system' | 'user' | 'assistant';
    edge?: 'top' | 'bottom';
  } | null;

  @ApiPropertyOptional({
    description: '{feedsOthers, triggeredByOthers, delayLevel?}: fired entries scanned for keys.',
  })
  @IsOptional()
  @IsObject()
  recursion?: { feedsOthers: boolean; triggeredByOthers: boolean; delayLevel?: number } | null;

  @ApiPropertyOptional({
    description: 'Percent chance a fired card is kept (seeded by the turn). Default 100.',
  })
  @IsOptional()
  @IsNumber()
  probability?: number | null;

  @ApiPropertyOptional({
    description: '{names, weight?, override?}: one winner per inclusion group.',
    example: { names: ['weather'], weight: 100 },
  })
  @IsOptional()
  @IsObject()
  group?: { names: string[]; weight?: number; override?: boolean } | null;

  @ApiPropertyOptional({
    description:
      '{delay?, sticky?, cooldown?}, in story actions: not before the story has `delay` actions; once fired, stays `sticky` actions, then cannot fire for `cooldown` more.',
    example: { delay: 10, sticky: 4, cooldown: 6 },
  })
  @IsOptional()
  @IsObject()
  timing?: { delay?: number; sticky?: number; cooldown?: number } | null;

  @ApiPropertyOptional({
    description:
      "{maxTokens?, reservedTokens?, trim?: none|end|start, trimUnit?: newline|sentence|token}: the card's own share of the lore budget (over 1: tokens; (0, 1]: a share of the context) and how it is cut to fit (NovelAI's).",
    example: { maxTokens: 200, trim: 'end', trimUnit: 'sentence' },
  })
  @IsOptional()
  @IsObject()
  budget?: {
    maxTokens?: number;
    reservedTokens?: number;
    trim?: 'none' | 'end' | 'start';
    trimUnit?: 'newline' | 'sentence' | 'token';
  } | null;

  @ApiPropertyOptional({ description: 'What {{char}} renders as in this card.' })
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.cardNameChars, tooLong(LIMITS.cardNameChars))
  charName?: string | null;
}

/** The most card problems one refusal names: a 5,000-card book with one mistake repeated would list them all. */
const MAX_CARD_PROBLEMS = 20;

/**
 * A scenario's cards, each checked by the decider's own card rules (`checkCardFields`), not as
 * one StoryCardDto instance per card: class-transformer and class-validator spent ~330 ms on a
 * 5,000-card book (1–4 s on a loaded machine) building and walking those instances, and the
 * plain checks take a few ms (bench/lore.bench.ts). The card stays a plain object; unknown
 * fields are still refused by name.
 */
function IsStoryCardList(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isStoryCardList',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => storyCardListProblems(value).length === 0,
        defaultMessage: (args) => storyCardListProblems(args?.value).join('; '),
      },
    });
}

/** What is wrong with each card of `value`, as `storyCards[i].field …` (empty when nothing is). */
export function storyCardListProblems(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  const problems: string[] = [];
  for (let i = 0; i < value.length && problems.length < MAX_CARD_PROBLEMS; i++) {
    const problem = storyCardProblem(value[i]);
    if (problem) problems.push(`storyCards[${i}]${problem}`);
  }
  return problems;
}

function storyCardProblem(card: unknown): string | null {
  if (typeof card !== 'object' || card === null || Array.isArray(card)) {
    return ' must be an object';
  }
  const { id, ...fields } = card as Record<string, unknown>;
  if (fields.name === undefined) return '.name is missing';
  try {
    if (id !== undefined) checkId('card.id', id);
    // null on create is left to the decider, which names it (null only resets a field in an edit).
    checkCardFields(fields, { edit: true });
    return null;
  } catch (error) {
    if (!(error instanceof InvalidCommandError)) throw error;
    return error.message.replace(/^card\./, '.');
  }
}

export class StoryCardDto extends StoryCardFieldsDto {
  @ApiPropertyOptional({ description: 'Chosen by the server when left out.' })
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.idChars, tooLong(LIMITS.idChars))
  id?: string;

  @ApiProperty({ maxLength: LIMITS.cardNameChars, example: 'Mira' })
  @IsString()
  @MaxLength(LIMITS.cardNameChars, tooLong(LIMITS.cardNameChars))
  name!: string;
}

export class EditStoryCardDto extends StoryCardFieldsDto {
  @ApiPropertyOptional({ maxLength: LIMITS.cardNameChars })
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.cardNameChars, tooLong(LIMITS.cardNameChars))
  name?: string;
}

class AdventureFieldsDto {
  @ApiPropertyOptional({ maxLength: LIMITS.proseChars, description: 'The plot essentials.' })
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.proseChars, tooLong(LIMITS.proseChars))
  plotEssentials?: string;

  @ApiPropertyOptional({ maxLength: LIMITS.proseChars })
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.proseChars, tooLong(LIMITS.proseChars))
  authorsNote?: string;

  @ApiPropertyOptional({ maxLength: LIMITS.proseChars })
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.proseChars, tooLong(LIMITS.proseChars))
  aiInstructions?: string;

  @ApiPropertyOptional({ type: PersonaDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => PersonaDto)
  persona?: PersonaDto;

  @ApiPropertyOptional({ type: CanonDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => CanonDto)
  canon?: CanonDto;

  @ApiPropertyOptional({ type: SettingsDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => SettingsDto)
  settings?: SettingsDto;
}

export class CreateAdventureDto extends AdventureFieldsDto {
  @ApiProperty({ maxLength: LIMITS.titleChars, example: 'The Drowned Bell' })
  @IsString()
  @MaxLength(LIMITS.titleChars, tooLong(LIMITS.titleChars))
  title!: string;

  @ApiProperty({
    maxLength: LIMITS.proseChars,
    description: 'The opening text; `${Name}` placeholders are answered by `placeholders`.',
    example: 'You are ${Name}, the last bell-ringer of Hollowmere.',
  })
  @IsString()
  @MaxLength(LIMITS.proseChars, tooLong(LIMITS.proseChars))
  opening!: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'One answer per `${Name}` in the opening.',
    example: { Name: 'Mira' },
  })
  @IsOptional()
  @IsObject()
  placeholders?: Record<string, string>;

  @ApiPropertyOptional({ type: [StoryCardDto] })
  @IsOptional()
  @IsArray()
  @IsStoryCardList()
  storyCards?: StoryCardDto[];

  @ApiPropertyOptional({
    type: [CreateScriptDto],
    description: "The scenario's scripts, in run order (each compiled before anything is written).",
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(SCRIPT_LIMITS.scriptsPerAdventure)
  @ValidateNested({ each: true })
  @Type(() => CreateScriptDto)
  scripts?: CreateScriptDto[];
}

export class EditAdventureDto extends AdventureFieldsDto {
  @ApiPropertyOptional({ maxLength: LIMITS.titleChars })
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.titleChars, tooLong(LIMITS.titleChars))
  title?: string;
}

/** What a player does: the action route's body, and the one a context dry run supposes. */
export class PlayerInputDto {
  @ApiProperty({ enum: INPUT_TYPES, example: 'do' })
  @IsIn(INPUT_TYPES, { message: 'type must be one of do, say, story or continue' })
  type!: (typeof INPUT_TYPES)[number];

  @ApiPropertyOptional({
    maxLength: LIMITS.actionChars,
    description: 'What the player does, says or writes; ignored for continue.',
    example: 'ring the bell',
  })
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.actionChars, tooLong(LIMITS.actionChars))
  text?: string;
}

export class SubmitActionDto extends PlayerInputDto {
  @ApiPropertyOptional({
    format: 'uuid',
    description:
      'The client action id: the idempotency key. A resend with the same id answers the original turn.',
  })
  @IsOptional()
  @IsUUID('all', { message: 'id must be a uuid (the client action id)' })
  id?: string;
}

export class RetryDto {
  @ApiPropertyOptional({
    format: 'uuid',
    description: 'The turn id; a resend answers the same turn.',
  })
  @IsOptional()
  @IsUUID('all', { message: 'id must be a uuid (the client turn id)' })
  id?: string;
}

export class EditActionDto {
  @ApiProperty({ maxLength: LIMITS.proseChars })
  @IsString()
  @MaxLength(LIMITS.proseChars, tooLong(LIMITS.proseChars))
  text!: string;
}

export class MoveHeadDto {
  @ApiProperty({
    description: 'The action to stand on: a take to select or a branch to switch to.',
  })
  @IsString()
  @MaxLength(LIMITS.idChars, tooLong(LIMITS.idChars))
  actionId!: string;
}

export class RetconDto {
  @ApiProperty({ description: 'The narration whose accepted event is withdrawn.' })
  @IsString()
  @MaxLength(LIMITS.idChars, tooLong(LIMITS.idChars))
  actionId!: string;

  @ApiProperty({ description: "Index into the narration's accepted events.", minimum: 0 })
  @IsInt()
  @Min(0)
  index!: number;
}

export const CORRECTION_OPS = [
  'rename',
  'setStatus',
  'move',
  'setHolder',
  'setDesc',
  'addEntity',
  'removeEntity',
  'addFact',
  'removeFact',
] as const;

/**
 * One correction. The fields an op needs are checked by libs/narrative, whose messages name
 * the missing or unknown id; here only the shapes are.
 */
export class CorrectionDto {
  @ApiProperty({ enum: CORRECTION_OPS })
  @IsIn(CORRECTION_OPS, { message: `op must be one of ${CORRECTION_OPS.join(', ')}` })
  op!: (typeof CORRECTION_OPS)[number];

  @ApiPropertyOptional({ description: 'Entity id (a lower-case slug).' })
  @IsOptional()
  @IsString()
  id?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  name?: string;

  @ApiPropertyOptional({ nullable: true, type: String })
  @IsOptional()
  @IsString()
  status?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, description: 'A place id.' })
  @IsOptional()
  @IsString()
  to?: string | null;

  @ApiPropertyOptional({ description: 'Item id.' })
  @IsOptional()
  @IsString()
  item?: string;

  @ApiPropertyOptional({ nullable: true, type: String, description: 'Entity id or "player".' })
  @IsOptional()
  @IsString()
  holder?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String })
  @IsOptional()
  @IsString()
  desc?: string | null;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: '{id, name, kind, status?, at?, desc?}',
  })
  @IsOptional()
  @IsObject()
  entity?: Record<string, unknown>;

  @ApiPropertyOptional({ description: 'A fact.' })
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.textChars, tooLong(LIMITS.textChars))
  text?: string;

  @ApiPropertyOptional({ type: [String], description: 'Entity ids the fact is about.' })
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  about?: string[];
}

export class CorrectNarrativeStateDto {
  @ApiProperty({ type: [CorrectionDto], description: 'Applied in order, all or none.' })
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => CorrectionDto)
  corrections!: CorrectionDto[];

  @ApiPropertyOptional({ description: 'The action on the path to anchor on; the head by default.' })
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.idChars, tooLong(LIMITS.idChars))
  anchorActionId?: string;
}
