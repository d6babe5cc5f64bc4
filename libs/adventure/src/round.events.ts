// The turn-policy facts of a room (spec/multiplayer.md §3.3): actions held for the next turn
// (`free`), a round's submissions, passes and close (`round`), a player marked away (any policy),
// and the turn that answers several players' actions at once (`PlayersActed`). A one-player
// adventure writes none of them.

import type { PlayerActionType } from './adventure.events';

/** One player's action of a multi-action turn, as it becomes a story node. */
export interface TurnAction {
  id: string;
  type: PlayerActionType;
  /** Formatted, as the story records it. */
  text: string;
  tokens: number;
  /** The member who sent it. */
  actorId: string;
}

/** What closed a round or started a turn of several actions. */
export type TurnCloser = 'all-in' | 'timer' | 'host' | 'held';

/**
 * A turn that answers several actions: a closed round's submissions (in submission order) or
 * the actions `free` held while the turn before was narrated (in arrival order). Each action
 * becomes a story node, in order, and the turn's one narration follows the last.
 */
export type PlayersActed = {
  type: 'PlayersActed';
  data: { turnId: string; roundId: string | null; closedBy: TurnCloser; actions: TurnAction[] };
};
/** `free`: an action sent while a turn was narrated, kept for the next (`turnId`: that turn's id). */
export type ActionHeld = { type: 'ActionHeld'; data: { turnId: string; action: TurnAction } };
/** `round`: a player's action for the open round; a newer one from the same player replaces it. */
export type ActionSubmitted = {
  type: 'ActionSubmitted';
  /** `turnId`: the turn id it was sent under; the round's first submission names the round's turn. */
  data: { roundId: string; turnId: string; action: TurnAction };
};
export type SubmissionWithdrawn = {
  type: 'SubmissionWithdrawn';
  data: { roundId: string; userId: string; actionId: string };
};
export type PlayerPassed = { type: 'PlayerPassed'; data: { roundId: string; userId: string } };
/**
 * The idle timeout ran out on a player (`round`: not in yet; `hot-seat`: their seat): the round
 * no longer waits for them, the seat moves on. They are active again when they next act.
 */
export type PlayerMarkedAway = {
  type: 'PlayerMarkedAway';
  data: { roundId: string | null; userId: string };
};
/**
 * A round closed while a turn was narrated (the timer, the host): it closes, and its turn
 * starts, when that turn ends.
 */
export type RoundCloseDue = {
  type: 'RoundCloseDue';
  data: { roundId: string; closedBy: Exclude<TurnCloser, 'all-in' | 'held'> };
};
/** A round closed with no action in it (everyone passed): nothing to narrate, the next opens. */
export type RoundClosed = {
  type: 'RoundClosed';
  data: { roundId: string; closedBy: Exclude<TurnCloser, 'held'> };
};

export type RoundEvent =
  | PlayersActed
  | ActionHeld
  | ActionSubmitted
  | SubmissionWithdrawn
  | PlayerPassed
  | PlayerMarkedAway
  | RoundCloseDue
  | RoundClosed;
