import { Inject, Injectable, Logger } from '@nestjs/common';
import { DailyTokenBudget } from '@chronicle/accounts';
import {
  NARRATION_FAILURE_MESSAGES,
  narrativeForTurn,
  scriptStreamFrames,
  TurnNotInFlightError,
  type NarrationFailureCode,
  type AdventureCommand,
  type AdventureState,
  type Keyed,
  type ModelCallUsage,
  type ScriptEffects,
  type Usage,
} from '@chronicle/adventure';
import {
  AdventureCommandHandler,
  buildTurnContext,
  contextManifest,
  deterministicEventId,
} from '@chronicle/adventure-store';
import { MemoryRetrievalService } from '@chronicle/memory-store';
import { isModelError, ModelError, type ModelClient } from '@chronicle/llm';
import { parseReply, ProseStreamFilter, referee } from '@chronicle/narrative';
import {
  asDependencyUnavailable,
  ControlPlane,
  describeError,
  TurnCancelledSignal,
  type AppConfig,
} from '@chronicle/platform';
import { TurnStreamPublisher } from '@chronicle/turn-stream';
import { FAILURE_CODE_OF_KIND } from './narration-failure.code';
import { MODEL_CLIENT, NarratorLabel } from './model-client.provider';
import { WORKER_CONFIG } from './worker-config.token';
import { TurnScripts, type ContextScripts } from './turn-scripts';

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

/** Why a turn failed, as recorded in NarrationFailed and sent in the stream's `error` frame. */
export interface TurnFailure {
  code: NarrationFailureCode;
  message: string;
}

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

/**
 * Whether another attempt has claimed the turn's stream since this one did (this one lost its
 * job's lock: a blocked event loop, SIGSTOP). A fenced-out attempt writes nothing more to the
 * stream, but it keeps narrating: its Narrated may still be the one that wins the log (only one
 * can), and on a loaded machine the attempt that took over may lose its lock too.
 */
class Fence {
  private out = false;

  get isOut(): boolean {
    return this.out;
  }

  lost(): void {
    this.out = true;
  }
}

/** How long a turn waits for an unreachable Postgres or Redis before it runs again. */
const DEFER_MS = 2_000;
/** Backoff of a final failure that cannot be recorded yet: 0.5 s doubling up to 10 s. */
const RECORD_RETRY_FIRST_MS = 500;
const RECORD_RETRY_MAX_MS = 10_000;

const ONLY_BLOCK =
  'The model replied with only a state block and no story text. It will be tried again; if it keeps happening, raise the maximum output tokens or try another model.';

