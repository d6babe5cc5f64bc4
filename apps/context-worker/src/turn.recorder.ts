// A turn's writes: the narration appended and announced (kept through an outage), a script's
// stop, a failure recorded until it is in, and the narration's tokens counted. Keyed by the
// turn, so a redelivered job, a retry after a crash or a second worker racing for the same turn
// can only ever record one outcome.
import { Injectable, Logger } from '@nestjs/common';
import { DailyTokenBudget } from '@chronicle/accounts';
import {
  decideTurnStep,
  scriptStreamFrames,
  TurnNotInFlightError,
  type AdventureState,
  type ModelCallUsage,
  type NarrationFailureCode,
  type TurnRun,
} from '@chronicle/adventure';
import { AdventureCommandHandler, deterministicEventId } from '@chronicle/adventure-store';
import { asDependencyUnavailable, describeError } from '@chronicle/platform';
import { inSpan } from '@chronicle/telemetry';
import { TurnStreamPublisher } from '@chronicle/turn-stream';
import { FinishedNarrationStore, type FinishedNarration } from './finished-narration.store';
import { NarratorLabel } from './model-client.provider';
import type { Fence } from './reply.stream';
import type { ContextScripts } from './turn-scripts';

/** The job attempt a turn's writes belong to (a narrate job's ids, fence and attempt). */
export interface TurnAttempt {
  adventureId: string;
  turnId: string;
  jobId: string;
  /** 1 on the first run, as BullMQ counts attempts (a stalled re-run keeps its number). */
  attempt: number;
  /**
   * This attempt's fencing token (the job's lock token: a worker that takes a stalled job over
   * gets a new one). Only the attempt holding the turn stream's fence writes to it.
   */
  fence: string;
}

/** Why a turn failed, as recorded in NarrationFailed and sent in the stream's `error` frame. */
export interface TurnFailure {
  code: NarrationFailureCode;
  message: string;
}

export type NarrateOutcome =
  | { status: 'narrated'; actionId: string; version: number }
  | { status: 'failed'; code: NarrationFailureCode; error: string }
  | { status: 'skipped'; reason: 'not-in-flight' | 'cancelled' | 'fenced' }
  /** onModelContext stopped the turn: no model call (the player action stays). */
  | { status: 'stopped'; message: string };

/**
 * The worker is shutting down mid-turn, or Postgres, Redis or the provider asked it to wait:
 * the job runs again after `delayMs` without spending an attempt (the turn is not at fault;
 * NARRATE_TURN_DEADLINE_MS bounds how long it may wait).
 */
export class TurnDeferredError extends Error {
  constructor(
    readonly turnId: string,
    readonly delayMs: number,
    cause: string,
  ) {
    super(`turn ${turnId} deferred for ${delayMs} ms: ${cause}`);
    this.name = 'TurnDeferredError';
  }
}

export const ACTOR = 'worker:context';

/** The workflow's view of a recording loop: only the backoff of FailureNotRecorded is read. */
const RECORDING: TurnRun = { attempt: 1, maxAttempts: 1, deadlineMs: 0, maxRequeues: 0 };

@Injectable()
export class TurnRecorder {
  private readonly logger = new Logger('NarrateTurn');

  constructor(
    private readonly adventures: AdventureCommandHandler,
    private readonly stream: TurnStreamPublisher,
    private readonly label: NarratorLabel,
    private readonly budget: DailyTokenBudget,
    private readonly finished: FinishedNarrationStore,
  ) {}

