// Shape checks shared by the parser and the referee: is this value a well-formed event? The
// referee re-runs them so that it is safe on any input, not only on the parser's output.
//
// Normalisation is limited to what cannot change meaning: ids and kinds are trimmed and
// lower-cased (a slug has no case), statuses are lower-cased (the spec's vocabulary is
// lower-case free text), whitespace runs in free text collapse to one space (a newline in a name
// would break the rendered state section), and `null` optional fields count as absent.

import {
  MAX_ABOUT_IDS,
  MAX_DESC_CHARS,
  MAX_FACT_CHARS,
  MAX_ID_CHARS,
  MAX_NAME_CHARS,
  MAX_REJECTION_LINE_CHARS,
  MAX_STATUS_CHARS,
} from './narrative.limits';
import type { EntityKind, Rejection, StateEvent } from './narrative.types';

export const EVENT_TYPES = ['enter', 'status', 'move', 'gain', 'lose', 'fact'] as const;
export const ENTITY_KINDS: readonly EntityKind[] = [
  'character',
  'place',
  'item',
  'faction',
  'other',
];

const SLUG = /^[a-z0-9]+(?:[-_][a-z0-9]+)*$/;

export type ShapeCheck = { ok: true; event: StateEvent } | { ok: false; rejection: Rejection };

/** Caps a raw line for storage in a rejection. */
export function clipLine(line: string): string {
  return line.length <= MAX_REJECTION_LINE_CHARS
    ? line
    : `${line.slice(0, MAX_REJECTION_LINE_CHARS - 1)}…`;
}

export function rejection(line: string, reason: string, fix: string): Rejection {
  return { line: clipLine(line), reason, fix };
}

/** A slug suggestion for a fix message ("Old Mill" → "old-mill"). */
export function slugify(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_ID_CHARS);
}

export function isSlug(value: string): boolean {
  return value.length <= MAX_ID_CHARS && SLUG.test(value);
}

/** "a character", "an item": kinds as they read in a message. */
export function aKind(kind: string): string {
  return /^[aeiou]/.test(kind) ? `an ${kind}` : `a ${kind}`;
}

export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * Thrown inside the field checks and caught in `checkEventShape`. Not an `Error`: no stack trace
 * is captured, which keeps rejecting a bad line cheap (a looping model sends many).
 */
class ShapeError {
  constructor(
    readonly reason: string,
    readonly fix: string,
  ) {}
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function present(obj: Record<string, unknown>, field: string): boolean {
  return obj[field] !== undefined && obj[field] !== null;
}

function idField(obj: Record<string, unknown>, field: string): string {
  const value = obj[field];
  if (typeof value !== 'string' || value.trim() === '') {
    throw new ShapeError(
      `"${field}" is missing or not a string`,
      `Give "${field}" as an id string, a lower-case slug like "mira" or "old-mill".`,
    );
  }
  const id = value.trim().toLowerCase();
  if (!isSlug(id)) {
    const suggestion = slugify(value) || 'a-short-slug';
    throw new ShapeError(
      `"${field}" is not a lower-case slug`,
      `Ids use only a-z, 0-9 and hyphens, at most ${MAX_ID_CHARS} characters: write "${suggestion}".`,
    );
  }
  return id;
}

function textField(obj: Record<string, unknown>, field: string, max: number, what: string): string {
  const value = obj[field];
  if (typeof value !== 'string' || collapseWhitespace(value) === '') {
    throw new ShapeError(
      `"${field}" is missing or not a string`,
      `Give "${field}" as ${what}, at most ${max} characters.`,
    );
  }
  const text = collapseWhitespace(value);
  if (text.length > max) {
    throw new ShapeError(
      `"${field}" is ${text.length} characters, over the limit of ${max}`,
      `Shorten "${field}" to at most ${max} characters.`,
    );
  }
  return text;
}

function kindField(obj: Record<string, unknown>): EntityKind {
  const value = obj.kind;
  const kind = typeof value === 'string' ? value.trim().toLowerCase() : '';
  if (!(ENTITY_KINDS as readonly string[]).includes(kind)) {
    throw new ShapeError(
      typeof value === 'string' ? `unknown kind "${clipLine(value)}"` : '"kind" is missing',
      `Give "kind" as one of: ${ENTITY_KINDS.join(', ')}.`,
    );
  }
  return kind as EntityKind;
}

function aboutField(obj: Record<string, unknown>): string[] | undefined {
  if (!present(obj, 'about')) return undefined;
  const value = obj.about;
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.some((v) => typeof v !== 'string')) {
    throw new ShapeError(
      '"about" is not a list of ids',
      'Give "about" as a list of ids, e.g. ["mira","brass-key"], or leave it out.',
    );
  }
  if (list.length > MAX_ABOUT_IDS) {
    throw new ShapeError(
      `"about" lists ${list.length} ids, over the limit of ${MAX_ABOUT_IDS}`,
      `List at most ${MAX_ABOUT_IDS} ids in "about".`,
    );
  }
  const ids = list.map((_, i) => idField({ about: list[i] }, 'about'));
  return ids.length > 0 ? [...new Set(ids)] : undefined;
}

