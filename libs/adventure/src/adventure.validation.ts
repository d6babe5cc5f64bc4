/* eslint-disable max-lines -- every field check of the API in one file, so a limit is found where the others are; the room settings have their own file (room.settings.ts) */
// Checks a command's values before anything is decided. The API validates at the edge too; these
// checks keep the log clean whoever calls `decide` (a worker, an import, a script).

import type { Canon } from '@chronicle/narrative';
import { InvalidCommandError } from './adventure.errors';
import type { AdventureSettings, CardOrigin, LoreFormat, Persona } from './adventure.events';
import { checkRoomSetting, isRoomSetting } from './room.settings';
import { LIMITS } from './adventure.limits';
import { DEFAULT_SETTINGS } from './adventure.state';

export const MAX_TEXT_CHARS = LIMITS.textChars;
export const MAX_TITLE_CHARS = LIMITS.titleChars;
export const MAX_PERSONA_NAME_CHARS = LIMITS.personaNameChars;
export const MAX_PERSONA_PRONOUNS_CHARS = LIMITS.personaPronounsChars;
export const MAX_CARD_NAME_CHARS = LIMITS.cardNameChars;
export const MAX_ID_CHARS = LIMITS.idChars;

/** Text a JSON client sends as a `\uD800` escape with no pair: not valid unicode. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/**
 * Any surrogate at all: a plain class V8 scans fast. The lookbehind above is tried at every
 * position of the text and was most of a 5,000-card create's decide; it runs only on text with
 * a surrogate in it (emoji, rare scripts).
 */
const ANY_SURROGATE = /[\uD800-\uDFFF]/;

function invalid(message: string): never {
  throw new InvalidCommandError(message);
}

export function checkText(
  field: string,
  value: unknown,
  { max = MAX_TEXT_CHARS as number, required = false } = {},
): string {
  if (typeof value !== 'string') invalid(`${field} must be a string`);
  if (required && value.trim() === '') invalid(`${field} is empty; write something`);
  if (value.length > max) invalid(`${field} is ${value.length} characters; keep it to ${max}`);
  if (value.includes('\u0000')) invalid(`${field} contains a NUL character; remove it`);
  if (ANY_SURROGATE.test(value) && LONE_SURROGATE.test(value))
    invalid(`${field} is not valid unicode (a lone surrogate); fix it`);
  return value;
}

export function checkId(field: string, value: unknown): string {
  return checkText(field, value, { max: MAX_ID_CHARS, required: true });
}

/** Each field may be left out (a persona with a name alone is common): a missing one is empty. */
export function checkPersona(value: unknown): Persona {
  const persona = value as Partial<Persona>;
  if (typeof persona !== 'object' || persona === null) invalid('persona must be an object');
  return {
    name: checkText('persona.name', persona.name ?? '', { max: MAX_PERSONA_NAME_CHARS }),
    pronouns: checkText('persona.pronouns', persona.pronouns ?? '', {
      max: MAX_PERSONA_PRONOUNS_CHARS,
    }),
    description: checkText('persona.description', persona.description ?? ''),
  };
}

export function checkCanon(value: unknown): Canon {
  const canon = value as Canon;
  if (typeof canon !== 'object' || canon === null) invalid('canon must be an object');
  if (!Array.isArray(canon.rules)) invalid('canon.rules must be a list of strings');
  if (!Array.isArray(canon.forbiddenStatusChanges)) {
    invalid('canon.forbiddenStatusChanges must be a list of {from, to}');
  }
  return {
    rules: canon.rules.map((rule, index) =>
      checkText(`canon.rules[${index}]`, rule, { required: true }),
    ),
    forbiddenStatusChanges: canon.forbiddenStatusChanges.map((change, index) => ({
      from: checkText(`canon.forbiddenStatusChanges[${index}].from`, change?.from, {
        max: 80,
        required: true,
      }),
      to: checkText(`canon.forbiddenStatusChanges[${index}].to`, change?.to, {
        max: 80,
        required: true,
      }),
    })),
  };
}

