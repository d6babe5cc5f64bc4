/* eslint-disable max-lines -- a turn's steps (prompt, reply, record) and the failure path that classifies what they throw (retry, defer, release, record) stay in one class, so each error is read beside the step that raises it; the model stream is apart in reply.stream.ts */
import { Inject, Injectable, Logger } from '@nestjs/common';
import { DailyTokenBudget } from '@chronicle/accounts';
import {
  NARRATION_FAILURE_MESSAGES,
  narrativeForTurn,
  outputScriptChangedText,
  scriptStreamFrames,
  TurnNotInFlightError,
  type NarrationFailureCode,
  type AdventureState,
  type Keyed,
  type ModelCallUsage,
  type RecordNarration,
  type ScriptEffects,
} from '@chronicle/adventure';
import {
  AdventureCommandHandler,
  buildTurnContext,
  contextManifest,
  deterministicEventId,
  type ScriptHookBase,
  playerTextOfTurn,
} from '@chronicle/adventure-store';
import { MemoryRetrievalService } from '@chronicle/memory-store';
import { isModelError, type ModelClient } from '@chronicle/llm';
import { parseReply, referee } from '@chronicle/narrative';
import {
  asDependencyUnavailable,
  ControlPlane,
  describeError,
  TurnCancelledSignal,
  type AppConfig,
} from '@chronicle/platform';
import { TurnStreamPublisher } from '@chronicle/turn-stream';
import { failureOf, onlyBlockError, type TurnFailure } from './narration-failure.code';
import { Fence, streamReply } from './reply.stream';
import { MODEL_CLIENT, NarratorLabel } from './model-client.provider';
import { WORKER_CONFIG } from './worker-config.token';
import { TurnScripts, type ContextScripts } from './turn-scripts';
import { providerPauseMs } from './narrate.admission';
import { FinishedNarrationStore, type FinishedNarration } from './finished-narration.store';

export interface NarrateTurnInput {
  adventureId: string;
  turnId: string;
  jobId: string;
  /** 1 on the first run, as BullMQ counts attempts (a stalled re-run keeps its number). */
  attempt: number;
  /** The attempts this job has; the last one records NarrationFailed instead of retrying. */
  maxAttempts: number;
  /**
   * This attempt's fencing token (the job's lock token: a worker that takes a stalled job over
   * gets a new one). Only the attempt holding the turn stream's fence writes to it.
   */
  fence: string;
}

export type NarrateOutcome =
  | { status: 'narrated'; actionId: string; version: number }
  | { status: 'failed'; code: NarrationFailureCode; error: string }
  | { status: 'skipped'; reason: 'not-in-flight' | 'cancelled' | 'fenced' }
  /** onModelContext stopped the turn: no model call (the player action stays). */
  | { status: 'stopped'; message: string };

/**
 * The worker is shutting down mid-turn: the job goes back to the queue for another worker,
 * without spending an attempt.
 */
export class TurnReleasedError extends Error {
  constructor(readonly turnId: string) {
    super(`turn ${turnId} was released: the worker is shutting down`);
    this.name = 'TurnReleasedError';
  }
}

/**
 * Postgres or Redis is unreachable: the job waits `delayMs` and runs again, without spending an
 * attempt (the turn is not at fault; NARRATE_TURN_DEADLINE_MS bounds how long it may wait).
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

/** How long a turn waits for an unreachable Postgres or Redis before it runs again. */
const DEFER_MS = 2_000;
/** Backoff of a final failure that cannot be recorded yet: 0.5 s doubling up to 10 s. */
const RECORD_RETRY_FIRST_MS = 500;
const RECORD_RETRY_MAX_MS = 10_000;

const ACTOR = 'worker:context';

/**
 * The worker's half of a turn (see docs/ARCHITECTURE.md): one narrate job, from the projection to the
 * Narrated event. Everything it writes is keyed by the turn, so a redelivered job, a retry after
 * a crash or a second worker racing for the same turn can only ever record one outcome.
 */
@Injectable()
export class NarrateTurnUseCase {
  private readonly logger = new Logger('NarrateTurn');