  /**
   * Appends a finished narration and ends the stream with it. While Postgres is unreachable the
   * narration is kept (see FinishedNarrationStore), unless this attempt was fenced out (the turn
   * is another attempt's now), and the job waits: the run after the outage records the same
   * narration without calling the model again.
   */
  async record(
    state: AdventureState,
    input: TurnAttempt,
    finished: FinishedNarration,
    fence: Fence,
    /** The narration came from the store (a run before an outage kept it): forgotten once in. */
    kept = false,
  ): Promise<NarrateOutcome> {
    const { adventureId, turnId } = input;
    const token = input.fence;
    const { actionId, text: narrationText, model, narrator } = finished.command.data;
    let handled: Awaited<ReturnType<AdventureCommandHandler['handle']>>;
    try {
      handled = await this.adventures.handle(
        adventureId,
        finished.command,
        { ...finished.meta, jobId: input.jobId, attempt: input.attempt },
        // Decided first on the projection this job loaded: the append at its version proves it
        // is still the head, so the common turn reads the stream once.
        { state },
      );
    } catch (error) {
      if (asDependencyUnavailable(error) && !fence.isOut) await this.finished.keep(finished);
      throw error;
    }
    const version = handled.state.version;
    // Side by side: the count never fails the turn, and the player need not wait for it.
    await Promise.all([
      handled.duplicate ? undefined : this.countTokens(handled.state, finished.usages),
      // The winner's script messages and notices, then its `done`, in one fenced write, even
      // when this attempt was fenced out after its append won: the stream then gets `reset` and
      // this attempt's whole prose first (see publishDone), then the frames, and `done` carries
      // the text onOutput made. A duplicate (another attempt's Narrated is the log's) publishes
      // nothing: its text is not the one recorded, and the winner, or the API reading the log,
      // ends the stream.
      handled.duplicate
        ? undefined
        : inSpan('stream done', { 'chronicle.turn_id': turnId }, () =>
            this.stream.publishDone(
              turnId,
              token,
              finished.prose,
              {
                action: { id: actionId, text: narrationText, type: 'ai' },
                turnId,
                version,
                narrator,
                model,
              },
              scriptStreamFrames(handled.events, handled.state.scripts),
            ),
          ),
      // Only a narration this run found kept is forgotten: a turn whose run found none has
      // nothing there (one kept by another attempt meanwhile is of a turn no longer in flight
      // once this append is in, so no run reads it again, and it expires with the turn's
      // deadline), and the common turn is spared a round trip.
      kept ? this.finished.forget(turnId) : undefined,
    ]);
    // The verdict is the decider's (the referee runs there, on the state appended to).
    const narrated = handled.events.find((event) => event.type === 'Narrated');
    this.logger.log({
      msg: 'narrated',
      ...finished.summary,
      ...(narrated?.type === 'Narrated' && {
        accepted: narrated.data.accepted.length,
        rejected: narrated.data.rejected.length,
      }),
      duplicate: handled.duplicate,
    });
    return { status: 'narrated', actionId, version };
  }

  /**
   * The run after an outage, with the narration an earlier run finished: no model call. The
   * claim resets the stream (it holds the earlier run's chunks), the prose goes out as one chunk
   * of this attempt, and the rest is an ordinary record.
   */
  async recordKept(
    state: AdventureState,
    input: TurnAttempt,
    kept: FinishedNarration,
    fence: Fence,
  ): Promise<NarrateOutcome> {
    this.logger.log({
      msg: 'recording the narration finished before the outage; the model is not called again',
      producedBy: kept.producedBy === input.fence ? 'this attempt' : 'an earlier run',
    });
    await this.stream.claim(input.turnId, input.fence, true);
    if (
      kept.prose &&
      !(await this.stream.publishFenced(
        input.turnId,
        input.fence,
        [{ event: 'chunk', data: { text: kept.prose } }],
        fence.nextBatch(),
      ))
    ) {
      fence.lost();
    }
    return this.record(state, input, kept, fence, true);
  }

