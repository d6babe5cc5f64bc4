// How the turn-policy events change `state.turns` (round.state.ts): one step both folds take
// (the fast projector and the plain evolve), as they share notePlayerText, so the two cannot
// disagree on a room's bookkeeping. The story nodes a PlayersActed writes are each fold's own.

import type { ActionNode, AdventureState } from './adventure.state';
import type { RecordedAdventureEvent } from './adventure.events';
import { turnRoleOf } from './event.catalogue';
import type { TurnAction } from './round.events';
import { emptyRound, type OpenRound, type TurnsState } from './round.state';

function without(list: readonly string[], userId: string): string[] {
  return list.includes(userId) ? list.filter((id) => id !== userId) : (list as string[]);
}

function acting(turns: TurnsState, actions: readonly TurnAction[]): TurnsState {
  let away = turns.away;
  const actors = { ...turns.actors };
  for (const action of actions) {
    away = without(away, action.actorId);
    actors[action.id] = action.actorId;
  }
  return { ...turns, away, actors };
}

function withRound(turns: TurnsState, round: OpenRound): TurnsState {
  return { ...turns, round };
}

/** `state.turns` after `event` (replaced, never changed in place). */
// eslint-disable-next-line max-lines-per-function -- one switch over the turn-policy events, read in one place
export function noteTurns(
  state: Pick<AdventureState, 'turns'>,
  event: RecordedAdventureEvent,
): void {
  const turns = state.turns;
  switch (event.type) {
    case 'PlayerActed': {
      const { actorId, action } = event.data;
      if (actorId === undefined) break;
      const next = action
        ? acting(turns, [{ ...action, actorId }])
        : { ...turns, away: without(turns.away, actorId) };
      state.turns = { ...next, lastSeat: actorId, seatSince: event.version };
      return;
    }
    case 'PlayersActed': {
      const { roundId, actions } = event.data;
      let next = acting(turns, actions);
      if (roundId === null) next = { ...next, held: null };
      else if (roundId === turns.round.id)
        next = withRound(next, emptyRound(turns.round.number + 1));
      state.turns = { ...next, seatSince: event.version };
      return;
    }
    case 'ActionHeld': {
      const { turnId, action } = event.data;
      const held = turns.held ?? { turnId, actions: [] };
      state.turns = {
        ...turns,
        away: without(turns.away, action.actorId),
        held: { turnId: held.turnId, actions: [...held.actions, action] },
      };
      return;
    }
    case 'ActionSubmitted': {
      const { action, turnId } = event.data;
      const round = turns.round;
      state.turns = withRound(
        { ...turns, away: without(turns.away, action.actorId) },
        {
          ...round,
          submitted: [...round.submitted.filter((a) => a.actorId !== action.actorId), action],
          passed: without(round.passed, action.actorId),
          // The round's turn is named by its first submission: every answer can give it.
          turnId: round.turnId ?? turnId,
        },
      );
      return;
    }
    case 'SubmissionWithdrawn': {
      const round = turns.round;
      const submitted = round.submitted.filter((a) => a.id !== event.data.actionId);
      state.turns = withRound(turns, { ...round, submitted });
      return;
    }
    case 'PlayerPassed': {
      const { userId } = event.data;
      const round = turns.round;
      state.turns = withRound(
        { ...turns, away: without(turns.away, userId) },
        {
          ...round,
          submitted: round.submitted.filter((a) => a.actorId !== userId),
          passed: round.passed.includes(userId) ? round.passed : [...round.passed, userId],
        },
      );
      return;
    }
    case 'PlayerMarkedAway': {
      const { userId, roundId } = event.data;
      const away = turns.away.includes(userId) ? turns.away : [...turns.away, userId];
      // A hot-seat's skip moves the seat on.
      state.turns =
        roundId === null
          ? { ...turns, away, lastSeat: userId, seatSince: event.version }
          : { ...turns, away };
      return;
    }
    case 'RoundCloseDue':
      state.turns = withRound(turns, { ...turns.round, closeDue: event.data.closedBy });
      return;
    case 'RoundClosed':
      state.turns = withRound(turns, emptyRound(turns.round.number + 1));
      return;
    default:
      break;
  }
  // A turn that ends gives the seat to the next player, whose idle timer starts now.
  if (turnRoleOf(event)?.role === 'ends') state.turns = { ...turns, seatSince: event.version };
}

/**
 * The player actions a narration answers: its parent, and the actions before it written by the
 * same turn (a closed round's, or the held actions of `free`), oldest first. A retry
 * re-narrates them all.
 */
export function actionsAnswered(
  lookup: (id: string) => ActionNode | undefined,
  narrationId: string,
): string[] {
  const narration = lookup(narrationId);
  let node = narration?.parentId ? lookup(narration.parentId) : undefined;
  if (!node || !isPlayerNode(node)) return [];
  const turnId = node.turnId;
  const ids: string[] = [];
  while (node && isPlayerNode(node) && node.turnId === turnId) {
    ids.unshift(node.id);
    node = node.parentId ? lookup(node.parentId) : undefined;
  }
  return ids;
}

function isPlayerNode(node: ActionNode): boolean {
  return node.type === 'do' || node.type === 'say' || node.type === 'story';
}
