// The one place that knows which jobs exist, which queue carries each, what
// their payloads hold and how they are retried. Producers and workers both read
// from here, so a job cannot be enqueued on one queue and consumed on another.
import type { JobsOptions } from 'bullmq';
import { currentTraceparent } from '@chronicle/telemetry';

export const QueueName = {
  /** Consumed by the context worker: one job per player turn. */
  Narrate: 'narrate',
  /** Consumed by the memory worker: coalesced per adventure, never blocks a turn. */
  Memory: 'memory',
  /**
   * Consumed by the memory worker: webhook deliveries, a queue of their own so a slow or dead
   * receiver never holds a turn or a memory pass.
   */
  Webhooks: 'webhooks',
} as const;
export type QueueName = (typeof QueueName)[keyof typeof QueueName];

export const JobName = {
  NarrateTurn: 'narrate-turn',
  UpdateMemory: 'update-memory',
  /** Finds the webhooks an event concerns and enqueues one delivery for each. */
  NotifyWebhooks: 'notify-webhooks',
  /** One signed POST to one webhook, retried with backoff. */
  DeliverWebhook: 'deliver-webhook',
  /** A room's timer (round timeout, idle → away, hot-seat skip): delayed, on the narrate queue. */
  TurnTimer: 'turn-timer',
} as const;
export type JobName = (typeof JobName)[keyof typeof JobName];

// Payloads carry ids only: the worker reads everything else from the event log,
// so a job never holds a prompt, a secret or a stale copy of the story.
export interface NarrateJob {
  adventureId: string;
  turnId: string;
  /** The adventure's owner, so the worker's log lines name the user (absent on older jobs). */
  userId?: string;
  /** The id of the request that started the turn: the worker logs it, joining its lines to the API's. */
  requestId?: string;
  /** Epoch ms the API received that request: the worker measures POST → model request from it. */
  requestedAt?: number;
  /** The W3C trace context of the append that wrote the job, with tracing on (see `outboxRow`). */
  traceparent?: string;
}

export interface MemoryJob {
  adventureId: string;
  /** The adventure's owner, so the worker's log lines name the user (absent on older jobs). */
  userId?: string;
  /** The W3C trace context of the append that wrote the job, with tracing on (see `outboxRow`). */
  traceparent?: string;
}

/** A webhook event that happened (libs/webhooks' `webhookEventOf` makes one from an adventure's). */
export interface WebhookEventJob {
  /** e.g. `turn.narrated` */
  event: string;
  /** The message's id, the same for every webhook told of it and on every retry (`webhook-id`). */
  messageId: string;
  /** Ids only (adventureId, turnId, …): what the delivery's `data` holds. */
  data: Record<string, string>;
}

export interface NotifyWebhooksJob extends WebhookEventJob {
  adventureId: string;
  /** The adventure's owner: whose webhooks are asked. */
  userId: string;
}

export interface DeliverWebhookJob extends WebhookEventJob {
  webhookId: string;
}

/**
 * A room's timer: when it runs out the worker asks the adventure's decider what it does
 * (`FireTurnTimer`), which is nothing when the round or seat it was set for has moved on.
 */
export interface TurnTimerJob {
  adventureId: string;
  timer:
    | { timer: 'round'; roundId: string }
    | { timer: 'idle'; roundId: string }
    | { timer: 'seat'; userId: string; since: number };
  /** How long after it is enqueued it runs. */
  delayMs: number;
}

export interface JobPayloads {
  [JobName.NarrateTurn]: NarrateJob;
  [JobName.UpdateMemory]: MemoryJob;
  [JobName.NotifyWebhooks]: NotifyWebhooksJob;
  [JobName.DeliverWebhook]: DeliverWebhookJob;
  [JobName.TurnTimer]: TurnTimerJob;
}

export const JOB_QUEUE: { readonly [J in JobName]: QueueName } = {
  [JobName.NarrateTurn]: QueueName.Narrate,
  [JobName.UpdateMemory]: QueueName.Memory,
  [JobName.NotifyWebhooks]: QueueName.Webhooks,
  [JobName.DeliverWebhook]: QueueName.Webhooks,
  [JobName.TurnTimer]: QueueName.Narrate,
};

