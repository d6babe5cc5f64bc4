// What the projection keeps of a room's turn policy (spec/multiplayer.md §3.3): the actions
// `free` holds for the next turn, the open round of `round`, who the idle timeout marked away,
// the hot-seat's place, and who sent each player action. Empty in a one-player adventure.

import type { AdventureEvent } from './adventure.events';
import type { TurnAction } from './round.events';

export interface OpenRound {
  /** `round-<number>`: the first round of an adventure is round-1. */
  id: string;
  number: number;
  /** In submission order (a replacement goes to the end). */
  submitted: TurnAction[];
  passed: string[];
  /** The turn id the round's first submission was sent under: the round's turn when it closes. */
  turnId: string | null;
  /** The timer ran out or the host closed it while a turn was narrated: it closes when that ends. */
  closeDue: 'timer' | 'host' | null;
}

export interface TurnsState {
  /** `free`: the actions sent while a turn was narrated, in arrival order, and their turn's id. */
  held: { turnId: string; actions: TurnAction[] } | null;
  round: OpenRound;
  /** Players the idle timeout marked away, until they act again. */
  away: string[];
  /** Who sent each player action of a room, by action id (nothing in a one-player adventure). */
  actors: Record<string, string>;
  /** `hot-seat`: the player who acted (or was skipped) last; the seat is the next player's. */
  lastSeat: string | null;
  /** The stream version at which the seat last moved: a seat timer set then still applies. */
  seatSince: number;
}

export function roundIdOf(number: number): string {
  return `round-${number}`;
}

export function emptyRound(number: number): OpenRound {
  return { id: roundIdOf(number), number, submitted: [], passed: [], turnId: null, closeDue: null };
}

export function emptyTurns(): TurnsState {
  return {
    held: null,
    round: emptyRound(1),
    away: [],
    actors: {},
    lastSeat: null,
    seatSince: 0,
  };
}

/** True when the round has anything in it (a submission or a pass). */
export function roundStarted(round: OpenRound): boolean {
  return round.submitted.length > 0 || round.passed.length > 0;
}

/**
 * The round an event opens, or null: THE rule of when a round opens (the room stream's
 * `round-opened` frame and the `round.opened` webhook both ask it). A round opens when the one
 * before it closes, with a turn (`PlayersActed` of that round) or without (`RoundClosed`): the
 * projection's open round is the next one from that event on, and it takes submissions at once,
 * even while the closed round's turn is narrated. Round-1 is open from the adventure's start and
 * no event opens it. Decided from the event alone, so a stream resumed from the log repeats it.
 */
export function roundOpenedBy(event: AdventureEvent): string | null {
  if (event.type !== 'PlayersActed' && event.type !== 'RoundClosed') return null;
  const closed = event.data.roundId;
  const number = closed === null ? NaN : Number(/^round-(\d+)$/.exec(closed)?.[1]);
  return Number.isInteger(number) ? roundIdOf(number + 1) : null;
}