function buildEvent(obj: Record<string, unknown>, type: string): StateEvent {
  switch (type) {
    case 'enter': {
      const event: StateEvent = {
        type: 'enter',
        id: idField(obj, 'id'),
        name: textField(obj, 'name', MAX_NAME_CHARS, 'the display name'),
        kind: kindField(obj),
      };
      if (present(obj, 'status')) {
        event.status = textField(obj, 'status', MAX_STATUS_CHARS, 'a short word').toLowerCase();
      }
      if (present(obj, 'at')) event.at = idField(obj, 'at');
      if (present(obj, 'desc')) {
        event.desc = textField(obj, 'desc', MAX_DESC_CHARS, 'a short description');
      }
      return event;
    }
    case 'status':
      return {
        type: 'status',
        id: idField(obj, 'id'),
        to: textField(obj, 'to', MAX_STATUS_CHARS, 'the new status, a short word').toLowerCase(),
      };
    case 'move':
      return { type: 'move', id: idField(obj, 'id'), to: idField(obj, 'to') };
    case 'gain':
    case 'lose':
      return { type, holder: idField(obj, 'holder'), item: idField(obj, 'item') };
    case 'fact': {
      const event: StateEvent = {
        type: 'fact',
        text: textField(obj, 'text', MAX_FACT_CHARS, 'one sentence'),
      };
      const about = aboutField(obj);
      if (about) event.about = about;
      return event;
    }
    default:
      throw new ShapeError(`unknown type "${type}"`, 'unreachable');
  }
}

/** Checks one parsed JSON value; `line` is the raw text it came from, kept for the rejection. */
export function checkEventShape(value: unknown, line: string): ShapeCheck {
  if (!isRecord(value)) {
    return {
      ok: false,
      rejection: rejection(
        line,
        'not a JSON object',
        'Write one JSON object per line, e.g. {"type":"status","id":"mira","to":"wounded"}.',
      ),
    };
  }
  const rawType = value.type;
  const type = typeof rawType === 'string' ? rawType.trim().toLowerCase() : '';
  if (!(EVENT_TYPES as readonly string[]).includes(type)) {
    return {
      ok: false,
      rejection: rejection(
        line,
        typeof rawType === 'string' ? `unknown type "${clipLine(rawType)}"` : '"type" is missing',
        `Set "type" to one of: ${EVENT_TYPES.join(', ')}.`,
      ),
    };
  }
  try {
    return { ok: true, event: buildEvent(value, type) };
  } catch (error) {
    if (error instanceof ShapeError) {
      return { ok: false, rejection: rejection(line, error.reason, error.fix) };
    }
    throw error;
  }
}