export const ALL_QUEUES: readonly QueueName[] = Object.values(QueueName);
export const ALL_JOBS: readonly JobName[] = Object.values(JobName);

/** A job to enqueue, typed by its name: `{ jobName: 'narrate-turn', payload: { adventureId, turnId } }`. */
export type JobRequest = {
  [J in JobName]: { jobName: J; payload: JobPayloads[J] };
}[JobName];

/**
 * A job as an outbox row: the queue it goes on and the id a direct `enqueue` would give it, so
 * the row enqueues exactly that job. A job without a natural id (the deduplicated memory job)
 * leaves the id to the store, which derives one from the row. The event store takes these as
 * data; it knows nothing of the registry.
 *
 * With tracing on, the payload carries the W3C `traceparent` of the append that wrote the row:
 * the relay may enqueue it from another request's context or from its sweeper, and enqueues it
 * as a continuation of that trace (`QueueProducer.enqueueOutbox`), so the worker's spans join
 * the turn's trace.
 */
export function outboxRow(request: JobRequest & { jobId?: string }): {
  queue: QueueName;
  jobName: JobName;
  jobId?: string;
  payload: unknown;
} {
  const jobId = request.jobId ?? jobIdOf(request.jobName, request.payload as never);
  const traceparent = currentTraceparent();
  return {
    queue: queueOf(request.jobName),
    jobName: request.jobName,
    ...(jobId !== undefined && { jobId: safeJobId(jobId) }),
    payload: traceparent ? { ...request.payload, traceparent } : request.payload,
  };
}

export function queueOf(jobName: JobName): QueueName {
  const queue = JOB_QUEUE[jobName];
  if (!queue) throw new Error(`unknown job name "${jobName}": add it to JOB_QUEUE in libs/queue`);
  return queue;
}

export function isJobName(value: string): value is JobName {
  return Object.prototype.hasOwnProperty.call(JOB_QUEUE, value);
}

// Finished jobs are kept long enough for a duplicate enqueue (a redelivered
// outbox row, a client retry) to hit the existing id and be ignored, and few
// enough that Redis (noeviction) never fills up.
const KEEP_COMPLETED = { age: 24 * 3600, count: 10_000 };
const KEEP_FAILED = { age: 7 * 24 * 3600, count: 10_000 };

/**
 * Attempts per job, unless the installation sets its own (QueueConfig.attempts, from
 * NARRATE_ATTEMPTS). The number is fixed when the job is enqueued and travels in its options: a
 * worker reads it back with `attemptsOf`, so the producer's number is the only one.
 */
export const DEFAULT_ATTEMPTS: { readonly [J in JobName]: number } = {
  [JobName.NarrateTurn]: 3,
  [JobName.UpdateMemory]: 5,
  [JobName.NotifyWebhooks]: 5,
  [JobName.DeliverWebhook]: 8,
  [JobName.TurnTimer]: 5,
};

/**
 * The first retry's wait per job, doubling after each attempt, unless the installation sets its
 * own (QueueConfig.retryBaseMs, from WEBHOOKS_RETRY_BASE_MS).
 */
export const DEFAULT_RETRY_BASE_MS: { readonly [J in JobName]: number } = {
  [JobName.NarrateTurn]: 2_000,
  [JobName.UpdateMemory]: 5_000,
  [JobName.NotifyWebhooks]: 2_000,
  [JobName.DeliverWebhook]: 10_000,
  [JobName.TurnTimer]: 1_000,
};

/**
 * The wait after a failed attempt of an exponential job, as BullMQ's built-in `exponential`
 * backoff without jitter computes it (2^(attempt-1) × base): a delivery records when its next
 * attempt will run with this.
 */
export function exponentialRetryMs(attemptsMade: number, baseMs: number): number {
  return Math.round(2 ** Math.max(0, attemptsMade - 1) * baseMs);
}

