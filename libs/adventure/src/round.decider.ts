// The turn policies of a room (spec/multiplayer.md §3.3), as a sub-decider `decide` delegates
// to: who may act now, what an action does under `free` (start the turn, or wait for the next),
// `round` (submit, replace, withdraw, pass; the round closes when every player is in, on its
// timer, or when the host closes it) and `hot-seat` (only the seat's player acts), and what a
// timer that ran out does. A one-player adventure never comes here.
//
// Whatever closes a round or ends a turn starts the next turn in the same decision (the last
// submission appends the turn that narrates the round; a narration appends the turn of the
// actions held meanwhile), so nothing waits for a client to come back. A timer is a delayed job
// that asks again: if the round, seat or turn it was set for has moved on, it changes nothing.

import type { AdventureEvent, PlayerActed } from './adventure.events';
import {
  ConflictError,
  InvalidCommandError,
  NotFoundError,
  TurnInFlightError,
} from './adventure.errors';
import { projectDecided } from './adventure.projector';
import type { AdventureState } from './adventure.state';
import { turnRoleOf } from './event.catalogue';
import type { TurnAction } from './round.events';
import {
  awayPlayersOf,
  isRoomAdventure,
  roomPlayersOf,
  roomRoleOf,
  turnPolicyOf,
} from './round.room';
import { roundStarted } from './round.state';

export type RoundCommand =
  | { type: 'PassRound'; data: { userId: string } }
  | { type: 'WithdrawSubmission'; data: { userId: string } }
  | { type: 'CloseRound'; data: { userId: string } }
  | { type: 'FireTurnTimer'; data: TurnTimer };

/**
 * A timer a room set (a BullMQ delayed job): the round's timeout, the idle timeout of a round,
 * or the idle timeout of a hot-seat's seat (`since`: the stream version the seat moved at).
 */
export type TurnTimer =
  | { timer: 'round'; roundId: string }
  | { timer: 'idle'; roundId: string }
  | { timer: 'seat'; userId: string; since: number };

const ROUND_COMMANDS = new Set(['PassRound', 'WithdrawSubmission', 'CloseRound', 'FireTurnTimer']);

export function isRoundCommand(command: { type: string }): command is RoundCommand {
  return ROUND_COMMANDS.has(command.type);
}

/** Out of turn under `hot-seat`: the 409 names whose turn it is. */
export class NotYourTurnError extends ConflictError {
  /** Added to the 409's body. */
  readonly details: { currentPlayer: string };
  constructor(readonly currentPlayer: string) {
    super(`it is ${currentPlayer}'s turn (hot-seat); wait for yours`);
    this.name = 'NotYourTurnError';
    this.details = { currentPlayer };
  }
}

/** The players the open round still waits for, in join order. */
export function roundWaitingFor(state: AdventureState): string[] {
  const { round } = state.turns;
  const away = new Set(awayPlayersOf(state));
  const done = new Set([...round.submitted.map((a) => a.actorId), ...round.passed]);
  return roomPlayersOf(state).filter((userId) => !away.has(userId) && !done.has(userId));
}

/**
 * `hot-seat`: whose turn it is: the next player after the one who acted (or was skipped) last,
 * in join order, passing over players marked away unless everyone is; null with no player.
 */
export function currentPlayerOf(state: AdventureState): string | null {
  const players = roomPlayersOf(state);
  if (players.length === 0) return null;
  const away = new Set(awayPlayersOf(state));
  const last = state.turns.lastSeat === null ? -1 : players.indexOf(state.turns.lastSeat);
  for (let step = 1; step <= players.length; step++) {
    const candidate = players[(last + step) % players.length];
    if (!away.has(candidate)) return candidate;
  }
  return players[(last + 1) % players.length];
}

/** Whether `decide` hands this SubmitAction to the room's policy. */
export function isRoomTurn(state: AdventureState, actorId: string | undefined): actorId is string {
  return actorId !== undefined && isRoomAdventure(state);
}

function requirePlayer(state: AdventureState, userId: string): void {
  const role = roomRoleOf(state, userId);
  if (role === null) throw new NotFoundError('adventure not found');
  if (role !== 'host' && role !== 'player') {
    throw new ConflictError('a spectator reads the story; ask the host for the player role to act');
  }
}

/**
 * A room member's action. `acted` is what a one-player adventure would append (the action
 * started as a turn now); `action` is the same action as a turn of several would hold it
 * (null for a continue).
 */
export function decideRoomAction(
  state: AdventureState,
  acted: () => AdventureEvent[],
  action: TurnAction | null,
  turnId: string,
): AdventureEvent[] {
  const actorId = action?.actorId ?? actorOf(acted());
  requirePlayer(state, actorId);
  switch (turnPolicyOf(state)) {
    case 'free': {
      if (!state.inFlight) return acted();
      if (!action) throw new TurnInFlightError(state.inFlight.turnId);
      const held = state.turns.held;
      if (held?.actions.some((a) => a.actorId === actorId)) {
        throw new ConflictError(
          'you already have an action waiting for the next turn; send another when it starts',
        );
      }
      return [{ type: 'ActionHeld', data: { turnId: held?.turnId ?? turnId, action } }];
    }
    case 'hot-seat': {
      const seat = currentPlayerOf(state);
      if (seat !== null && seat !== actorId) throw new NotYourTurnError(seat);
      if (state.inFlight) throw new TurnInFlightError(state.inFlight.turnId);
      return acted();
    }
    case 'round': {
      if (!action) {
        throw new InvalidCommandError(
          'a round takes an action (do, say or story) or a pass; not continue',
        );
      }
      const roundId = state.turns.round.id;
      return closeIfComplete(state, [
        { type: 'ActionSubmitted', data: { roundId, turnId, action } },
      ]);
    }
  }
}