/** The model replied, but with nothing a player can read: worth another attempt. */
function onlyBlockError(): ModelError {
  return new ModelError({
    kind: 'bad_request',
    retryable: true,
    message: ONLY_BLOCK,
    playerMessage: ONLY_BLOCK,
  });
}

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

  private async narrate(
    state: AdventureState,
    input: NarrateTurnInput,
    signal: AbortSignal,
    fence: Fence,
  ): Promise<NarrateOutcome> {
    const { adventureId, turnId } = input;
    const token = input.fence;
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
    const [, { memories, built: native }] = await Promise.all([resetting, prompting]);
    const { settings } = state;
    // onModelContext on the built prompt, before the model call (spec §3.1).
    const scriptBase = await this.scripts.base(state);
    let contextScripts: ContextScripts | null = null;
    if (scriptBase?.scripts.some((s) => s.context.trim() !== '')) {
      contextScripts = await this.scripts.context(state, scriptBase, native);
      if (contextScripts.stopped) return this.stoppedByScript(input, contextScripts);
    }
    const built = contextScripts?.built ?? native;
    const model = built.report.settings.model;

    const started = Date.now();
    const prose = new ProseStreamFilter();
    const publishing: Promise<unknown>[] = [];
    let batch: { event: 'chunk' | 'reasoning'; data: { text: string } }[] | null = null;
    const publish = (event: 'chunk' | 'reasoning', text: string) => {
      // Not awaited one by one: the connection keeps the order, and the model stream is read
      // without waiting for Redis. What arrives within one tick of the event loop (a fast model
      // sends many deltas per network read) goes in one round trip; awaited together before the
      // outcome is recorded.
      if (!text) return;
      if (batch) {
        batch.push({ event, data: { text } });
        return;
      }
      const entries = (batch = [{ event, data: { text } }]);
      const written = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
        batch = null;
        if (fence.isOut) return;
        if (!(await this.stream.publishFenced(turnId, token, entries))) {
          fence.lost();
          this.logger.warn({ msg: 'another attempt claimed the turn; this one streams no more' });
        }
      });
      // Awaited below; a model stream that throws first must not leave it unhandled.
      written.catch(() => undefined);
      publishing.push(written);
    };
    let reply = '';
    let reasoning = '';
    let done: { usage: Usage; finishReason: string; model: string } | null = null;
    for await (const event of this.model.streamNarration(
      {
        system: built.system,
        story: built.story,
        mode: settings.apiMode,
        model,
        temperature: settings.temperature,
        maxOutputTokens: settings.maxOutputTokens,
        reasoningMaxTokens: settings.reasoningMaxTokens,
        // One adventure, one prompt cache: its turns share their prefix with each other only.
        cacheKey: adventureId,
        cacheBreakpoint: built.report.cache.breakpoint,
      },
      signal,
    )) {
      if (event.type === 'text') {
        reply += event.text;
        publish('chunk', prose.push(event.text));
      } else if (event.type === 'reasoning') {
        reasoning += event.text;
        publish('reasoning', event.text);
      } else {
        done = event;
      }
    }
    publish('chunk', prose.flush());
    await Promise.all(publishing);
    const latencyMs = Date.now() - started;
    if (!done)
      throw new ModelError({
        kind: 'cut',
        retryable: true,
        message: 'The model stream ended without finishing.',
      });
    if (signal.aborted) throw signal.reason;

    const parsed = parseReply(reply);
    const verdict = referee(narrativeForTurn(state), state.fields.canon, parsed.events);
    const actionId = deterministicEventId(turnId, 'narration-action');
    // onOutput on the prose only: the referee has read the raw reply, and what is stored and
    // shown is the script's text (raw_output keeps the model's bytes in the stream). An empty
    // generation reaches it too, with `info.emptyOutputReason`: a script may fill it.
    let narrationText = parsed.narration;
    let outputEffects: ScriptEffects | null = null;
    const outputBase = contextScripts?.after ?? scriptBase;
    if (outputBase?.scripts.some((s) => s.output.trim() !== '')) {
      const output = await this.scripts.output(
        state,
        outputBase,
        parsed.narration,
        contextScripts?.spentMs ?? null,
        { contextTokens: done.usage.promptTokens, finishReason: done.finishReason },
      );
      narrationText = output.text;
      outputEffects = output.effects;
    }
    if (narrationText.trim() === '') throw onlyBlockError();
    // The memories the prompt used are counted with the narration, and the query's embedding is
    // paid for with it (see RecordNarration); the memory pass that follows is `jobsAfter`'s.
    const retrievalUsage =
      memories?.usage && memories.usage.promptTokens + memories.usage.completionTokens > 0
        ? memories.usage
        : null;
    const narration: Keyed<AdventureCommand> = {
      type: 'RecordNarration',
      key: deterministicEventId(turnId, 'narrated'),
      data: {
        turnId,
        actionId,
        text: narrationText,
        accepted: verdict.accepted,
        rejected: [...parsed.rejections, ...verdict.rejected],
        reasoning: reasoning || null,
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
    const handled = await this.adventures.handle(
      adventureId,
      narration,
      {
        actor: ACTOR,
        causationId: turnId,
        jobId: input.jobId,
        attempt: input.attempt,
        model: done.model,
        narrator: this.label.narrator,
        usage: done.usage,
        latencyMs,
      },
      // Decided first on the projection this job loaded: the append at its version proves it is
      // still the head, so the common turn reads the stream once.
      { state },
    );
    const version = handled.state.version;
    // Side by side: the count never fails the turn, and the player need not wait for it.
    await Promise.all([
      handled.duplicate
        ? undefined
        : this.countTokens(handled.state, [
            { ...done.usage, model: done.model },
            ...(retrievalUsage ? [retrievalUsage] : []),
          ]),
      // The winner's script messages and notices, then its `done`, in one write, even when
      // this attempt was fenced out after its append won: the stream then gets `reset` and this
      // attempt's whole prose first, and the messages after it (see publishDone), and `done`
      // carries the text onOutput made. A duplicate (another attempt's Narrated is the log's)
      // publishes nothing: its text is not the one recorded, and the winner, or the API reading
      // the log, ends the stream.
      handled.duplicate
        ? undefined
        : this.stream.publishDone(
            turnId,
            token,
            parsed.narration,
            {
              action: { id: actionId, text: narrationText, type: 'ai' },
              turnId,
              version,
              narrator: this.label.narrator,
              model: done.model,
            },
            scriptStreamFrames(handled.events, handled.state.scripts),
          ),
    ]);
    this.logger.log({
      msg: 'narrated',
      narrator: this.label.narrator,
      model: done.model,
      latencyMs,
      usage: done.usage,
      finishReason: done.finishReason,
      accepted: verdict.accepted.length,
      rejected: parsed.rejections.length + verdict.rejected.length,
      duplicate: handled.duplicate,
    });
    return { status: 'narrated', actionId, version };
  }

  /** onModelContext stopped the turn: recorded with its effects, announced, no model call. */
  private async stoppedByScript(
    input: NarrateTurnInput,
    scripts: ContextScripts,
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
      const written = await this.stream.publishFenced(turnId, input.fence, [
        ...scriptStreamFrames(handled.events, handled.state.scripts),
        { event: 'stopped', data: { message } },
      ]);
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

/**
 * The code and message of a final failure: a model error's player-facing message (the
 * operator's details stay in the log), the code's own for anything else.
 */
export function failureOf(error: unknown): TurnFailure {
  if (isModelError(error)) {
    return { code: FAILURE_CODE_OF_KIND[error.kind], message: error.playerMessage };
  }
  return { code: 'internal', message: NARRATION_FAILURE_MESSAGES.internal };
}
