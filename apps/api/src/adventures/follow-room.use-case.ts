import { Injectable } from '@nestjs/common';
import {
  adventureStreamId,
  InvalidCommandError,
  roomFramesOf,
  turnOf,
  type RecordedAdventureEvent,
  type RoomFrame,
  type RoomTurnAction,
} from '@chronicle/adventure';
import { AdventureCommandHandler, toRecorded } from '@chronicle/adventure-store';
import { EventStoreRepository } from '@chronicle/event-store';
import { ControlPlane } from '@chronicle/platform';
import {
  TurnStreamHub,
  TurnStreamPublisher,
  isFinal,
  type TurnFrame,
  type TurnStreamEntry,
} from '@chronicle/turn-stream';

// A room's stream (spec/multiplayer.md §3.4, §3.8): the adventure's log from the follower's point,
// each event made into frames by roomFramesOf (libs/adventure/room.frames.ts), and between a turn's
// start and its end, that turn's own frames from its Redis stream. The log is the truth and the
// order: an event's version is its frames' position, so a reconnect is given the same frames from
// the log. A turn's frames sit between its start and the event that ends it (the worker appends
// `Narrated` before it writes `done`; an expired stream's `done` is made from the log, as the turn
// stream does). New events are announced by the process that appended them (AppendAnnouncer, over
// the control plane); a follower that missed a signal reads the log when it has been quiet a while.
//
// Every frame's SSE id is the whole cursor: `V` (the last event shown), or `V:S:E` while a turn is
// in flight (S: the version of the event that started it; E: the last of its entries shown, `0-0`
// for none, `end` once its final frame was shown). Resuming from it repeats nothing and misses
// nothing, whichever frame it was.

/** How long a follower waits for a signal before it reads the log anyway. */
const QUIET_CHECK_MS = 15_000;
const CURSOR = /^(\d{1,12})(?::(\d{1,12}):(\d{1,20}-\d{1,20}|end))?$/;
const NO_ENTRY = '0-0';
const FINAL_SHOWN = 'end';

/** One SSE frame of a room's stream: a room frame or a turn's, with its cursor as the id. */
export type SseRoomFrame = (RoomFrame | TurnFrame) & { id: string };

export interface RoomCursor {
  version: number;
  turn: { startVersion: number; entryId: string } | null;
}

interface FollowedTurn {
  turnId: string;
  startVersion: number;
  roundId: string | null;
  actions: RoomTurnAction[];
  /** The last entry shown; FINAL_SHOWN once its final frame was. */
  entryId: string;
}

@Injectable()
export class FollowRoomUseCase {
  private readonly waiting = new Map<string, Set<() => void>>();

  constructor(
    private readonly adventures: AdventureCommandHandler,
    private readonly events: EventStoreRepository,
    private readonly publisher: TurnStreamPublisher,
    private readonly hub: TurnStreamHub,
    controlPlane: ControlPlane,
  ) {
    controlPlane.whenAppended((adventureId) => {
      for (const wake of this.waiting.get(adventureId) ?? []) wake();
    });
  }

  /**
   * Where the stream starts, checked before any header is sent (a bad Last-Event-ID is a JSON
   * 400). Without one: the log's head now, and the turn in flight from its first entry.
   */
  async open(adventureId: string, lastEventId: string | undefined): Promise<RoomCursor> {
    if (lastEventId) return parseCursor(lastEventId);
    const state = await this.adventures.get(adventureId);
    const inFlight = state.inFlight;
    return {
      version: state.version,
      turn: inFlight ? { startVersion: inFlight.requestedAtVersion, entryId: NO_ENTRY } : null,
    };
  }

