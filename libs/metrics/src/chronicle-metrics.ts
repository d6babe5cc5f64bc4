// Every metric Chronicle exports, defined once (prom-client wrapped here and nowhere else). Each
// process makes one ChronicleMetrics for its app: it registers the metrics that app moves, the
// Node process defaults and an `app` label, and the process's few seams record into it (see
// the README's "Metrics" and docs/grafana-dashboard.json, whose names a spec checks against
// these).
//
// Labels are bounded sets: queue names, job results, failure codes, models the installation
// runs, route templates. Never an adventure, turn, user or job id.
import type { Job, Worker } from 'bullmq';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export type MetricsApp = 'api' | 'context-worker' | 'memory-worker';
export const METRICS_APPS: readonly MetricsApp[] = ['api', 'context-worker', 'memory-worker'];

const WORKERS: readonly MetricsApp[] = ['context-worker', 'memory-worker'];
/** Every process that calls the model or the embedder (the API embeds for a context preview). */
const MODEL_CALLERS: readonly MetricsApp[] = ['api', ...WORKERS];

/** Milliseconds to a few minutes: a turn's wait for its model request, queueing included. */
const WAIT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** The work between the model's last byte and the turn's end: an append and a publish. */
const FINISH_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const MODEL_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 120];
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** One queue as a scrape reads it: its jobs per state and its oldest waiting job. */
export interface QueueSnapshot {
  queue: string;
  counts: Record<string, number>;
  /** Age of the oldest job waiting to start; null when none waits. */
  oldestWaitingSeconds: number | null;
}

export class ChronicleMetrics {
  readonly registry = new Registry();

  // ---- a turn's path (context worker) ----
  /** POST of the action (the API received it) → the model request starts. First attempts. */
  readonly turnModelWait: Histogram;
  /** The model's last byte → the turn's outcome recorded and its stream ended. */
  readonly turnFinish: Histogram;
  readonly turns: Counter<'outcome'>;
  /** NarrationFailed appended by this process, by its stable code. */
  readonly narrationsFailed: Counter<'code'>;

  // ---- the model (both workers) ----
  readonly modelRequestDuration: Histogram<'purpose' | 'result'>;
  /** Every failed model call (each attempt), by the NarrationFailed code it maps to. */
  readonly modelErrors: Counter<'purpose' | 'code'>;
  readonly modelTokens: Counter<'model' | 'purpose' | 'kind'>;
  readonly modelCost: Counter<'model' | 'purpose'>;

  // ---- queues ----
  /** Worker-side job events: completed, retried, failed (for good), stalled. */
  readonly jobs: Counter<'queue' | 'result'>;
  /** Read from Redis at scrape time (the API's: it is up when the workers are not). */
  readonly queueJobs: Gauge<'queue' | 'state'>;
  readonly queueOldestWaiting: Gauge<'queue'>;

  // ---- reconciler (context worker) ----
  readonly reconcilerPasses: Counter<'ran'>;
  readonly reconcilerActions: Counter<'action'>;

  // ---- API ----
  readonly sseConnections: Gauge;
  readonly httpRequestDuration: Histogram<'method' | 'route' | 'status'>;

  private queueSource: (() => Promise<QueueSnapshot[]>) | undefined;
  private sseSource: (() => number) | undefined;
  private queueRead: Promise<void> | undefined;

