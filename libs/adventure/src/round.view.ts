// What a room's turn policy is waiting for, as GET /v1/adventures/:id shows it
// (spec/multiplayer.md §3.8's `room` block): the open round's submissions, passes, the players
// it still waits for and who is away, and under hot-seat whose turn it is.

import type { AdventureState } from './adventure.state';
import { currentPlayerOf, roundWaitingFor } from './round.decider';
import { awayPlayersOf, isRoomAdventure, turnPolicyOf } from './round.room';
import type { TurnPolicy } from './adventure.events';

export interface RoomTurnsView {
  policy: TurnPolicy;
  round: {
    id: string;
    submitted: string[];
    passed: string[];
    waitingFor: string[];
    away: string[];
    /** The timer or the host closed it while a turn was narrated: it closes when that turn ends. */
    closing: boolean;
  };
  /** `hot-seat`: the player whose turn it is. */
  currentPlayer?: string | null;
  /** `free`: the players whose action waits for the next turn, in arrival order. */
  held: string[];
}

/** The `room` block, or null for a one-player adventure (its answer stays as it was). */
export function roomTurnsView(state: AdventureState): RoomTurnsView | null {
  if (!isRoomAdventure(state)) return null;
  const policy = turnPolicyOf(state);
  const { round, held } = state.turns;
  const isRound = policy === 'round';
  return {
    policy,
    round: {
      id: round.id,
      submitted: round.submitted.map((action) => action.actorId),
      passed: [...round.passed],
      waitingFor: isRound ? roundWaitingFor(state) : [],
      away: awayPlayersOf(state),
      closing: round.closeDue !== null,
    },
    ...(policy === 'hot-seat' && { currentPlayer: currentPlayerOf(state) }),
    held: held ? held.actions.map((action) => action.actorId) : [],
  };
}

/** Where a room's action is now, by its id: a story node's turn, held, or submitted in the round. */
export function roomActionPlace(
  state: AdventureState,
  actionId: string,
): { place: 'held'; turnId: string } | { place: 'submitted'; roundId: string } | null {
  const { held, round } = state.turns;
  if (held?.actions.some((action) => action.id === actionId)) {
    return { place: 'held', turnId: held.turnId };
  }
  if (round.submitted.some((action) => action.id === actionId)) {
    return { place: 'submitted', roundId: round.id };
  }
  return null;
}