/** The card fields an edit may name (`origin` is the import's alone). */
export const CARD_FIELDS = [
  'name',
  'keys',
  'entry',
  'type',
  'notes',
  'keySyntax',
  'enabled',
  'activation',
  'priority',
  'caseSensitive',
  'wholeWords',
  'scan',
  'conditions',
  'placement',
  'recursion',
  'charName',
  'probability',
  'group',
  'timing',
  'budget',
] as const;

/** Optional card fields: null in an edit puts the default back. */
const NULLABLE_CARD_FIELDS = new Set<string>(CARD_FIELDS.slice(5));

/** Conditions one card may hold, and keys one condition may list. */
export const MAX_CARD_CONDITIONS = 8;
export const MAX_CONDITION_KEYS = 200;

function oneOf<T extends string>(field: string, value: unknown, options: readonly T[]): T {
  if (typeof value !== 'string' || !options.includes(value as T)) {
    invalid(`${field} must be one of ${options.map((o) => `"${o}"`).join(', ')}`);
  }
  return value as T;
}

function flag(field: string, value: unknown): boolean {
  if (typeof value !== 'boolean') invalid(`${field} must be true or false`);
  return value;
}

function integer(field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    invalid(`${field} must be an integer between ${min} and ${max}`);
  }
  return value;
}

function record(
  field: string,
  value: unknown,
  allowed: readonly string[],
): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    invalid(`${field} must be an object`);
  }
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) {
      invalid(`${field}.${key} is not a field of ${field}; use ${allowed.join(', ')}`);
    }
  }
  return value as Record<string, unknown>;
}

