import { Inject, Injectable, Logger } from '@nestjs/common';
import { DailyTokenBudget } from '@chronicle/accounts';
import {
  narrativeForTurn,
  TurnNotInFlightError,
  type AdventureCommand,
  type AdventureState,
  type Keyed,
  type ModelCallUsage,
  type Usage,
} from '@chronicle/adventure';
import {
  AdventureCommandHandler,
  buildTurnContext,
  contextManifest,
  deterministicEventId,
} from '@chronicle/adventure-store';
import { isModelError, ModelError, type ModelClient } from '@chronicle/llm';
import { parseReply, referee } from '@chronicle/narrative';
import {
  ControlPlane,
  describeError,
  TurnCancelledSignal,
  type AppConfig,
} from '@chronicle/platform';
import { TURN_STREAM_REDIS, TurnStreamPublisher } from '@chronicle/turn-stream';
import type Redis from 'ioredis';
import { MemoryRetrieval } from './memory-retrieval';
import { MODEL_CLIENT, NarratorLabel } from './model-client.provider';
import { ProseStreamFilter } from './prose-stream.filter';
import { WORKER_CONFIG } from './worker-config.token';

export interface NarrateTurnInput {
  adventureId: string;
  turnId: string;
  jobId: string;
  /** 1 on the first run, as BullMQ counts attempts (a stalled re-run keeps its number). */
  attempt: number;
  /** The attempts this job has; the last one records NarrationFailed instead of retrying. */
  maxAttempts: number;
}

export type NarrateOutcome =
  | { status: 'narrated'; actionId: string; version: number }
  | { status: 'failed'; error: string }
  | { status: 'skipped'; reason: 'not-in-flight' | 'cancelled' };

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
const UNEXPECTED_FAILURE =
  'The narration failed because of an internal error; the turn was not saved. Try again.';

/**
 * Step 2 of the turn (see notes/turn-design.md): one narrate job, from the projection to the
 * Narrated event. Everything it writes is keyed by the turn, so a redelivered job, a retry after
 * a crash or a second worker racing for the same turn can only ever record one outcome.
 */
@Injectable()
export class NarrateTurnUseCase {
  private readonly logger = new Logger('NarrateTurn');

  constructor(
    private readonly adventures: AdventureCommandHandler,
    private readonly stream: TurnStreamPublisher,
    @Inject(TURN_STREAM_REDIS) private readonly redis: Redis,
    private readonly controlPlane: ControlPlane,
    private readonly memories: MemoryRetrieval,
    @Inject(MODEL_CLIENT) private readonly model: ModelClient,
    private readonly label: NarratorLabel,
    @Inject(WORKER_CONFIG) private readonly config: AppConfig,
    private readonly budget: DailyTokenBudget,
  ) {}

  async execute(input: NarrateTurnInput): Promise<NarrateOutcome> {
    const { adventureId, turnId } = input;
    // Registered before anything is read, so a cancel that arrives while the projection loads
    // still reaches the model call.
    const turn = this.controlPlane.registerTurn(turnId);
    try {
      const state = await this.adventures.load(adventureId);
      if (!state || state.inFlight?.turnId !== turnId) {
        this.logger.log({ msg: 'turn is not in flight; nothing to do' });
        return { status: 'skipped', reason: 'not-in-flight' };
      }
      return await this.narrate(state, input, turn.signal);
    } catch (error) {
      return await this.onError(error, input, turn.signal);
    } finally {
      turn.release();
    }
  }

  private async narrate(
    state: AdventureState,
    input: NarrateTurnInput,
    signal: AbortSignal,
  ): Promise<NarrateOutcome> {
    const { adventureId, turnId } = input;
    // Whether this is a re-run is Redis's to say, the prompt the log's: asked side by side, and
    // the `reset` (whatever an earlier attempt streamed is void) is written before any chunk.
    const resetting = (
      input.attempt > 1 ? Promise.resolve(true) : this.streamHasOutput(turnId)
    ).then(async (rerun) => {
      if (rerun) await this.stream.publish(turnId, 'reset', {});
    });
    const prompting = this.memories.retrieve(state).then(async (memories) => ({
      memories,
      built: await buildTurnContext(this.adventures, state, {
        defaultModel: this.config.modelName,
        memories,
      }),
    }));
    const [, { memories, built }] = await Promise.all([resetting, prompting]);
    const { settings } = state;
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
      publishing.push(
        new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
          batch = null;
          return this.stream.publishMany(turnId, entries);
        }),
      );
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
    if (parsed.onlyBlock) throw onlyBlockError();
    const verdict = referee(narrativeForTurn(state), state.fields.canon, parsed.events);
    const actionId = deterministicEventId(turnId, 'narration-action');
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
        text: parsed.narration,
        accepted: verdict.accepted,
        rejected: [...parsed.rejections, ...verdict.rejected],
        reasoning: reasoning || null,
        usage: { ...done.usage, model: done.model },
        model: done.model,
        narrator: this.label.narrator,
        finishReason: done.finishReason,
        contextManifest: contextManifest(built),
        latencyMs,
        memoriesUsed: memories?.used.map((memory) => memory.id) ?? [],
        retrievalUsage,
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
      this.stream.publish(turnId, 'done', {
        action: { id: actionId, text: parsed.narration, type: 'ai' },
        turnId,
        version,
        narrator: this.label.narrator,
        model: done.model,
      }),
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

  private async onError(
    error: unknown,
    input: NarrateTurnInput,
    signal: AbortSignal,
  ): Promise<NarrateOutcome> {
    if (error instanceof TurnNotInFlightError || signal.reason instanceof TurnCancelledSignal) {
      // Cancelled (or finished by someone else) while we worked: the API has recorded and
      // announced the outcome.
      this.logger.log({ msg: 'turn was cancelled or finished elsewhere; stopping' });
      return { status: 'skipped', reason: 'cancelled' };
    }
    if (signal.aborted) throw new TurnReleasedError(input.turnId);

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
    const message = isModelError(error) ? error.playerMessage : UNEXPECTED_FAILURE;
    await this.recordFailure(input.adventureId, input.turnId, message, input.attempt);
    return { status: 'failed', error: message };
  }

  /**
   * Records that the turn failed and tells the client; a turn that is no longer in flight is
   * left alone. Also called when BullMQ gives up on a job by itself (stalled too often).
   */
  async recordFailure(
    adventureId: string,
    turnId: string,
    message: string,
    attempts: number,
  ): Promise<boolean> {
    try {
      await this.adventures.handle(
        adventureId,
        {
          type: 'RecordNarrationFailure',
          key: deterministicEventId(turnId, 'narration-failed'),
          data: { turnId, error: message, attempts: Math.max(1, attempts) },
        },
        { actor: ACTOR, causationId: turnId },
      );
    } catch (error) {
      if (error instanceof TurnNotInFlightError) return false;
      throw error;
    }
    await this.stream.publish(turnId, 'error', { message });
    this.logger.warn({ msg: 'narration failed', error: message, attempts });
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

  /** True when an earlier run of this turn already streamed something past the player's entry. */
  private async streamHasOutput(turnId: string): Promise<boolean> {
    const last = (await this.redis.xrevrange(this.stream.key(turnId), '+', '-', 'COUNT', 1)) as [
      string,
      string[],
    ][];
    if (last.length === 0) return false;
    const fields = last[0][1];
    const event = fields[fields.indexOf('event') + 1];
    return event !== 'player';
  }
}