  /** onModelContext stopped the turn: recorded with its effects, announced, no model call. */
  async stoppedByScript(
    input: TurnAttempt,
    scripts: ContextScripts,
    fence: Fence,
  ): Promise<NarrateOutcome> {
    const { adventureId, turnId } = input;
    const message = scripts.stopped?.message ?? '';
    const handled = await this.adventures.handle(
      adventureId,
      {
        type: 'StopTurnByScript',
        key: deterministicEventId(turnId, 'stopped-by-script'),
        data: {
          turnId,
          scriptId: scripts.stopped?.scriptId ?? '',
          message,
          effects: scripts.effects,
        },
      },
      { actor: ACTOR, causationId: turnId, jobId: input.jobId, attempt: input.attempt },
    );
    // Fenced like the chunks: only the attempt holding the stream ends it (a duplicate's stop is
    // the winner's to announce).
    if (!handled.duplicate) {
      const written = await this.stream.publishFenced(
        turnId,
        input.fence,
        [
          ...scriptStreamFrames(handled.events, handled.state.scripts),
          { event: 'stopped', data: { message } },
        ],
        fence.nextBatch(),
      );
      if (!written)
        this.logger.warn({ msg: 'another attempt claimed the turn; its stop is theirs' });
    }
    this.logger.log({ msg: 'a script stopped the turn', hook: 'context' });
    return { status: 'stopped', message };
  }

  /**
   * A final failure must reach the log, or the turn would stay in flight: tried again with
   * backoff while Postgres is unreachable, for as long as this job holds its lock (BullMQ renews
   * it while we wait). A worker shutting down hands the job back instead.
   */
  async recordFailureUntilRecorded(
    input: TurnAttempt,
    failure: TurnFailure & { attempts: number },
    signal: AbortSignal,
  ): Promise<void> {
    for (let tries = 1; ; tries++) {
      let delay: number;
      try {
        await this.recordFailure(input.adventureId, input.turnId, failure, failure.attempts);
        return;
      } catch (error) {
        if (!asDependencyUnavailable(error)) throw error;
        const [again] = decideTurnStep(RECORDING, { type: 'FailureNotRecorded', tries });
        delay = again.type === 'RecordFailureAgain' ? again.afterMs : 0;
        this.logger.warn({
          msg: 'could not record the failed turn yet; trying again',
          error: describeError(error),
          retryInMs: delay,
        });
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
      if (signal.aborted) {
        throw new TurnDeferredError(input.turnId, 0, 'the worker is shutting down');
      }
    }
  }

  /**
   * Records that the turn failed and tells the client; a turn that is no longer in flight is
   * left alone (returns false). Also called when BullMQ gives up on a job by itself (stalled too
   * often) and by the reconciler (a turn lost or past its deadline).
   */
  async recordFailure(
    adventureId: string,
    turnId: string,
    failure: TurnFailure,
    attempts: number,
  ): Promise<boolean> {
    try {
      await this.adventures.handle(
        adventureId,
        {
          type: 'RecordNarrationFailure',
          key: deterministicEventId(turnId, 'narration-failed'),
          data: {
            turnId,
            code: failure.code,
            error: failure.message,
            attempts: Math.max(1, attempts),
          },
        },
        { actor: ACTOR, causationId: turnId },
      );
    } catch (error) {
      if (error instanceof TurnNotInFlightError) return false;
      throw error;
    }
    // The log has the outcome; a client whose stream misses this frame reads it from there.
    await this.stream
      .publish(turnId, 'error', { code: failure.code, message: failure.message })
      .catch((error: unknown) =>
        this.logger.warn({ msg: "could not end the turn's stream", error: describeError(error) }),
      );
    this.logger.warn({
      msg: 'narration failed',
      code: failure.code,
      error: failure.message,
      attempts,
    });
    return true;
  }

  /**
   * Adds the narration's tokens to its owner's daily counter (see DailyTokenBudget: the log is
   * the truth, the counter a shortcut the API's budget check reads). Only a first append counts,
   * and a failure here costs the counter this narration, never the turn.
   */
  private async countTokens(state: AdventureState, usages: ModelCallUsage[]): Promise<void> {
    if (this.label.narrator === 'offline' || !state.ownerId) return;
    const ownerId = state.ownerId;
    await Promise.all(
      usages.map((usage) => this.budget.recordSpend(ownerId, usage, new Date())),
    ).catch((error: unknown) =>
      this.logger.warn({
        msg: "could not count the narration's tokens toward the daily budget",
        error: describeError(error),
      }),
    );
  }
}