  constructor(
    private readonly adventures: AdventureCommandHandler,
    private readonly stream: TurnStreamPublisher,
    private readonly controlPlane: ControlPlane,
    private readonly memories: MemoryRetrievalService,
    @Inject(MODEL_CLIENT) private readonly model: ModelClient,
    private readonly label: NarratorLabel,
    @Inject(WORKER_CONFIG) private readonly config: AppConfig,
    private readonly budget: DailyTokenBudget,
    private readonly scripts: TurnScripts,
    private readonly finished: FinishedNarrationStore,
  ) {}

  async execute(input: NarrateTurnInput): Promise<NarrateOutcome> {
    const { adventureId, turnId } = input;
    // Registered before anything is read, so a cancel that arrives while the projection loads
    // still reaches the model call.
    const turn = this.controlPlane.registerTurn(turnId);
    const fence = new Fence();
    try {
      const state = await this.adventures.load(adventureId);
      if (!state || state.inFlight?.turnId !== turnId) {
        this.logger.log({ msg: 'turn is not in flight; nothing to do' });
        return { status: 'skipped', reason: 'not-in-flight' };
      }
      return await this.narrate(state, input, turn.signal, fence);
    } catch (error) {
      return await this.onError(error, input, turn.signal, fence);
    } finally {
      turn.release();
    }
  }

  // eslint-disable-next-line max-lines-per-function -- a turn's steps in their order (kept reply, budget, prompt, onModelContext, model, referee, onOutput, the command): each feeds the next, so a split would only pass a dozen locals between methods; the stream and the record are apart already
  private async narrate(
    state: AdventureState,
    input: NarrateTurnInput,
    signal: AbortSignal,
    fence: Fence,
  ): Promise<NarrateOutcome> {
    const { turnId } = input;
    const token = input.fence;
    // A narration this turn finished before an outage kept it from the log: recorded as it is.
    const kept = await this.finished.find(turnId, state.version);
    if (kept) return this.recordKept(state, input, kept, fence);
    const overBudget = await this.budgetSpent(state);
    if (overBudget) return this.failForBudget(input, overBudget, signal);
    // Claiming the stream's fence and building the prompt go side by side. The claim writes
    // `reset` (whatever an earlier attempt streamed is void) before any chunk of this attempt
    // when there was an earlier one or the stream holds output (Redis's to say, in one script).
    const resetting = this.stream.claim(turnId, token, input.attempt > 1);
    const prompting = this.memories.retrieve(state).then(async (memories) => ({
      memories,
      built: await buildTurnContext(this.adventures, state, {
        defaultModel: this.config.modelName,
        memories,
      }),
    }));
    // What the player wrote this turn, read beside them: an event it carries is theirs, never
    // the model's report (the referee's `playerText`).
    const [, { memories, built: native }, playerText] = await Promise.all([
      resetting,
      prompting,
      playerTextOfTurn(this.adventures, state),
    ]);
    // onModelContext on the built prompt, before the model call: a script may change the prompt
    // or stop the turn before it costs a model call.
    const scriptBase = await this.scripts.base(state);
    let contextScripts: ContextScripts | null = null;
    if (scriptBase?.scripts.some((s) => s.context.trim() !== '')) {
      contextScripts = await this.scripts.context(state, scriptBase, native);
      if (contextScripts.stopped) return this.stoppedByScript(input, contextScripts, fence);
    }
    const built = contextScripts?.built ?? native;

    const streamed = await streamReply(
      { model: this.model, stream: this.stream, logger: this.logger },
      state.settings,
      built,
      { adventureId: input.adventureId, turnId, token },
      signal,
      fence,
    );
    const { done, latencyMs } = streamed;
    const parsed = parseReply(streamed.reply);
    const verdict = referee(narrativeForTurn(state), state.fields.canon, parsed.events, {
      playerText,
    });
    // onOutput on the prose only: the referee has read the raw reply, and what is stored and
    // shown is the script's text (raw_output keeps the model's bytes in the stream). An empty
    // generation reaches it too, with `info.emptyOutputReason`: a script may fill it.
    const { text: narrationText, effects: outputEffects } = await this.onOutput(
      state,
      contextScripts?.after ?? scriptBase,
      parsed.narration,
      contextScripts?.spentMs ?? null,
      { contextTokens: done.usage.promptTokens, finishReason: done.finishReason },
    );
    // A reply with no prose is a failed attempt, unless an Output hook chose the blank text.
    if (narrationText.trim() === '' && !outputScriptChangedText(outputEffects ?? undefined)) {
      throw onlyBlockError();
    }
    // The memories the prompt used are counted with the narration, and the query's embedding is
    // paid for with it (see RecordNarration); the memory pass that follows is `jobsAfter`'s.
    const retrievalUsage =
      memories?.usage && memories.usage.promptTokens + memories.usage.completionTokens > 0
        ? memories.usage
        : null;
    const narration: Keyed<RecordNarration> = {
      type: 'RecordNarration',
      key: deterministicEventId(turnId, 'narrated'),
      data: {
        turnId,
        actionId: deterministicEventId(turnId, 'narration-action'),
        text: narrationText,
        accepted: verdict.accepted,
        rejected: [...parsed.rejections, ...verdict.rejected],
        reasoning: streamed.reasoning || null,
        usage: {
          ...done.usage,
          model: done.model,
          // A Context rewrite gave up the prefix cache: what it cost, beside what was served.
          ...(contextScripts?.cacheLossTokens
            ? { scriptCacheLossTokens: contextScripts.cacheLossTokens }
            : {}),
        },
        model: done.model,
        narrator: this.label.narrator,
        finishReason: done.finishReason,
        contextManifest: contextManifest(built),
        latencyMs,
        memoriesUsed: memories?.used.map((memory) => memory.id) ?? [],
        retrievalUsage,
        // The scripts' effects commit once, with Narrated: a redelivered job that reran the
        // hooks finds Narrated stored and appends none of its own.
        ...(contextScripts || outputEffects
          ? {
              scripts: {
                ...(contextScripts ? { context: contextScripts.effects } : {}),
                ...(outputEffects ? { output: outputEffects } : {}),
              },
            }
          : {}),
      },
    };
    return this.record(
      state,
      input,
      {
        turnId,
        version: state.version,
        producedBy: token,
        command: narration,
        meta: {
          actor: ACTOR,
          causationId: turnId,
          model: done.model,
          narrator: this.label.narrator,
          usage: done.usage,
          latencyMs,
        },
        prose: parsed.narration,
        usages: [{ ...done.usage, model: done.model }, ...(retrievalUsage ? [retrievalUsage] : [])],
        summary: {
          narrator: this.label.narrator,
          model: done.model,
          latencyMs,
          usage: done.usage,
          finishReason: done.finishReason,
          accepted: verdict.accepted.length,
          rejected: parsed.rejections.length + verdict.rejected.length,
        },
      },
      fence,
    );
  }