/**
 * A job's id, derived here and nowhere else: deterministic, so a second enqueue of the same work
 * is a no-op. The memory job has none (it is deduplicated per adventure instead; BullMQ names it).
 */
export function jobIdOf<J extends JobName>(
  jobName: J,
  payload: JobPayloads[J],
): string | undefined {
  switch (jobName) {
    case JobName.NarrateTurn:
      return narrateJobId((payload as NarrateJob).turnId);
    case JobName.UpdateMemory:
      return undefined;
    case JobName.NotifyWebhooks:
      return safeJobId(
        `webhooks-${requireId((payload as NotifyWebhooksJob).messageId, 'messageId')}`,
      );
    case JobName.DeliverWebhook: {
      const { webhookId, messageId } = payload as DeliverWebhookJob;
      return safeJobId(
        `webhook-${requireId(webhookId, 'webhookId')}-${requireId(messageId, 'messageId')}`,
      );
    }
    case JobName.TurnTimer:
      return turnTimerJobId(payload as TurnTimerJob);
    default:
      throw new Error(`unknown job name "${String(jobName)}": add it to jobIdOf in libs/queue`);
  }
}

/**
 * One timer per round (or seat): a second enqueue of the same timer is a no-op, so the first
 * submission of a round sets it and the later ones leave it running.
 */
export function turnTimerJobId({ adventureId, timer }: TurnTimerJob): string {
  const which = timer.timer === 'seat' ? `${timer.since}` : timer.roundId;
  return safeJobId(`timer-${requireId(adventureId, 'adventureId')}-${timer.timer}-${which}`);
}

/** The narrate job of a turn (the reconciler and the API look it up by this). */
export function narrateJobId(turnId: string): string {
  return safeJobId(`narrate-${requireId(turnId, 'turnId')}`);
}

/** The attempts a job was enqueued with: the one number that says which attempt is its last. */
export function attemptsOf(job: { opts: Pick<JobsOptions, 'attempts'> }): number {
  return Math.max(1, job.opts.attempts ?? 1);
}

/** Every job's BullMQ options, chosen here and nowhere else. */
export function jobOptions<J extends JobName>(
  jobName: J,
  payload: JobPayloads[J],
  attempts: Partial<Record<JobName, number>> = {},
  retryBaseMs: Partial<Record<JobName, number>> = {},
): JobsOptions {
  const tries = attempts[jobName] ?? DEFAULT_ATTEMPTS[jobName];
  const base = retryBaseMs[jobName] ?? DEFAULT_RETRY_BASE_MS[jobName];
  switch (jobName) {
    case JobName.NarrateTurn: {
      return {
        jobId: jobIdOf(jobName, payload),
        attempts: tries,
        // 2 s, 4 s with ±50% jitter, so turns that failed together (a model
        // outage) do not all retry in the same instant; a 429 waits what the
        // provider asked instead (see `narrateBackoff`).
        backoff: { type: NARRATE_BACKOFF, delay: base, jitter: 0.5 },
        removeOnComplete: KEEP_COMPLETED,
        removeOnFail: KEEP_FAILED,
      };
    }
    case JobName.UpdateMemory: {
      const { adventureId } = payload as MemoryJob;
      return {
        // One waiting job per adventure: bursts of turns collapse into one
        // memory pass, and a turn that lands while a pass is running keeps one
        // follow-up so its events are not missed.
        deduplication: {
          id: safeJobId(`memory-${requireId(adventureId, 'adventureId')}`),
          keepLastIfActive: true,
        },
        attempts: tries,
        backoff: { type: 'exponential', delay: base, jitter: 0.5 },
        removeOnComplete: KEEP_COMPLETED,
        removeOnFail: KEEP_FAILED,
      };
    }
    case JobName.NotifyWebhooks:
    case JobName.DeliverWebhook:
      return {
        jobId: jobIdOf(jobName, payload),
        attempts: tries,
        // No jitter: a delivery records when its next attempt runs (`exponentialRetryMs`).
        backoff: { type: 'exponential', delay: base },
        removeOnComplete: KEEP_COMPLETED,
        removeOnFail: KEEP_FAILED,
      };
    case JobName.TurnTimer:
      return {
        jobId: jobIdOf(jobName, payload),
        delay: Math.max(0, (payload as TurnTimerJob).delayMs),
        attempts: tries,
        backoff: { type: 'exponential', delay: base, jitter: 0.5 },
        removeOnComplete: KEEP_COMPLETED,
        removeOnFail: KEEP_FAILED,
      };
    default:
      throw new Error(`unknown job name "${String(jobName)}": add it to jobOptions in libs/queue`);
  }
}

