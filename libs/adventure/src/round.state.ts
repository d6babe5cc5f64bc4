// What the projection keeps of a room's turn policy (spec/multiplayer.md §3.3): the actions
// `free` holds for the next turn, the open round of `round`, who the idle timeout marked away,
// the hot-seat's place, and who sent each player action. Empty in a one-player adventure.

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
