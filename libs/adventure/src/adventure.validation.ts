// Checks a command's values before anything is decided. The API validates at the edge too; these
// checks keep the log clean whoever calls `decide` (a worker, an import, a script).

import type { Canon } from '@chronicle/narrative';
import { InvalidCommandError } from './adventure.errors';
import type { AdventureSettings, Persona, StoryCard } from './adventure.events';
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
  if (LONE_SURROGATE.test(value))
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

export function checkCardFields(
  changes: Partial<Omit<StoryCard, 'id'>>,
): Partial<Omit<StoryCard, 'id'>> {
  const checked: Partial<Omit<StoryCard, 'id'>> = {};
  for (const [key, value] of Object.entries(changes)) {
    switch (key) {
      case 'name':
        checked.name = checkText('card.name', value, { max: MAX_CARD_NAME_CHARS, required: true });
        break;
      case 'keys':
      case 'entry':
      case 'notes':
        checked[key] = checkText(`card.${key}`, value, { max: LIMITS.proseChars });
        break;
      case 'type':
        checked.type = checkText('card.type', value, { max: 80 });
        break;
      default:
        invalid(`card.${key} is not a story card field; use name, keys, entry, type or notes`);
    }
  }
  return checked;
}

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
        invalid(
          `settings.${key} is not a setting; use one of ${Object.keys(DEFAULT_SETTINGS).join(', ')}`,
        );
    }
  }
  return checked;
}