/** One card field checked (see checkCardFields). */
// eslint-disable-next-line max-lines-per-function -- one switch over every card field (CARD_FIELDS), each case its own check; the cases are the card's field catalogue
export function checkCardField(key: string, value: unknown): unknown {
  const field = `card.${key}`;
  switch (key) {
    case 'name':
      return checkText(field, value, { max: MAX_CARD_NAME_CHARS, required: true });
    case 'keys':
    case 'entry':
    case 'notes':
      return checkText(field, value, { max: LIMITS.proseChars });
    case 'type':
      return checkText(field, value, { max: 80 });
    case 'charName':
      return checkText(field, value, { max: MAX_CARD_NAME_CHARS });
    case 'keySyntax':
      return oneOf(field, value, ['plain', 'aid', 'lines']);
    case 'activation':
      return oneOf(field, value, ['keys', 'always', 'inert']);
    case 'enabled':
    case 'caseSensitive':
    case 'wholeWords':
      return flag(field, value);
    case 'priority':
      return integer(field, value, -1_000_000, 1_000_000);
    case 'scan': {
      const scan = record(field, value, ['actions', 'chars']);
      return {
        ...(scan.actions !== undefined && {
          actions: integer(`${field}.actions`, scan.actions, 0, 10_000),
        }),
        ...(scan.chars !== undefined && {
          chars: integer(`${field}.chars`, scan.chars, 0, 10_000_000),
        }),
      };
    }
    case 'placement': {
      const placement = record(field, value, ['kind', 'depth', 'role', 'edge']);
      return {
        kind: oneOf(`${field}.kind`, placement.kind, ['lore', 'depth', 'authorsNote']),
        ...(placement.edge !== undefined && {
          edge: oneOf(`${field}.edge`, placement.edge, ['top', 'bottom']),
        }),
        ...(placement.depth !== undefined && {
          depth: integer(`${field}.depth`, placement.depth, 0, 10_000),
        }),
        ...(placement.role !== undefined && {
          role: oneOf(`${field}.role`, placement.role, ['system', 'user', 'assistant']),
        }),
      };
    }
    case 'recursion': {
      const recursion = record(field, value, ['feedsOthers', 'triggeredByOthers', 'delayLevel']);
      return {
        feedsOthers: flag(`${field}.feedsOthers`, recursion.feedsOthers),
        triggeredByOthers: flag(`${field}.triggeredByOthers`, recursion.triggeredByOthers),
        ...(recursion.delayLevel !== undefined && {
          delayLevel: integer(`${field}.delayLevel`, recursion.delayLevel, 0, 100),
        }),
      };
    }
    case 'probability':
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 100) {
        invalid(`${field} must be a number from 0 to 100 (percent)`);
      }
      return value;
    case 'group': {
      const group = record(field, value, ['names', 'weight', 'override']);
      if (!Array.isArray(group.names) || group.names.length === 0 || group.names.length > 20) {
        invalid(`${field}.names must be a list of 1 to 20 group names`);
      }
      return {
        names: group.names.map((name, i) =>
          checkText(`${field}.names[${i}]`, name, { max: MAX_CARD_NAME_CHARS, required: true }),
        ),
        ...(group.weight !== undefined && {
          weight: integer(`${field}.weight`, group.weight, 0, 1_000_000),
        }),
        ...(group.override !== undefined && {
          override: flag(`${field}.override`, group.override),
        }),
      };
    }
    case 'timing': {
      const timing = record(field, value, ['delay', 'sticky', 'cooldown']);
      const checked: Record<string, number> = {};
      for (const key of ['delay', 'sticky', 'cooldown'] as const) {
        if (timing[key] !== undefined) {
          checked[key] = integer(`${field}.${key}`, timing[key], 0, 1_000_000);
        }
      }
      return checked;
    }
    case 'budget': {
      const budget = record(field, value, ['maxTokens', 'reservedTokens', 'trim', 'trimUnit']);
      const tokens = (key: 'maxTokens' | 'reservedTokens'): number => {
        const amount = budget[key];
        if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0) {
          invalid(
            `${field}.${key} must be a number of tokens, or a share of the context in (0, 1]`,
          );
        }
        if (amount > 1 && !Number.isInteger(amount)) {
          invalid(`${field}.${key} must be a whole number of tokens when over 1`);
        }
        return Math.min(amount, 1_000_000);
      };
      return {
        ...(budget.maxTokens !== undefined && { maxTokens: tokens('maxTokens') }),
        ...(budget.reservedTokens !== undefined && { reservedTokens: tokens('reservedTokens') }),
        ...(budget.trim !== undefined && {
          trim: oneOf(`${field}.trim`, budget.trim, ['none', 'end', 'start']),
        }),
        ...(budget.trimUnit !== undefined && {
          trimUnit: oneOf(`${field}.trimUnit`, budget.trimUnit, ['newline', 'sentence', 'token']),
        }),
      };
    }
    case 'conditions': {
      if (!Array.isArray(value)) invalid(`${field} must be a list of {mode, keys}`);
      if (value.length > MAX_CARD_CONDITIONS) {
        invalid(`${field} holds ${value.length} conditions; keep it to ${MAX_CARD_CONDITIONS}`);
      }
      return value.map((item, i) => {
        const condition = record(`${field}[${i}]`, item, ['mode', 'keys']);
        if (!Array.isArray(condition.keys) || condition.keys.length > MAX_CONDITION_KEYS) {
          invalid(`${field}[${i}].keys must be a list of at most ${MAX_CONDITION_KEYS} keys`);
        }
        return {
          mode: oneOf(`${field}[${i}].mode`, condition.mode, [
            'anyOf',
            'allOf',
            'noneOf',
            'notAllOf',
          ]),
          keys: condition.keys.map((k, j) =>
            checkText(`${field}[${i}].keys[${j}]`, k, { max: 1_000 }),
          ),
        };
      });
    }
    default:
      return invalid(`card.${key} is not a story card field; use ${CARD_FIELDS.join(', ')}`);
  }
}

/**
 * A card's fields checked one by one; unknown fields are refused by name. With `edit`, null
 * on an optional field is kept (it removes the field).
 */
export function checkCardFields(
  changes: Record<string, unknown>,
  { edit = false } = {},
): Record<string, unknown> {
  const checked: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(changes)) {
    if (value === null && edit && NULLABLE_CARD_FIELDS.has(key)) {
      checked[key] = null;
      continue;
    }
    checked[key] = checkCardField(key, value);
  }
  return checked;
}

/** An imported card's origin: a known format, a book id, and a raw entry of bounded size. */
export function checkCardOrigin(value: unknown): CardOrigin {
  const origin = record('card.origin', value, ['format', 'bookId', 'raw']);
  const raw = origin.raw;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    invalid('card.origin.raw must be an object');
  }
  const size = JSON.stringify(raw).length;
  if (size > LIMITS.loreRawChars) {
    invalid(`card.origin.raw is ${size} characters of JSON; keep it to ${LIMITS.loreRawChars}`);
  }
  return {
    format: oneOf('card.origin.format', origin.format, LORE_FORMATS),
    bookId: checkId('card.origin.bookId', origin.bookId),
    raw: raw as Record<string, unknown>,
  };
}

