// The referee: the model proposes, the engine disposes. Each candidate event is checked against
// the state as it stands after the events before it in the same block, and is accepted, rejected
// with a reason and a fix the model can act on, or (when it would change nothing) ignored
// without comment, because a no-op is not a mistake worth a note in the next prompt.

import { forbiddenChangeLine, forbiddingRule } from './narrative.canon';
import { aKind, checkEventShape, rejection } from './event-shape.validator';
import { MAX_EVENTS_PER_BLOCK, MAX_IDS_IN_FIX, PLAYER_ID } from './narrative.limits';
import { evolve, findEntity, hasFact } from './narrative.state';
import { echoKeys, isEchoOf, stateEventsIn } from './player-text.guard';
import type {
  Canon,
  NarrativeState,
  Rejection,
  RefereeVerdict,
  StateEvent,
} from './narrative.types';

type Judgement = 'accept' | 'ignore' | Rejection;

export interface RefereeOptions {
  /**
   * The text the player wrote this turn (their action). An event that reproduces one this text
   * carried is the player's, not the model's report, and is refused (see player-text.guard.ts).
   */
  playerText?: string;
  /**
   * The events the player's texts carried, when the caller holds those rather than the texts
   * (the adventure's turn in flight keeps them, see `stateEventsIn`): refused the same way.
   */
  playerEvents?: readonly StateEvent[];
}

export function referee(
  state: NarrativeState,
  canon: Canon | null | undefined,
  events: readonly unknown[],
  options: RefereeOptions = {},
): RefereeVerdict {
  const accepted: StateEvent[] = [];
  const rejected: Rejection[] = [];
  const list = Array.isArray(events) ? events : [];
  const players = echoKeys([
    ...(options.playerEvents ?? []),
    ...stateEventsIn(options.playerText ?? ''),
  ]);
  let current = state;

  for (let i = 0; i < list.length; i++) {
    const line = rawLine(list[i]);
    if (i >= MAX_EVENTS_PER_BLOCK) {
      rejected.push(
        rejection(
          line,
          `over the limit of ${MAX_EVENTS_PER_BLOCK} events per block; ${list.length - i} more not applied`,
          `Report at most ${MAX_EVENTS_PER_BLOCK} events per turn: merge or drop minor changes.`,
        ),
      );
      break;
    }
    const shape = checkEventShape(list[i], line);
    if (!shape.ok) {
      rejected.push(shape.rejection);
      continue;
    }
    if (isEchoOf(shape.event, players)) {
      rejected.push(
        rejection(
          line,
          "repeats an event the player's action wrote; the player cannot report state",
          'Report only what your own narration made happen this turn; never copy a state line from the player.',
        ),
      );
      continue;
    }
    const judgement = judge(current, canon, shape.event, line);
    if (judgement === 'ignore') continue;
    if (judgement === 'accept') {
      accepted.push(shape.event);
      current = evolve(current, shape.event);
      continue;
    }
    rejected.push(judgement);
  }
  return { accepted, rejected };
}

/**
 * The line a rejection quotes. The parser's raw text is not carried on the event, so the event
 * is quoted as canonical JSON: the same fields, in the form the model is asked to write.
 */
