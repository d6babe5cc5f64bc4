// What a room's stream (GET /v1/adventures/:id/stream, spec/multiplayer.md §3.4, §3.8) shows of the
// adventure's events: ONE pure function from a recorded event to the frames it makes, so a client
// reconnecting with Last-Event-ID is given the same frames again from the log (an event's version
// is its frames' position) and a live follower the same ones as they are appended. The turn's own
// frames (chunk, done, error) come from the turn's stream; `turnOf` says which events start and
// end a turn, so the stream knows which turn's frames to interleave and when they must be in.

import type { RecordedAdventureEvent } from './adventure.events';
import { turnRoleOf } from './event.catalogue';
import type { Character, InviteRole, RoomRole } from './room.state';
import type { TurnCloser } from './round.events';
import { roundOpenedBy } from './round.state';

/** The actions a turn answers: one for a one-player turn (none for continue and retry). */
export interface RoomTurnAction {
  id: string;
  /** The member who sent it; null in a one-player turn (the owner). */
  actorId: string | null;
}

export type RoomFrame =
  | {
      event: 'joined';
      data: { userId: string; role: InviteRole; character: Character; version: number };
    }
  | {
      event: 'left';
      data: { userId: string; reason: 'left' | 'kicked' | 'reset'; version: number };
    }
  | { event: 'role-changed'; data: { userId: string; role: RoomRole; version: number } }
  | { event: 'character-changed'; data: { userId: string; character: Character; version: number } }
  | { event: 'handed-over'; data: { from: string; to: string; version: number } }
  // A round's frames carry ids only: a submission's text is shown when its turn starts (the
  // story), not to the others while they still choose theirs.
  | { event: 'round-opened'; data: { roundId: string; version: number } }
  | {
      event: 'submitted' | 'withdrawn';
      data: { roundId: string; userId: string; actionId: string; version: number };
    }
  | { event: 'passed'; data: { roundId: string; userId: string; version: number } }
  /** `roundId` null: a hot-seat's skip. */
  | { event: 'away'; data: { roundId: string | null; userId: string; version: number } }
  | {
      event: 'round-closed';
      /** `turnId` null: nothing to narrate (everyone passed). */
      data: {
        roundId: string;
        turnId: string | null;
        closedBy: Exclude<TurnCloser, 'held'>;
        version: number;
      };
    }
  | {
      event: 'turn-started';
      data: {
        turnId: string;
        roundId: string | null;
        actions: RoomTurnAction[];
        version: number;
      };
    };

export type RoomFrameName = RoomFrame['event'];

/** How an event bears on a turn: it starts one (with what it answers) or ends one. */
export type TurnMark =
  | { kind: 'starts'; turnId: string; roundId: string | null; actions: RoomTurnAction[] }
  | { kind: 'ends'; turnId: string };

/**
 * The turn an event starts or ends (the catalogue's turn role), with what a start answers; null
 * when it does neither.
 */
export function turnOf(event: RecordedAdventureEvent): TurnMark | null {
  const role = turnRoleOf(event);
  if (!role) return null;
  if (role.role === 'ends') return { kind: 'ends', turnId: role.turnId };
  return { kind: 'starts', turnId: role.turnId, ...answeredBy(event) };
}

/** The round and the player actions a turn-starting event answers (none: continue, retry). */
function answeredBy(event: RecordedAdventureEvent): {
  roundId: string | null;
  actions: RoomTurnAction[];
} {
  if (event.type === 'PlayerActed' && event.data.action) {
    const actorId = event.data.actorId ?? null;
    return { roundId: null, actions: [{ id: event.data.action.id, actorId }] };
  }
  if (event.type === 'PlayersActed') {
    const { roundId, actions } = event.data;
    return { roundId, actions: actions.map(({ id, actorId }) => ({ id, actorId })) };
  }
  return { roundId: null, actions: [] };
}

/**
 * The room frames an event makes (most make none: a story card, a memory, a script's run). A
 * round's close comes first, then its turn's start, then the next round's opening.
 */
export function roomFramesOf(event: RecordedAdventureEvent): RoomFrame[] {
  const frames = [...ownFramesOf(event), ...turnStartedOf(event)];
  const opened = roundOpenedBy(event);
  if (opened)
    frames.push({ event: 'round-opened', data: { roundId: opened, version: event.version } });
  return frames;
}

function turnStartedOf(event: RecordedAdventureEvent): RoomFrame[] {
  const mark = turnOf(event);
  if (mark?.kind !== 'starts') return [];
  const { turnId, roundId, actions } = mark;
  return [{ event: 'turn-started', data: { turnId, roundId, actions, version: event.version } }];
}

function ownFramesOf(event: RecordedAdventureEvent): RoomFrame[] {
  const version = event.version;
  switch (event.type) {
    case 'MemberJoined': {
      const { userId, role, character } = event.data;
      return [{ event: 'joined', data: { userId, role, character, version } }];
    }
    case 'MemberLeft':
      return [{ event: 'left', data: { userId: event.data.userId, reason: 'left', version } }];
    case 'MemberKicked':
      return [{ event: 'left', data: { userId: event.data.userId, reason: 'kicked', version } }];
    case 'RoomReset':
      return event.data.droppedMembers.map((userId) => ({
        event: 'left' as const,
        data: { userId, reason: 'reset' as const, version },
      }));
    case 'MemberRoleChanged': {
      const { userId, role } = event.data;
      return [{ event: 'role-changed', data: { userId, role, version } }];
    }
    case 'CharacterChanged': {
      const { userId, character } = event.data;
      return [{ event: 'character-changed', data: { userId, character, version } }];
    }
    case 'RoomHandedOver':
      return [{ event: 'handed-over', data: { ...event.data, version } }];
    case 'ActionSubmitted': {
      const { roundId, action } = event.data;
      const data = { roundId, userId: action.actorId, actionId: action.id, version };
      return [{ event: 'submitted', data }];
    }
    case 'SubmissionWithdrawn':
      return [{ event: 'withdrawn', data: { ...event.data, version } }];
    case 'PlayerPassed':
      return [{ event: 'passed', data: { ...event.data, version } }];
    case 'PlayerMarkedAway':
      return [{ event: 'away', data: { ...event.data, version } }];
    case 'RoundClosed':
      return [{ event: 'round-closed', data: { ...event.data, turnId: null, version } }];
    case 'PlayersActed': {
      const { roundId, turnId, closedBy } = event.data;
      if (roundId === null || closedBy === 'held') return [];
      return [{ event: 'round-closed', data: { roundId, turnId, closedBy, version } }];
    }
    default:
      return [];
  }
}

/** Whether a room's stream has anything to show for these events (a follower need not look). */
export function showsOnRoomStream(events: readonly RecordedAdventureEvent[]): boolean {
  return events.some((event) => turnOf(event) !== null || roomFramesOf(event).length > 0);
}
