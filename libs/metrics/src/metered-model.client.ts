// The model client as every worker uses it, with its calls counted: durations, errors by
// stable code, tokens and cost by model. It also marks the two instants of a turn that only the
// model call sees — the request starting and the last byte arriving — on the turn being timed
// (see TurnTimer), so the processor observes POST → model request and last byte → done without
// the use case between them knowing about metrics.
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  modelErrorCode,
  type CompletionRequest,
  type CompletionResult,
  type Embedder,
  type Embeddings,
  type ModelClient,
  type ModelStreamEvent,
  type ModelUsage,
  type NarrationRequest,
} from '@chronicle/llm';
import { costOf, priceOf, type ModelPriceTable } from '@chronicle/platform';
import { ChronicleMetrics } from './chronicle-metrics';

/** One narrate job's instants, carried in AsyncLocalStorage from the processor to the client. */
interface TurnTiming {
  /** Epoch ms the API received the POST that started the turn; null: not known (old job). */
  requestedAt: number | null;
  /** Only a turn's first attempt measures POST → model request (a retry waited on purpose). */
  firstAttempt: boolean;
  modelRequestObserved: boolean;
  lastByteAt: number | null;
}

const turnTiming = new AsyncLocalStorage<TurnTiming>();

/** A turn outcome as the narrate use case answers it. */
export interface TimedOutcome {
  status: string;
  code?: string;
}

/**
 * Times one narrate job: `run` executes inside it; when it answers, the outcome is counted and,
 * when the model's last byte arrived, last byte → done observed. A job that throws (a retry, a
 * release, a deferral) has not ended its turn and observes nothing but what the client saw.
 */
export class TurnTimer {
  constructor(private readonly metrics: ChronicleMetrics) {}

  async time<T extends TimedOutcome>(
    job: { requestedAt: number | null; attempt: number },
    run: () => Promise<T>,
  ): Promise<T> {
    const timing: TurnTiming = {
      requestedAt: job.requestedAt,
      firstAttempt: job.attempt <= 1,
      modelRequestObserved: false,
      lastByteAt: null,
    };
    const outcome = await turnTiming.run(timing, run);
    this.metrics.turns.inc({ outcome: outcome.status });
    if (outcome.status === 'failed' && outcome.code) {
      this.metrics.narrationsFailed.inc({ code: outcome.code });
    }
    if (timing.lastByteAt !== null && outcome.status !== 'skipped') {
      this.metrics.turnFinish.observe((Date.now() - timing.lastByteAt) / 1000);
    }
    return outcome;
  }
}

type Purpose = NonNullable<CompletionRequest['purpose']> | 'narration' | 'embedding';

/** Counts one model call's end: its duration, and its tokens and cost or its error's code. */
class ModelCallMeter {
  constructor(
    private readonly metrics: ChronicleMetrics,
    private readonly prices: ModelPriceTable,
  ) {}

  finished(purpose: Purpose, started: number, model: string, usage: ModelUsage): void {
    this.metrics.modelRequestDuration.observe(
      { purpose, result: 'ok' },
      (Date.now() - started) / 1000,
    );
    const cached = Math.min(usage.cachedTokens, usage.promptTokens);
    const tokens = this.metrics.modelTokens;
    tokens.inc({ model, purpose, kind: 'prompt' }, usage.promptTokens);
    tokens.inc({ model, purpose, kind: 'cached' }, cached);
    tokens.inc({ model, purpose, kind: 'completion' }, usage.completionTokens);
    const price = priceOf(this.prices, model);
    if (price) this.metrics.modelCost.inc({ model, purpose }, costOf(price, usage));
  }

  failed(purpose: Purpose, started: number, error: unknown): void {
    this.metrics.modelRequestDuration.observe(
      { purpose, result: 'error' },
      (Date.now() - started) / 1000,
    );
    this.metrics.modelErrors.inc({ purpose, code: modelErrorCode(error) });
  }
}

export class MeteredModelClient implements ModelClient {
  private readonly meter: ModelCallMeter;

  constructor(
    private readonly inner: ModelClient,
    private readonly metrics: ChronicleMetrics,
    prices: ModelPriceTable,
  ) {
    this.meter = new ModelCallMeter(metrics, prices);
  }

  async *streamNarration(
    req: NarrationRequest,
    signal?: AbortSignal,
  ): AsyncIterable<ModelStreamEvent> {
    const started = Date.now();
    const timing = turnTiming.getStore();
    if (timing && timing.firstAttempt && !timing.modelRequestObserved && timing.requestedAt) {
      timing.modelRequestObserved = true;
      this.metrics.turnModelWait.observe(Math.max(0, started - timing.requestedAt) / 1000);
    }
    try {
      for await (const event of this.inner.streamNarration(req, signal)) {
        if (event.type === 'done') {
          if (timing) timing.lastByteAt = Date.now();
          this.meter.finished('narration', started, event.model, event.usage);
        }
        yield event;
      }
    } catch (error) {
      this.meter.failed('narration', started, error);
      throw error;
    }
  }

  async complete(req: CompletionRequest): Promise<CompletionResult> {
    const purpose: Purpose = req.purpose ?? 'other';
    const started = Date.now();
    try {
      const result = await this.inner.complete(req);
      this.meter.finished(purpose, started, result.model, result.usage);
      return result;
    } catch (error) {
      this.meter.failed(purpose, started, error);
      throw error;
    }
  }
}

/**
 * The embedder with its calls counted like the model's, under purpose `embedding`: a memory
 * written, a turn's retrieval and a context preview each embed, and their tokens are paid for.
 * One `embed` is one observation however many requests its batches took.
 */
export class MeteredEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions?: number;
  private readonly meter: ModelCallMeter;

  constructor(
    private readonly inner: Embedder,
    metrics: ChronicleMetrics,
    prices: ModelPriceTable,
  ) {
    this.model = inner.model;
    if (inner.dimensions !== undefined) this.dimensions = inner.dimensions;
    this.meter = new ModelCallMeter(metrics, prices);
  }

  async embed(texts: string[]): Promise<Embeddings> {
    // nothing to embed sends nothing: not a call
    if (texts.length === 0) return this.inner.embed(texts);
    const started = Date.now();
    try {
      const result = await this.inner.embed(texts);
      this.meter.finished('embedding', started, result.model, result.usage);
      return result;
    } catch (error) {
      this.meter.failed('embedding', started, error);
      throw error;
    }
  }
}

/**
 * MemoryStoreModule's wrappers that meter its model client and its embedder, for a process that
 * has the MetricsModule: `MemoryStoreModule.forRoot({ models, ...meteredMemoryCalls(prices) })`.
 */
export function meteredMemoryCalls(prices: ModelPriceTable) {
  return {
    wrapModelClient: {
      inject: [ChronicleMetrics],
      wrap: (client: ModelClient, metrics: ChronicleMetrics) =>
        new MeteredModelClient(client, metrics, prices),
    },
    wrapEmbedder: {
      inject: [ChronicleMetrics],
      wrap: (embedder: Embedder, metrics: ChronicleMetrics) =>
        new MeteredEmbedder(embedder, metrics, prices),
    },
  };
}