  /**
   * Appends a finished narration and ends the stream with it. While Postgres is unreachable the
   * narration is kept (see FinishedNarrationStore), unless this attempt was fenced out (the turn
   * is another attempt's now), and the job waits: the run after the outage records the same
   * narration without calling the model again.
   */
  private async record(
    state: AdventureState,
    input: NarrateTurnInput,
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
        : this.stream.publishDone(
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
      // Only a narration this run found kept is forgotten: a turn whose run found none has
      // nothing there (one kept by another attempt meanwhile is of a turn no longer in flight
      // once this append is in, so no run reads it again, and it expires with the turn's
      // deadline), and the common turn is spared a round trip.
      kept ? this.finished.forget(turnId) : undefined,
    ]);
    this.logger.log({ msg: 'narrated', ...finished.summary, duplicate: handled.duplicate });
    return { status: 'narrated', actionId, version };
  }

  /**
   * The run after an outage, with the narration an earlier run finished: no model call. The
   * claim resets the stream (it holds the earlier run's chunks), the prose goes out as one chunk
   * of this attempt, and the rest is an ordinary record.
   */
  private async recordKept(
    state: AdventureState,
    input: NarrateTurnInput,
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

  /** The onOutput hooks over the prose, when any script has one; else the prose as it is. */
  private async onOutput(
    state: AdventureState,
    base: ScriptHookBase | null,
    prose: string,
    /** The turn's script time so far; null when no Context hook ran (then onInput's is read). */
    spentMs: number | null,
    reply: { contextTokens: number; finishReason: string },
  ): Promise<{ text: string; effects: ScriptEffects | null }> {
    if (!base?.scripts.some((s) => s.output.trim() !== '')) return { text: prose, effects: null };
    return this.scripts.output(state, base, prose, spentMs, reply);
  }

  /** onModelContext stopped the turn: recorded with its effects, announced, no model call. */
  private async stoppedByScript(
    input: NarrateTurnInput,
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

  private async onError(
    error: unknown,
    input: NarrateTurnInput,
    signal: AbortSignal,
    fence: Fence,
  ): Promise<NarrateOutcome> {
    if (error instanceof TurnNotInFlightError || signal.reason instanceof TurnCancelledSignal) {
      // Cancelled (or finished by someone else) while we worked: the API has recorded and
      // announced the outcome.
      this.logger.log({ msg: 'turn was cancelled or finished elsewhere; stopping' });
      return { status: 'skipped', reason: 'cancelled' };
    }
    if (signal.aborted) throw new TurnReleasedError(input.turnId);
    if (fence.isOut) {
      // This attempt lost its job's lock and another has the turn now: a failure here is that
      // one's to handle (retry or record), not this one's.
      this.logger.warn({
        msg: 'a fenced-out attempt failed; the turn is left to the one that claimed it',
        error: describeError(error),
      });
      return { status: 'skipped', reason: 'fenced' };
    }
    // A 429 paused the provider's narrations on every worker (see narrate.admission.ts): this
    // turn waits with them, spending no attempt, rather than retrying on its own.
    const pauseMs = providerPauseMs(error);
    if (pauseMs !== null) {
      throw new TurnDeferredError(input.turnId, pauseMs, 'the model provider asked to wait (429)');
    }
    const unavailable = asDependencyUnavailable(error);
    if (unavailable) {
      this.logger.warn({
        msg: 'a dependency is unreachable; the turn waits',
        error: unavailable.message,
      });
      throw new TurnDeferredError(input.turnId, DEFER_MS, unavailable.message);
    }

    const retryable = isModelError(error) ? error.retryable : true;
    const lastAttempt = input.attempt >= input.maxAttempts;
    if (retryable && !lastAttempt) {
      this.logger.warn({
        msg: 'narration attempt failed; will retry',
        error: describeError(error),
        ...(isModelError(error) && { kind: error.kind, retryAfterMs: error.retryAfterMs }),
      });
      throw error;
    }
    if (!isModelError(error)) {
      this.logger.error({ msg: 'narration failed unexpectedly', error: describeError(error) });
    } else {
      // The operator's words (the endpoint, the provider's own) go to the log; the log of
      // events and the player get the player's.
      this.logger.warn({ msg: 'narration failed', kind: error.kind, error: error.message });
    }
    const failure = failureOf(error);
    await this.recordFailureUntilRecorded(input, failure, signal);
    return { status: 'failed', code: failure.code, error: failure.message };
  }

  /**
   * A final failure must reach the log, or the turn would stay in flight: tried again with
   * backoff while Postgres is unreachable, for as long as this job holds its lock (BullMQ renews
   * it while we wait). A worker shutting down hands the job back instead.
   */
  private async recordFailureUntilRecorded(
    input: NarrateTurnInput,
    failure: TurnFailure,
    signal: AbortSignal,
  ): Promise<void> {
    for (let delay = RECORD_RETRY_FIRST_MS; ; delay = Math.min(delay * 2, RECORD_RETRY_MAX_MS)) {
      try {
        await this.recordFailure(input.adventureId, input.turnId, failure, input.attempt);
        return;
      } catch (error) {
        if (!asDependencyUnavailable(error)) throw error;
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
      if (signal.aborted) throw new TurnReleasedError(input.turnId);
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
   * Whether the owner's daily token budget is spent, asked before the model is called: the
   * API's check at the POST may be stale by the time the job runs (the owner's turns on other
   * adventures, memory passes). A narration once started is never cut short for money.
   */
  private async budgetSpent(state: AdventureState): Promise<string | null> {
    if (this.label.narrator === 'offline' || !state.ownerId) return null;
    const spent = await this.budget.spentForOwner(
      state.ownerId,
      this.config.dailyTokenBudget,
      new Date(),
    );
    return spent?.message ?? null;
  }

  /** Ends the turn as `budget`: no model call, no retry (the budget resets at midnight UTC). */
  private async failForBudget(
    input: NarrateTurnInput,
    detail: string,
    signal: AbortSignal,
  ): Promise<NarrateOutcome> {
    this.logger.warn({
      msg: 'the owner is over the daily token budget; turn not narrated',
      detail,
    });
    const failure = { code: 'budget' as const, message: NARRATION_FAILURE_MESSAGES.budget };
    await this.recordFailureUntilRecorded(input, failure, signal);
    return { status: 'failed', code: failure.code, error: failure.message };
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