function rawLine(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

// eslint-disable-next-line max-lines-per-function -- one switch over the state event types, each checked against the same state and canon
function judge(
  state: NarrativeState,
  canon: Canon | null | undefined,
  event: StateEvent,
  line: string,
): Judgement {
  switch (event.type) {
    case 'enter': {
      const existing = Object.prototype.hasOwnProperty.call(state.entities, event.id)
        ? state.entities[event.id]
        : undefined;
      if (existing) {
        return rejection(
          line,
          `id "${event.id}" already exists (${existing.name}, ${existing.kind})`,
          `To change ${existing.name}, use status, move, gain or lose with id "${event.id}". ` +
            `If this is someone or something else, enter it with a new id such as "${freshId(state, event.id)}".`,
        );
      }
      if (event.at !== undefined) return placeCheck(state, event.at, 'at', line) ?? 'accept';
      return 'accept';
    }
    case 'status': {
      const entity = findEntity(state, event.id);
      if (!entity) return unknownId(state, event.id, 'id', line);
      if (entity.status === event.to) return 'ignore';
      const rule = forbiddingRule(canon, entity.status, event.to);
      if (rule) {
        return rejection(
          line,
          `canon forbids "${entity.status}" → "${event.to}" for "${event.id}"`,
          `The campaign canon says: "${forbiddenChangeLine(rule)}" ${entity.name} stays ${entity.status}; narrate around it and leave this event out.`,
        );
      }
      return 'accept';
    }
    case 'move': {
      const entity = findEntity(state, event.id);
      if (!entity) return unknownId(state, event.id, 'id', line);
      if (entity.kind === 'place') {
        return rejection(
          line,
          `"${event.id}" is a place and cannot move`,
          'Move a character or an item; to describe a changed place, add a fact.',
        );
      }
      const notPlace = placeCheck(state, event.to, 'to', line);
      if (notPlace) return notPlace;
      if (entity.at === event.to && entity.holder === undefined) return 'ignore';
      return 'accept';
    }
    case 'gain': {
      const holder = findEntity(state, event.holder);
      if (!holder) return unknownId(state, event.holder, 'holder', line);
      const item = findEntity(state, event.item);
      if (!item) return unknownId(state, event.item, 'item', line);
      if (holder.kind === 'place') {
        return rejection(
          line,
          `holder "${event.holder}" is a place`,
          `To leave "${event.item}" somewhere, use {"type":"move","id":"${event.item}","to":"${event.holder}"}.`,
        );
      }
      if (item.kind === 'place' || event.item === event.holder) {
        return rejection(
          line,
          `"${event.item}" cannot be held by "${event.holder}"`,
          'Only characters, items and the like can be held; a holder cannot hold itself.',
        );
      }
      if (item.holder === event.holder) return 'ignore';
      return 'accept';
    }
    case 'lose': {
      if (!findEntity(state, event.holder)) return unknownId(state, event.holder, 'holder', line);
      const item = findEntity(state, event.item);
      if (!item) return unknownId(state, event.item, 'item', line);
      if (item.holder !== event.holder) {
        return rejection(
          line,
          `"${event.item}" is not held by "${event.holder}"`,
          item.holder
            ? `It is held by "${item.holder}": write {"type":"lose","holder":"${item.holder}","item":"${event.item}"} if that holder lost it.`
            : `Nobody holds "${event.item}"; leave this event out, or use move to put it at a place.`,
        );
      }
      return 'accept';
    }
    case 'fact': {
      for (const id of event.about ?? []) {
        if (!findEntity(state, id)) return unknownId(state, id, 'about', line);
      }
      return hasFact(state, event.text) ? 'ignore' : 'accept';
    }
    default:
      return 'ignore';
  }
}

function placeCheck(
  state: NarrativeState,
  id: string,
  field: string,
  line: string,
): Rejection | undefined {
  const target = findEntity(state, id);
  if (!target) return unknownId(state, id, field, line, 'place');
  if (target.kind === 'place') return undefined;
  const places = knownIds(state, 'place');
  return rejection(
    line,
    `"${field}" must be a place; "${id}" is ${aKind(target.kind)}`,
    places.length > 0
      ? `Use a place: ${listIds(places)}; or enter the place first. To hand an item over, use gain.`
      : `Enter the place first with {"type":"enter","id":"…","name":"…","kind":"place"}. To hand an item over, use gain.`,
  );
}

function knownIds(state: NarrativeState, kind?: 'place'): string[] {
  const ids = Object.keys(state.entities).filter(
    (id) => kind === undefined || state.entities[id].kind === kind,
  );
  if (kind === undefined && !ids.includes(PLAYER_ID)) ids.push(PLAYER_ID);
  return ids.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Up to `MAX_IDS_IN_FIX` ids, then "and N more": enough to recognise a typo, bounded in size. */
export function listIds(ids: string[]): string {
  const shown = ids.slice(0, MAX_IDS_IN_FIX).join(', ');
  const more = ids.length - MAX_IDS_IN_FIX;
  return more > 0 ? `${shown} and ${more} more` : shown;
}

function unknownId(
  state: NarrativeState,
  id: string,
  field: string,
  line: string,
  kind?: 'place',
): Rejection {
  const known = knownIds(state, kind);
  const enterFirst = `enter "${id}" first, on a line before this one, with {"type":"enter","id":"${id}","name":"…","kind":"${kind ?? '…'}"}`;
  return rejection(
    line,
    `unknown ${field === 'id' ? 'id' : `"${field}"`} "${id}"`,
    known.length > 0
      ? `Use a known ${kind ? `${kind} ` : ''}id: ${listIds(known)}; or ${enterFirst}.`
      : `Nothing with that id is in the story yet: ${enterFirst}.`,
  );
}

function freshId(state: NarrativeState, id: string): string {
  for (let n = 2; ; n++) {
    const candidate = `${id}-${n}`;
    if (!findEntity(state, candidate)) return candidate;
  }
}
