// Checks a recorded event as the live API would have made it: its JSON bounds, its turn role's
// preconditions on the state before it (a turn starts only when none is in flight, a narration
// answers the turn in flight), and its type's own field checks, each read from the event
// catalogue (the checks themselves are in event.checks.ts). Used where events arrive already
// made — an import — so a file cannot put into the log what no request could. Errors name the
// field.

import { turnStatus } from './adventure.queries';
import type { AdventureEvent } from './adventure.events';
import { LIMITS } from './adventure.limits';
import type { AdventureState } from './adventure.state';
import { checkId, checkText } from './adventure.validation';
import {
  EVENT_BOUNDS,
  LORE_RAW_BOUNDS,
  invalid,
  requireNoTurnInFlight,
  type EventCheck,
  type JsonBounds,
} from './event.checks';
import { EVENT_CATALOGUE, turnRoleOf } from './event.catalogue';

export { MAX_EVENT_DEPTH, type JsonBounds } from './event.checks';

/** The lists that hold an adventure's cards, which may run to LIMITS.storyCardsPerAdventure. */
const CARD_LISTS = new Set(['data.storyCards', 'data.cards', 'data.removedCardIds', 'data.order']);

/**
 * Every string anywhere in `value`: no NUL (Postgres refuses it in jsonb), no lone surrogate,
 * at most `bounds.stringChars`; nesting and list lengths bounded. Names the first bad field by
 * its path.
 */
export function checkJsonValue(
  path: string,
  value: unknown,
  depth = 0,
  bounds: JsonBounds = EVENT_BOUNDS,
): void {
  if (depth > bounds.depth) invalid(`${path} nests more than ${bounds.depth} deep`);
  if (typeof value === 'string') {
    checkText(path, value, { max: bounds.stringChars });
    return;
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) invalid(`${path} must be a finite number`);
    return;
  }
  if (value === null || typeof value === 'boolean') return;
  if (Array.isArray(value)) {
    const cardList = CARD_LISTS.has(path);
    const max = cardList ? LIMITS.storyCardsPerAdventure : bounds.listItems;
    if (value.length > max) {
      invalid(
        `${path} has more than ${max} entries${cardList ? ' (limit storyCardsPerAdventure)' : ''}`,
      );
    }
    value.forEach((item, index) => checkJsonValue(`${path}[${index}]`, item, depth + 1, bounds));
    return;
  }
  if (typeof value === 'object') {
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      checkText(`${path} key`, key, { max: LIMITS.idChars });
      const inner = key === 'raw' && isLoreSource(path) ? LORE_RAW_BOUNDS : bounds;
      checkJsonValue(`${path}.${key}`, item, depth + 1, inner);
    }
    return;
  }
  invalid(`${path} is not JSON`);
}

/** A card's `origin` or an imported book: their `raw` is the lore file's own entry. */
function isLoreSource(path: string): boolean {
  return path.endsWith('.origin') || path === 'data.book';
}

function requireTurnInFlight(state: AdventureState, turnId: unknown): void {
  if (!state.inFlight || state.inFlight.turnId !== turnId) {
    invalid(`turnId ${JSON.stringify(turnId)} is not the turn in flight`);
  }
}

function requireNewTurn(state: AdventureState, turnId: string): void {
  if (turnStatus(state, turnId)) invalid(`turn id ${turnId} is already used in this adventure`);
}

/**
 * A turn's preconditions, from the event catalogue's turn roles: an event that starts a turn
 * needs none in flight and a new turn id; one that ends a turn needs that turn in flight. An
 * onInput script's stop is the exception: it ends a turn that never started.
 */
function checkTurnRole(event: AdventureEvent, before: AdventureState): void {
  const turn = turnRoleOf(event);
  if (turn?.role === 'starts') {
    requireNoTurnInFlight(before);
    checkId('data.turnId', turn.turnId);
    requireNewTurn(before, turn.turnId);
  } else if (turn?.role === 'ends') {
    const stoppedOnInput = event.type === 'TurnStoppedByScript' && event.data.hook === 'input';
    if (!stoppedOnInput) requireTurnInFlight(before, turn.turnId);
  }
}

/** Throws InvalidCommandError naming the field when the live API could not have written it. */
export function checkRecordedEvent(event: AdventureEvent, before: AdventureState): void {
  const declared = EVENT_CATALOGUE[event.type];
  checkJsonValue('data', event.data, 0, declared.bounds ?? EVENT_BOUNDS);
  checkTurnRole(event, before);
  const check = declared.check as EventCheck<AdventureEvent['type']> | undefined;
  check?.(event.data as never, before);
}
