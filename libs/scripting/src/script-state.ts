// A script's `state` after a hook: validated, compared with the state the run started from,
// and read for the fields Chronicle acts on (`state.memory.*`, `state.message`).
import { forbiddenKey, isPlainObject, parseJson } from './json-safety';
import { SCRIPT_LIMITS } from './scripting.limits';
import type { ScriptMemory, ScriptMessage } from './scripting.types';

export type StateCheck =
  | { kind: 'ok'; state: Record<string, unknown>; changed: boolean; note?: string }
  | { kind: 'invalid'; error: string };

/**
 * `json` is the harness's serialisation of the script's `state` (undefined: it could not be
 * serialised, e.g. a cycle or a throwing getter). A non-object `state` keeps the previous one,
 * as AID's JSON round trip would; oversize or prototype-reaching state fails the run.
 */
export function checkState(
  previous: Record<string, unknown>,
  json: string | undefined,
  limit = SCRIPT_LIMITS.stateChars,
): StateCheck {
  if (typeof json !== 'string') return { kind: 'invalid', error: 'state could not be serialised' };
  if (json.length > limit) {
    return { kind: 'invalid', error: `state is over ${limit} characters serialised` };
  }
  const parsed = parseJson(json);
  if (!parsed.ok) return { kind: 'invalid', error: 'state could not be serialised' };
  if (!isPlainObject(parsed.value)) {
    return {
      kind: 'ok',
      state: previous,
      changed: false,
      note: 'state is not an object; the previous state is kept',
    };
  }
  const bad = forbiddenKey(parsed.value);
  if (bad) return { kind: 'invalid', error: `state carries the forbidden key "${bad}"` };
  return { kind: 'ok', state: parsed.value, changed: json !== JSON.stringify(previous) };
}

/** `state.memory`'s string fields (anything else is ignored, as the seed's builder does). */
export function scriptMemoryOf(state: Record<string, unknown>): ScriptMemory {
  const memory = state.memory;
  if (!isPlainObject(memory)) return {};
  const out: ScriptMemory = {};
  for (const key of ['context', 'authorsNote', 'frontMemory'] as const) {
    if (typeof memory[key] === 'string') out[key] = memory[key];
  }
  return out;
}

/** Later scripts win per field (docs/scripting.md §3.4). */
export function mergeScriptMemory(into: ScriptMemory, from: ScriptMemory): ScriptMemory {
  return { ...into, ...from };
}

/**
 * `state.message` as messages: a string, `{text, visibleTo}`, or an array of them. Shown only
 * when it differs from the previous value (Auto-Cards varies a character to repeat one).
 */
export function messagesOf(state: Record<string, unknown>): ScriptMessage[] {
  const one = (value: unknown): ScriptMessage | null => {
    if (typeof value === 'string') {
      return value === '' ? null : { text: value.slice(0, SCRIPT_LIMITS.messageChars) };
    }
    if (isPlainObject(value) && typeof value.text === 'string' && value.text !== '') {
      const visibleTo = Array.isArray(value.visibleTo)
        ? value.visibleTo.filter((v): v is string => typeof v === 'string')
        : undefined;
      return {
        text: value.text.slice(0, SCRIPT_LIMITS.messageChars),
        ...(visibleTo ? { visibleTo } : {}),
      };
    }
    return null;
  };
  const raw = state.message;
  const list = Array.isArray(raw) ? raw : [raw];
  return list.map(one).filter((m): m is ScriptMessage => m !== null);
}

/** Names in prose for an error: `"Mira", "Bo"`. */
const quoted = (names: readonly string[]) => names.map((name) => JSON.stringify(name)).join(', ');

/**
 * In a room, `state.message` must say whom it is for, since delivery follows `visibleTo`
 * (docs/multiplayer.md §3.6): a string or `{text, visibleTo?: [names]}` (or an array of them),
 * and every name a character of the room. The error says what to fix; null when it is sound.
 * A message `messagesOf` would quietly drop or widen to everyone fails the run instead, so a
 * message meant for one player never reaches the others.
 */
export function messageError(message: unknown, characters: readonly string[]): string | null {
  const shape =
    'state.message must be a string, {text, visibleTo: [character names]}, or an array of them';
  for (const one of Array.isArray(message) ? message : [message]) {
    if (one === undefined || one === null || typeof one === 'string') continue;
    if (!isPlainObject(one) || typeof one.text !== 'string') return shape;
    if (one.visibleTo === undefined) continue;
    const names = one.visibleTo;
    if (!Array.isArray(names) || names.some((name) => typeof name !== 'string')) {
      return `state.message.visibleTo must be an array of character names (${quoted(characters)})`;
    }
    const strangers = names.filter((name: string) => !characters.includes(name));
    if (strangers.length > 0) {
      return `state.message.visibleTo names ${quoted(strangers)}, not a character here; the characters are ${quoted(characters) || 'none'}`;
    }
  }
  return null;
}

/** The messages to post: `state.message` when it changed during the run. */
export function changedMessages(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): ScriptMessage[] {
  return messageChanged(before, after) ? messagesOf(after) : [];
}

export function messageChanged(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): boolean {
  return JSON.stringify(before.message ?? null) !== JSON.stringify(after.message ?? null);
}