/** The custom backoff type of narrate jobs; a worker consuming them sets `settings.backoffStrategy: narrateBackoff`. */
export const NARRATE_BACKOFF = 'narrate';
/** The longest a Retry-After is honoured: a longer wait is a cap, not a burst limit. */
const MAX_RETRY_AFTER_MS = 10 * 60 * 1000;

/**
 * BullMQ's `backoffStrategy` for narrate jobs: exponential with jitter, like the
 * built-in, except that an error carrying `retryAfterMs` (a model's 429 with
 * Retry-After) waits exactly that long.
 */
export function narrateBackoff(
  attemptsMade: number,
  type?: string,
  error?: Error,
  job?: { opts?: JobsOptions },
): number {
  if (type !== NARRATE_BACKOFF) throw new Error(`unknown backoff type "${String(type)}"`);
  const retryAfterMs = (error as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
  if (typeof retryAfterMs === 'number' && Number.isFinite(retryAfterMs) && retryAfterMs >= 0) {
    return Math.min(Math.round(retryAfterMs), MAX_RETRY_AFTER_MS);
  }
  const backoff = job?.opts?.backoff;
  const delay = (typeof backoff === 'object' ? backoff.delay : backoff) ?? 2_000;
  const jitter = (typeof backoff === 'object' ? backoff.jitter : 0) ?? 0;
  const max = Math.round(2 ** Math.max(0, attemptsMade - 1) * delay);
  return Math.floor(max * (1 - jitter) + Math.random() * max * jitter);
}

/** BullMQ uses `:` as its key separator, so a job id must never contain one. */
export function safeJobId(jobId: string): string {
  if (jobId.length === 0 || jobId.includes(':')) {
    throw new Error(`job id "${jobId}" must be non-empty and must not contain ":"`);
  }
  return jobId;
}

function requireId(value: string, field: string): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new Error(`job payload needs a non-empty ${field}`);
  }
  return value;
}

/**
 * Start-up check for a worker: every job carried by the queues it consumes has
 * exactly one handler, and no handler is registered for a job that does not
 * exist. Throws one error naming every problem.
 */
export function assertEveryJobHandled(
  handlers: ReadonlyArray<{ jobName: string }>,
  queues: readonly QueueName[] = ALL_QUEUES,
): void {
  const problems: string[] = [];
  const counts = new Map<string, number>();
  for (const { jobName } of handlers) counts.set(jobName, (counts.get(jobName) ?? 0) + 1);
  for (const jobName of counts.keys()) {
    if (!isJobName(jobName)) problems.push(`handler for unknown job "${jobName}"`);
    else if (!queues.includes(JOB_QUEUE[jobName])) {
      problems.push(
        `handler for "${jobName}" whose queue "${JOB_QUEUE[jobName]}" is not consumed here`,
      );
    }
  }
  for (const jobName of ALL_JOBS) {
    if (!queues.includes(JOB_QUEUE[jobName])) continue;
    const count = counts.get(jobName) ?? 0;
    if (count === 0) problems.push(`no handler for "${jobName}" (queue "${JOB_QUEUE[jobName]}")`);
    if (count > 1) problems.push(`${count} handlers for "${jobName}"; exactly one is allowed`);
  }
  if (problems.length > 0)
    throw new Error(`job handlers are misconfigured: ${problems.join('; ')}`);
}