export const LORE_FORMATS = [
  'aid',
  'sillytavern',
  'ccv2',
  'ccv3',
  'novelai',
  'kobold',
  'agnai',
  'risu',
] as const satisfies readonly LoreFormat[];

function checkNumber(
  key: string,
  value: unknown,
  min: number,
  max: number,
  integer: boolean,
): number {
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    (integer && !Number.isInteger(value))
  ) {
    invalid(`settings.${key} must be ${integer ? 'an integer' : 'a number'}`);
  }
  if (value < min || value > max) invalid(`settings.${key} must be between ${min} and ${max}`);
  return value;
}

function checkBoolean(key: string, value: unknown): boolean {
  if (typeof value !== 'boolean') invalid(`settings.${key} must be true or false`);
  return value;
}

/**
 * The most an adventure may ask for its scripts. What it gets is also capped by the operator's
 * limits at run time, so these only bound what a setting may say.
 */
const SCRIPT_SETTING_MAX = Object.freeze({ hookMs: 60_000, turnMs: 300_000, memoryMb: 1024 });

/** The given settings checked one by one; unknown keys are refused by name. */
export function checkSettings(settings: Record<string, unknown>): Partial<AdventureSettings> {
  const checked: Partial<AdventureSettings> = {};
  for (const [key, value] of Object.entries(settings)) {
    switch (key) {
      case 'model':
        checked.model = checkText('settings.model', value, { max: 200 });
        break;
      case 'apiMode':
        if (value !== 'chat' && value !== 'completion') {
          invalid('settings.apiMode must be "chat" or "completion"');
        }
        checked.apiMode = value;
        break;
      case 'encoding':
        if (value !== 'cl100k_base' && value !== 'o200k_base') {
          invalid('settings.encoding must be "cl100k_base" or "o200k_base"');
        }
        checked.encoding = value;
        break;
      case 'historyMode':
        if (value !== 'stable' && value !== 'sliding') {
          invalid('settings.historyMode must be "stable" or "sliding"');
        }
        checked.historyMode = value;
        break;
      case 'contextHookMode':
        if (value !== 'full' && value !== 'append-only') {
          invalid('settings.contextHookMode must be "full" or "append-only"');
        }
        checked.contextHookMode = value;
        break;
      case 'scriptHookTimeoutMs':
        checked.scriptHookTimeoutMs = checkNumber(key, value, 10, SCRIPT_SETTING_MAX.hookMs, true);
        break;
      case 'scriptTurnBudgetMs':
        checked.scriptTurnBudgetMs = checkNumber(key, value, 10, SCRIPT_SETTING_MAX.turnMs, true);
        break;
      case 'scriptMemoryLimitMb':
        checked.scriptMemoryLimitMb = checkNumber(key, value, 8, SCRIPT_SETTING_MAX.memoryMb, true);
        break;
      case 'temperature':
        checked.temperature = checkNumber(key, value, 0, 5, false);
        break;
      case 'maxOutputTokens':
        checked.maxOutputTokens = checkNumber(key, value, 1, 100_000, true);
        break;
      case 'contextTokenBudget':
        checked.contextTokenBudget = checkNumber(key, value, 256, 200_000, true);
        break;
      case 'reasoningMaxTokens':
        checked.reasoningMaxTokens = checkNumber(key, value, -1, 100_000, true);
        break;
      case 'memoryTopK':
        checked.memoryTopK = checkNumber(key, value, 1, 50, true);
        break;
      case 'memoryCapacity':
        checked.memoryCapacity = checkNumber(key, value, 1, 1000, true);
        break;
      case 'autoSummarize':
      case 'memoryBankEnabled':
        checked[key] = checkBoolean(key, value);
        break;
      default:
        if (!isRoomSetting(key)) {
          invalid(
            `settings.${key} is not a setting; use one of ${Object.keys(DEFAULT_SETTINGS).join(', ')}`,
          );
        }
        Object.assign(checked, checkRoomSetting(key, value));
    }
  }
  return checked;
}