  // eslint-disable-next-line max-lines-per-function -- the catalog: one definition per metric, read as a list
  constructor(
    readonly app: MetricsApp,
    options: { processDefaults?: boolean } = {},
  ) {
    this.registry.setDefaultLabels({ app });
    const on = (...apps: readonly MetricsApp[]) => (apps.includes(app) ? [this.registry] : []);

    this.turnModelWait = new Histogram({
      name: 'chronicle_turn_model_wait_seconds',
      help: "From the API receiving a turn's POST to its first model request starting (queueing, context building and scripts included)",
      buckets: WAIT_BUCKETS,
      registers: on('context-worker'),
    });
    this.turnFinish = new Histogram({
      name: 'chronicle_turn_finish_seconds',
      help: "From the model's last byte to the turn's outcome recorded and its stream ended",
      buckets: FINISH_BUCKETS,
      registers: on('context-worker'),
    });
    this.turns = new Counter({
      name: 'chronicle_turns_total',
      help: 'Narrate jobs that reached an outcome: narrated, failed, stopped (by a script), skipped',
      labelNames: ['outcome'],
      registers: on('context-worker'),
    });
    this.narrationsFailed = new Counter({
      name: 'chronicle_narrations_failed_total',
      help: 'NarrationFailed events this process appended, by stable code',
      labelNames: ['code'],
      registers: on('context-worker'),
    });
    this.modelRequestDuration = new Histogram({
      name: 'chronicle_model_request_duration_seconds',
      help: 'A model call from its request to its last byte, by purpose (narration, memory, summary, embedding, other) and result (ok, error)',
      labelNames: ['purpose', 'result'],
      buckets: MODEL_BUCKETS,
      registers: on(...MODEL_CALLERS),
    });
    this.modelErrors = new Counter({
      name: 'chronicle_model_errors_total',
      help: 'Failed model calls (every attempt), by purpose and the NarrationFailed code they map to',
      labelNames: ['purpose', 'code'],
      registers: on(...MODEL_CALLERS),
    });
    this.modelTokens = new Counter({
      name: 'chronicle_model_tokens_total',
      help: 'Tokens the model reported, by model, purpose and kind (prompt, cached: prompt tokens served from the cache, completion)',
      labelNames: ['model', 'purpose', 'kind'],
      registers: on(...MODEL_CALLERS),
    });
    this.modelCost = new Counter({
      name: 'chronicle_model_cost_usd_total',
      help: 'What the model calls cost in US dollars at the price table in force (MODEL_PRICES, MODEL_PRICES_FILE); models it does not price add nothing',
      labelNames: ['model', 'purpose'],
      registers: on(...MODEL_CALLERS),
    });
    this.jobs = new Counter({
      name: 'chronicle_jobs_total',
      help: 'Job events seen by this worker: completed, retried (an attempt failed, another follows), failed (for good), stalled (its worker lost the lock; taken over)',
      labelNames: ['queue', 'result'],
      registers: on(...WORKERS),
    });
    this.queueJobs = new Gauge({
      name: 'chronicle_queue_jobs',
      help: 'Jobs per queue and state, read from Redis when scraped',
      labelNames: ['queue', 'state'],
      registers: on('api'),
      collect: () => this.collectQueues(),
    });
    this.queueOldestWaiting = new Gauge({
      name: 'chronicle_queue_oldest_waiting_seconds',
      help: 'Age of the oldest job waiting to start, per queue (0 when none waits)',
      labelNames: ['queue'],
      registers: on('api'),
      collect: () => this.collectQueues(),
    });
    this.reconcilerPasses = new Counter({
      name: 'chronicle_reconciler_passes_total',
      help: 'Reconciler passes, by whether this process held the installation lock (ran) or another did',
      labelNames: ['ran'],
      registers: on('context-worker'),
    });
    this.reconcilerActions = new Counter({
      name: 'chronicle_reconciler_actions_total',
      help: 'What the reconciler did: requeued (a missing, failed or stalled narrate job), lost and deadline (turns it ended), memory_requeued',
      labelNames: ['action'],
      registers: on('context-worker'),
    });
    this.sseConnections = new Gauge({
      name: 'chronicle_sse_connections',
      help: 'Turn streams (SSE) this API instance holds open',
      registers: on('api'),
      collect: () => {
        if (this.sseSource) this.sseConnections.set(this.sseSource());
      },
    });
    this.httpRequestDuration = new Histogram({
      name: 'chronicle_http_request_duration_seconds',
      help: 'HTTP requests the API answered, by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: HTTP_BUCKETS,
      registers: on('api'),
    });
    if (options.processDefaults !== false) collectDefaultMetrics({ register: this.registry });
  }

  /** The text a scrape answers, and its content type. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** The names this process exports (histograms without their _bucket/_sum/_count suffixes). */
  names(): string[] {
    return this.registry.getMetricsAsArray().map((metric) => metric.name);
  }

  /** Where the queue gauges come from (the API wires its queue producer in). */
  readQueuesFrom(source: () => Promise<QueueSnapshot[]>): void {
    this.queueSource = source;
  }

  /** Where the SSE gauge comes from (the API's stream slots). */
  countSseFrom(source: () => number): void {
    this.sseSource = source;
  }

  /** Counts what a reconciler pass reports. */
  recordReconcilePass(report: {
    ran: boolean;
    requeued: number;
    lost: number;
    deadline: number;
    memoryRequeued: number;
  }): void {
    this.reconcilerPasses.inc({ ran: String(report.ran) });
    const actions = {
      requeued: report.requeued,
      lost: report.lost,
      deadline: report.deadline,
      memory_requeued: report.memoryRequeued,
    };
    for (const [action, count] of Object.entries(actions)) {
      if (count > 0) this.reconcilerActions.inc({ action }, count);
    }
    // The turns it ended are NarrationFailed this process appended, like the processor's.
    if (report.lost > 0) this.narrationsFailed.inc({ code: 'lost' }, report.lost);
    if (report.deadline > 0) this.narrationsFailed.inc({ code: 'deadline' }, report.deadline);
  }

  /**
   * Counts a BullMQ worker's job events. `isFinal` says whether a failed attempt was the job's
   * last (the processor knows its attempts); a failure that is not is a retry.
   */
  watchWorker(
    queue: string,
    worker: Worker,
    isFinal: (job: Job | undefined, error: Error) => boolean,
  ): void {
    worker.on('completed', () => this.jobs.inc({ queue, result: 'completed' }));
    worker.on('failed', (job, error) =>
      this.jobs.inc({ queue, result: isFinal(job, error) ? 'failed' : 'retried' }),
    );
    worker.on('stalled', () => this.jobs.inc({ queue, result: 'stalled' }));
  }

  /** Both queue gauges are collected side by side in one scrape: one read of Redis feeds them. */
  private collectQueues(): Promise<void> {
    this.queueRead ??= this.readQueues().finally(() => (this.queueRead = undefined));
    return this.queueRead;
  }

  private async readQueues(): Promise<void> {
    this.queueJobs.reset();
    this.queueOldestWaiting.reset();
    if (!this.queueSource) return;
    let snapshots: QueueSnapshot[];
    try {
      snapshots = await this.queueSource();
    } catch {
      // Redis is down or slow: the scrape answers without queue figures (the gauges are
      // absent, not a stale or made-up zero); /health says why.
      return;
    }
    for (const { queue, counts, oldestWaitingSeconds } of snapshots) {
      for (const [state, count] of Object.entries(counts))
        this.queueJobs.set({ queue, state }, count);
      this.queueOldestWaiting.set({ queue }, oldestWaitingSeconds ?? 0);
    }
  }
}
