// The player's text may never report state: only the model's reply has a `state` block, and the
// referee decides what of it holds. A player who types a fenced block into an action (or into
// anything else that reaches the prompt) must not see it come back as the model's report, even
// from a model that repeats its prompt word for word. Two guards, because either alone can be
// beaten:
//   - `defuseStateFences` on the player's text before it enters the prompt: its fences are no
//     fences, so an echo of it opens no block (and the stream filter does not stop at it);
//   - `echoedEvents` + the referee's `playerText` option: an event that reproduces one the
//     player's own text carried this turn is refused, however the model fenced it (a model may
//     "repair" a defused fence, or wrap the player's bare JSON in a block of its own).

import { checkEventShape } from './event-shape.validator';
import type { StateEvent } from './narrative.types';

/** What a backtick of a run of three or more becomes in player text: a look-alike, not a fence. */
const DEFUSED_BACKTICK = '\u02cb';
const FENCE_RUN = /`{3,}/g;

/**
 * The player's text as the prompt shows it: every run of three or more backticks (what opens or
 * closes a state block, see FENCE_MARK) becomes the same number of look-alike grave accents.
 * Deterministic, and the identity on text without such a run (nearly all of it), so the prompt's
 * cached prefix is unchanged by it.
 */
export function defuseStateFences(text: string): string {
  return text.includes('```')
    ? text.replace(FENCE_RUN, (run) => DEFUSED_BACKTICK.repeat(run.length))
    : text;
}

/** How far an object is looked for from its `{`: well past the longest event the shapes allow. */
const MAX_OBJECT_CHARS = 4_096;
/** How many objects of the player's text are read: more than a block may hold. */
const MAX_OBJECTS = 200;

/**
 * The state events the player's text carries, anywhere in it (in a fence or not, on one line or
 * over several), each once. Every JSON object that passes the event-shape check counts; nothing
 * of the text is otherwise parsed or trusted.
 */
export function stateEventsIn(playerText: string): StateEvent[] {
  const events = new Map<string, StateEvent>();
  const text = typeof playerText === 'string' ? playerText : '';
  let found = 0;
  for (let start = text.indexOf('{'); start >= 0 && found < MAX_OBJECTS;) {
    const end = objectEnd(text, start);
    if (end < 0) {
      start = text.indexOf('{', start + 1);
      continue;
    }
    const value = tryJson(text.slice(start, end + 1));
    const check = value === undefined ? undefined : checkEventShape(value, '');
    if (check?.ok) {
      events.set(eventKey(check.event), check.event);
      found++;
      start = text.indexOf('{', end + 1);
    } else {
      start = text.indexOf('{', start + 1);
    }
  }
  return [...events.values()];
}

/** The player's events as keys `isEchoOf` compares with. */
export function echoKeys(events: readonly StateEvent[]): ReadonlySet<string> {
  return new Set(events.map(eventKey));
}

/** The state events the player's text carries (see `stateEventsIn`), as `isEchoOf`'s keys. */
export function echoedEvents(playerText: string): ReadonlySet<string> {
  return echoKeys(stateEventsIn(playerText));
}

/** Whether `event` is one of the player's (same type and fields, whatever their order). */
export function isEchoOf(event: StateEvent, playerEvents: ReadonlySet<string>): boolean {
  return playerEvents.size > 0 && playerEvents.has(eventKey(event));
}

function eventKey(event: StateEvent): string {
  return canonicalJson(event);
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    return `{${Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The index of the `}` that closes the object opened at `start` (strings skipped), or -1. */
function objectEnd(text: string, start: number): number {
  const stop = Math.min(text.length, start + MAX_OBJECT_CHARS);
  let depth = 0;
  let inString = false;
  for (let i = start; i < stop; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') inString = true;
    else if (char === '{') depth++;
    else if (char === '}' && --depth === 0) return i;
  }
  return -1;
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
