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
  type ModelClient,
  type ModelStreamEvent,
  type ModelUsage,
  type NarrationRequest,
} from '@chronicle/llm';
import { costOf, priceOf, type ModelPriceTable } from '@chronicle/platform';
import type { ChronicleMetrics } from './chronicle-metrics';

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

type Purpose = NonNullable<CompletionRequest['purpose']> | 'narration';

export class MeteredModelClient implements ModelClient {
  constructor(
    private readonly inner: ModelClient,
    private readonly metrics: ChronicleMetrics,
    private readonly prices: ModelPriceTable,
  ) {}

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
          this.finished('narration', started, event.model, event.usage);
        }
        yield event;
      }
    } catch (error) {
      this.failed('narration', started, error);
      throw error;
    }
  }

  async complete(req: CompletionRequest): Promise<CompletionResult> {
    const purpose: Purpose = req.purpose ?? 'other';
    const started = Date.now();
    try {
      const result = await this.inner.complete(req);
      this.finished(purpose, started, result.model, result.usage);
      return result;
    } catch (error) {
      this.failed(purpose, started, error);
      throw error;
    }
  }

  private finished(purpose: Purpose, started: number, model: string, usage: ModelUsage): void {
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

  private failed(purpose: Purpose, started: number, error: unknown): void {
    this.metrics.modelRequestDuration.observe(
      { purpose, result: 'error' },
      (Date.now() - started) / 1000,
    );
    this.metrics.modelErrors.inc({ purpose, code: modelErrorCode(error) });
  }
}