function actorOf(events: AdventureEvent[]): string {
  const acted = events.find((e): e is PlayerActed => e.type === 'PlayerActed');
  return acted?.data.actorId ?? '';
}

export function decideRound(command: RoundCommand, state: AdventureState): AdventureEvent[] {
  const { round } = state.turns;
  switch (command.type) {
    case 'PassRound': {
      const { userId } = command.data;
      requirePlayer(state, userId);
      requireRoundPolicy(state);
      if (round.passed.includes(userId)) return [];
      return closeIfComplete(state, [
        { type: 'PlayerPassed', data: { roundId: round.id, userId } },
      ]);
    }
    case 'WithdrawSubmission': {
      const { userId } = command.data;
      requirePlayer(state, userId);
      requireRoundPolicy(state);
      const mine = round.submitted.find((a) => a.actorId === userId);
      if (!mine) throw new NotFoundError(`you have no submission in ${round.id} to withdraw`);
      return [
        { type: 'SubmissionWithdrawn', data: { roundId: round.id, userId, actionId: mine.id } },
      ];
    }
    case 'CloseRound': {
      if (command.data.userId !== state.ownerId) {
        throw new ConflictError('only the host closes a round');
      }
      requireRoundPolicy(state);
      if (!roundStarted(round)) {
        throw new ConflictError(
          `${round.id} has no submission or pass yet; there is nothing to close`,
        );
      }
      return closeRound(state, 'host');
    }
    case 'FireTurnTimer':
      return timerRanOut(command.data, state);
  }
}

function requireRoundPolicy(state: AdventureState): void {
  const policy = turnPolicyOf(state);
  if (policy !== 'round' || !isRoomAdventure(state)) {
    throw new ConflictError(
      `this adventure's turn policy is ${policy}; rounds are the round policy's`,
    );
  }
}

/** The events that close the open round now, or mark it due while a turn is narrated. */
function closeRound(
  state: AdventureState,
  closedBy: 'all-in' | 'timer' | 'host',
): AdventureEvent[] {
  const { round } = state.turns;
  if (state.inFlight) {
    if (closedBy === 'all-in' || round.closeDue !== null) return [];
    return [{ type: 'RoundCloseDue', data: { roundId: round.id, closedBy } }];
  }
  const last = round.submitted[round.submitted.length - 1];
  if (!last) return [{ type: 'RoundClosed', data: { roundId: round.id, closedBy } }];
  return [
    {
      type: 'PlayersActed',
      data: {
        turnId: round.turnId ?? last.id,
        roundId: round.id,
        closedBy,
        actions: round.submitted,
      },
    },
  ];
}

/** `events`, then the round's close when they leave every player in (decided on what they leave). */
function closeIfComplete(state: AdventureState, events: AdventureEvent[]): AdventureEvent[] {
  const after = projectDecided(state, events);
  const { round } = after.turns;
  if (!roundStarted(round) || roundWaitingFor(after).length > 0 || after.inFlight) return events;
  return [...events, ...closeRound(after, 'all-in')];
}

function timerRanOut(timer: TurnTimer, state: AdventureState): AdventureEvent[] {
  if (!isRoomAdventure(state)) return [];
  const policy = turnPolicyOf(state);
  const { round } = state.turns;
  if (timer.timer === 'seat') {
    if (policy !== 'hot-seat' || state.inFlight || state.turns.seatSince !== timer.since) return [];
    if (currentPlayerOf(state) !== timer.userId) return [];
    return [{ type: 'PlayerMarkedAway', data: { roundId: null, userId: timer.userId } }];
  }
  if (policy !== 'round' || round.id !== timer.roundId || !roundStarted(round)) return [];
  if (timer.timer === 'round') return closeRound(state, 'timer');
  const idle = roundWaitingFor(state).map((userId): AdventureEvent => ({
    type: 'PlayerMarkedAway',
    data: { roundId: round.id, userId },
  }));
  return idle.length === 0 ? [] : closeIfComplete(state, idle);
}

/** Room changes after which the round may wait for nobody: a player left, was kicked or now watches. */
const PLAYERS_CHANGED = new Set(['MemberLeft', 'MemberKicked', 'MemberRoleChanged']);

/**
 * What follows a decision that ended the turn in flight: the turn of the actions `free` held,
 * or a round that was complete or due meanwhile. Appended in the same decision, so the next
 * narrate job is enqueued with the end of the last one. A player who leaves may leave the round
 * complete too: it closes then.
 */
export function nextTurnAfter(state: AdventureState, events: AdventureEvent[]): AdventureEvent[] {
  const { held, round } = state.turns;
  if (held === null && !roundStarted(round)) return events;
  const ended = events.some((event) => {
    const turn = turnRoleOf(event);
    return turn?.role === 'ends' && turn.turnId === state.inFlight?.turnId;
  });
  if (!ended && !events.some((event) => PLAYERS_CHANGED.has(event.type))) return events;
  const after = projectDecided(state, events);
  if (after.inFlight) return events;
  if (after.turns.held !== null) {
    const { turnId, actions } = after.turns.held;
    return [
      ...events,
      { type: 'PlayersActed', data: { turnId, roundId: null, closedBy: 'held', actions } },
    ];
  }
  if (turnPolicyOf(after) !== 'round' || !roundStarted(after.turns.round)) return events;
  if (after.turns.round.closeDue !== null) {
    return [...events, ...closeRound(after, after.turns.round.closeDue)];
  }
  return roundWaitingFor(after).length === 0 ? [...events, ...closeRound(after, 'all-in')] : events;
}