  async *frames(
    adventureId: string,
    cursor: RoomCursor,
    signal: AbortSignal,
  ): AsyncGenerator<SseRoomFrame> {
    let version = cursor.version;
    let turn = cursor.turn ? await this.turnStartedAt(adventureId, cursor.turn) : null;
    const id = () => (turn ? `${version}:${turn.startVersion}:${turn.entryId}` : `${version}`);
    let dirty = true;
    let interrupt: AbortController | null = null;
    const wake = () => {
      dirty = true;
      interrupt?.abort();
    };
    const onAbort = () => interrupt?.abort();
    signal.addEventListener('abort', onAbort);
    const waiting = this.waiting.get(adventureId) ?? new Set();
    this.waiting.set(adventureId, waiting.add(wake));
    try {
      while (!signal.aborted) {
        if (dirty) {
          dirty = false;
          for (const event of await this.eventsAfter(adventureId, version)) {
            const mark = turnOf(event);
            if (mark?.kind === 'ends' && turn?.turnId === mark.turnId) {
              const drained = await this.drain(turn, version, event);
              turn = null;
              yield* drained;
            }
            version = event.version;
            if (mark?.kind === 'starts') {
              const { turnId, roundId, actions } = mark;
              turn = { turnId, roundId, actions, startVersion: version, entryId: NO_ENTRY };
            }
            for (const frame of roomFramesOf(event)) yield { ...frame, id: id() };
          }
          continue;
        }
        interrupt = new AbortController();
        if (turn && turn.entryId !== FINAL_SHOWN) {
          const followed = turn;
          for await (const entry of this.hub.follow(followed.turnId, {
            afterId: followed.entryId,
            signal: interrupt.signal,
            idleMs: QUIET_CHECK_MS,
          })) {
            followed.entryId = isFinal(entry.event) ? FINAL_SHOWN : entry.id;
            const frame = roomTurnFrame(followed, entry);
            if (frame) yield { ...frame, id: id() };
          }
          // Its final frame is in (the log has the end by then), or a quiet while: read the log.
          if (!interrupt.signal.aborted) dirty = true;
        } else {
          await quietOrWoken(interrupt.signal);
          dirty = true;
        }
        interrupt = null;
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      waiting.delete(wake);
      if (waiting.size === 0) this.waiting.delete(adventureId);
    }
  }

  /**
   * What is left of a turn's frames when the log says it ended: its stream after the last entry
   * shown, up to the final one; when the stream holds no final entry (it expired, or Redis lost
   * it), the final frame made from the event that ended it.
   */
  private async drain(
    turn: FollowedTurn,
    version: number,
    end: RecordedAdventureEvent,
  ): Promise<SseRoomFrame[]> {
    if (turn.entryId === FINAL_SHOWN) return [];
    const at = (entryId: string) => `${version}:${turn.startVersion}:${entryId}`;
    const frames: SseRoomFrame[] = [];
    for (const entry of await this.publisher.entries(turn.turnId, turn.entryId)) {
      const final = isFinal(entry.event);
      turn.entryId = final ? FINAL_SHOWN : entry.id;
      const frame = roomTurnFrame(turn, entry);
      if (frame) frames.push({ ...frame, id: at(turn.entryId) });
      if (final) return frames;
    }
    // Shown with the end's version: the turn is over for the cursor once this frame is in.
    frames.push({ ...finalFrameOf(turn, end), id: `${end.version}` });
    return frames;
  }

  private async eventsAfter(
    adventureId: string,
    version: number,
  ): Promise<RecordedAdventureEvent[]> {
    const stored = await this.events.readStream(adventureStreamId(adventureId), {
      from: version + 1,
    });
    return stored.map(toRecorded);
  }

  /** The turn a cursor names, from the event that started it. */
  private async turnStartedAt(
    adventureId: string,
    at: NonNullable<RoomCursor['turn']>,
  ): Promise<FollowedTurn | null> {
    const [stored] = await this.events.readStream(adventureStreamId(adventureId), {
      from: at.startVersion,
      to: at.startVersion,
    });
    const mark = stored && turnOf(toRecorded(stored));
    if (mark?.kind !== 'starts') {
      throw new InvalidCommandError(
        `Last-Event-ID names no turn at version ${at.startVersion}; leave it out to follow from now`,
      );
    }
    const { turnId, roundId, actions } = mark;
    return { turnId, roundId, actions, startVersion: at.startVersion, entryId: at.entryId };
  }
}

export function parseCursor(lastEventId: string): RoomCursor {
  const match = CURSOR.exec(lastEventId);
  if (!match) {
    throw new InvalidCommandError(
      'Last-Event-ID must be an id this stream sent (such as 12 or 12:10:1718000000000-0); leave it out to follow from now',
    );
  }
  const version = Number(match[1]);
  if (match[2] === undefined) return { version, turn: null };
  return { version, turn: { startVersion: Number(match[2]), entryId: match[3] } };
}

/**
 * A turn's entry as the room's followers see it: `done` names the round and the actions the turn
 * answered; a script message meant for some players only is left to their own delivery (issue
 * 29), so it never widens to the room.
 */
function roomTurnFrame(turn: FollowedTurn, entry: TurnStreamEntry): TurnFrame | null {
  const { id: _id, ...frame } = entry;
  if (frame.event === 'message' && frame.data.visibleTo) return null;
  if (frame.event === 'done') return { event: 'done', data: { ...frame.data, ...answered(turn) } };
  return frame;
}

function answered(turn: FollowedTurn) {
  return { roundId: turn.roundId, actionIds: turn.actions.map((action) => action.id) };
}

/** The final frame the log tells of, for a turn whose stream lost it. */
function finalFrameOf(turn: FollowedTurn, end: RecordedAdventureEvent): TurnFrame {
  switch (end.type) {
    case 'Narrated': {
      const { id, text } = end.data.action;
      const data = { action: { id, text, type: 'ai' }, turnId: turn.turnId, version: end.version };
      return { event: 'done', data: { ...data, ...answered(turn) } };
    }
    case 'TurnStoppedByScript':
      return { event: 'stopped', data: { message: end.data.message } };
    case 'NarrationFailed':
      return { event: 'error', data: { code: end.data.code, message: end.data.message } };
    default:
      return {
        event: 'error',
        data: { code: 'cancelled', message: 'the turn was cancelled', cancelled: true },
      };
  }
}

function quietOrWoken(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, QUIET_CHECK_MS);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
