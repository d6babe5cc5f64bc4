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

/** The messages to post: `state.message` when it changed during the run. */
export function changedMessages(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): ScriptMessage[] {
  if (JSON.stringify(before.message ?? null) === JSON.stringify(after.message ?? null)) return [];
  return messagesOf(after);
}
