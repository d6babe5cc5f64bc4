import { Injectable } from '@nestjs/common';
import { InvalidCommandError, NotFoundError, turnStatus } from '@chronicle/adventure';
import { AdventureCommandHandler } from '@chronicle/adventure-store';
import {
  TurnStreamHub,
  TurnStreamPublisher,
  isFinal,
  type TurnFrame,
} from '@chronicle/turn-stream';
import { TurnsUseCase, type TurnView } from './turns.use-case';

/** One SSE frame; `id` is the Redis entry id, absent on a frame synthesized from the log. */
export type SseTurnFrame = TurnFrame & { id?: string };

const ENTRY_ID = /^\d{1,20}-\d{1,20}$/;
/**
 * How long the stream may stay quiet before the log is asked whether the turn has finished.
 * The stream is a delivery buffer: it expires, and a worker can die between appending
 * `Narrated` and publishing `done`; the log then supplies the final frame.
 */
const QUIET_CHECK_MS = 4_000;

/**
 * What a client watching a turn receives: the turn's Redis Stream replayed from its
 * Last-Event-ID and followed until `done` or `error`.
 */
@Injectable()
export class FollowTurnUseCase {
  private readonly asking = new Map<string, Promise<FinishedTurn | null>>();

  constructor(
    private readonly adventures: AdventureCommandHandler,
    private readonly turns: TurnsUseCase,
    private readonly publisher: TurnStreamPublisher,
    private readonly hub: TurnStreamHub,
  ) {}

  /**
   * Checks the request before any header is sent, so a bad one still gets a JSON error. The
   * answer is where `frames` starts: the turn as the log had it just now.
   */
  async open(
    adventureId: string,
    turnId: string,
    lastEventId: string | undefined,
  ): Promise<OpenedTurn> {
    if (lastEventId !== undefined && lastEventId !== '' && !ENTRY_ID.test(lastEventId)) {
      throw new InvalidCommandError(
        'Last-Event-ID must be an id this stream sent (such as 1718000000000-0); leave it out to replay from the start',
      );
    }
    // A follow from the start of a turn this process has just seen queued (the POST that
    // started it, as a rule): the turn exists, and whether it has finished since is for its
    // stream to say (see `frames`), so the log is not read here.
    const cached = lastEventId ? undefined : this.adventures.cached(adventureId);
    if (cached && turnStatus(cached, turnId)?.status === 'queued') {
      return { finished: null, unverified: true };
    }
    const known = await this.lookup(adventureId, turnId);
    if (!known) throw new NotFoundError(`turn ${turnId} not found in adventure ${adventureId}`);
    return { finished: finishedTurn(known.view, known.version) };
  }

  async *frames(
    adventureId: string,
    turnId: string,
    lastEventId: string | undefined,
    signal: AbortSignal,
    opened?: OpenedTurn,
  ): AsyncGenerator<SseTurnFrame> {
    let lastId = lastEventId || '0-0';
    let finished = opened ? opened.finished : await this.finished(adventureId, turnId);
    if (opened?.unverified) {
      // Opened on this process's projection, which may be behind the log: the stream holds at
      // least the turn's player frame, and everything since. An empty one expired or was lost
      // (or missed that frame), so the log says where the turn is, as for any other follow.
      const entries = await this.publisher.entries(turnId, lastId);
      if (entries.length === 0) finished = await this.finished(adventureId, turnId);
      for (const entry of entries) {
        lastId = entry.id;
        yield entry;
        if (isFinal(entry.event)) return;
      }
    }
    while (!signal.aborted) {
      if (finished) {
        // Nothing more will be written: drain without blocking, then close from the log.
        for (const entry of await this.publisher.entries(turnId, lastId)) {
          yield entry;
          if (isFinal(entry.event)) return;
        }
        yield finalFrame(finished);
        return;
      }
      for await (const entry of this.hub.follow(turnId, {
        afterId: lastId,
        signal,
        idleMs: QUIET_CHECK_MS,
      })) {
        lastId = entry.id;
        yield entry;
        if (isFinal(entry.event)) return;
      }
      if (signal.aborted) return;
      finished = await this.finished(adventureId, turnId);
    }
  }

  private async finished(adventureId: string, turnId: string): Promise<FinishedTurn | null> {
    const known = await this.lookup(adventureId, turnId);
    return known && finishedTurn(known.view, known.version);
  }

  /**
   * The turn as the log has it now; null when the adventure has no such turn. Followers of one
   * turn ask together (they open together and go quiet together): one read answers all of those
   * asking at once, so 1,000 followers of a turn cost one load of the adventure, not 1,000.
   */
  private lookup(adventureId: string, turnId: string): Promise<FinishedTurn | null> {
    const key = `${adventureId}:${turnId}`;
    let asking = this.asking.get(key);
    if (!asking) {
      asking = (async () => {
        const state = await this.adventures.get(adventureId);
        const view = await this.turns.outcome(adventureId, state, turnId);
        return view && { view, version: state.version };
      })().finally(() => this.asking.delete(key));
      this.asking.set(key, asking);
    }
    return asking;
  }
}

/** A turn the stream may follow: its outcome when the log already has one. */
export interface OpenedTurn {
  finished: FinishedTurn | null;
  /** Known queued from this process's projection, not the log: the stream is read first. */
  unverified?: boolean;
}

interface FinishedTurn {
  view: TurnView;
  version: number;
}

function finishedTurn(view: TurnView, version: number): FinishedTurn | null {
  if (view.status === 'queued' || view.status === 'running') return null;
  return { view, version };
}

function finalFrame({ view, version }: FinishedTurn): SseTurnFrame {
  if (view.status === 'stopped') return { event: 'stopped', data: { message: view.message ?? '' } };
  if (view.status === 'done') {
    return { event: 'done', data: { action: view.action, turnId: view.turnId, version } };
  }
  return {
    event: 'error',
    data: {
      code: view.code ?? 'internal',
      message: view.error ?? 'the turn did not finish',
      ...(view.status === 'cancelled' ? { cancelled: true } : {}),
    },
  };
}
