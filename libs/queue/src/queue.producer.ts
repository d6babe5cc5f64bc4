// Typed producers on plain bullmq `Queue`s sharing one fail-fast connection.
// Options always come from `jobOptions`, so no caller can enqueue a job with
// a random id or unbounded retention.
import { Queue } from 'bullmq';
import {
  createProducerConnection,
  describeRedisUrl,
  queueKeyPrefix,
  readRedisSettings,
  redisKeys,
  waitForRedis,
  type RedisClient,
  type RedisSettings,
} from '@chronicle/platform';
import { queueTelemetry, withTraceparent } from '@chronicle/telemetry';
import {
  ALL_QUEUES,
  type JobName,
  type JobPayloads,
  type JobRequest,
  QueueName,
  isJobName,
  jobOptions,
  queueOf,
  safeJobId,
} from './queue.registry';

export interface QueueConfig {
  redisUrl: string;
  /**
   * The installation (QUEUE_PREFIX); each queue's BullMQ prefix is `{<prefix>:<queue>}`
   * (`queueKeyPrefix`), a hash tag, so a Redis Cluster keeps each queue's keys in one slot.
   * Tests use one per file so they never see each other's jobs.
   */
  prefix: string;
  /** Attempts per job name, over the registry's DEFAULT_ATTEMPTS (NARRATE_ATTEMPTS, say). */
  attempts?: Partial<Record<JobName, number>>;
  /** The first retry's wait per job name, over DEFAULT_RETRY_BASE_MS (WEBHOOKS_RETRY_BASE_MS). */
  retryBaseMs?: Partial<Record<JobName, number>>;
}

export interface EnqueueOptions {
  /** Overrides the registry's id (the outbox stores the id it chose at append time). */
  jobId?: string;
}

const ENQUEUE_TIMEOUT_MS = 5_000;

export class QueueProducer {
  private readonly connection: RedisClient;
  private readonly queues = new Map<QueueName, Queue>();
  private closed = false;

  constructor(
    readonly config: QueueConfig,
    private readonly enqueueTimeoutMs = ENQUEUE_TIMEOUT_MS,
  ) {
    if (config.prefix.includes(':')) {
      throw new Error(`queue prefix "${config.prefix}" must not contain ":"`);
    }
    this.connection = createProducerConnection(config.redisUrl);
    // ioredis logs unhandled 'error' events loudly on every reconnect attempt;
    // failures surface where they matter: as rejected enqueues and in /health.
    this.connection.on('error', () => undefined);
  }

  /** Waits (bounded) until Redis answers; call at start-up to fail fast with a clear message. */
  async waitUntilReady(timeoutMs = 5_000): Promise<void> {
    await waitForRedis(this.connection, timeoutMs);
  }

  async enqueue<J extends JobName>(
    jobName: J,
    payload: JobPayloads[J],
    options: EnqueueOptions = {},
  ): Promise<{ jobId: string | undefined }> {
    const opts = jobOptions(jobName, payload, this.config.attempts, this.config.retryBaseMs);
    if (options.jobId !== undefined) opts.jobId = safeJobId(options.jobId);
    const queue = this.queue(queueOf(jobName));
    // Before the first connect BullMQ waits for Redis without a bound; the race
    // keeps the producer's promise (fail fast) even then. A late add after a
    // timeout is harmless: the id is deterministic.
    const job = await withTimeout(
      queue.add(jobName, payload, opts),
      this.enqueueTimeoutMs,
      `enqueue ${jobName} timed out after ${this.enqueueTimeoutMs} ms (is Redis at ${describeRedisUrl(this.config.redisUrl)} up?)`,
    );
    return { jobId: job.id };
  }

  /**
   * Enqueues a committed outbox row (what the event store's relay is given to call), in the trace
   * of the append that wrote it (its `traceparent`, see `outboxRow`): the relay's sweeper has no
   * context of its own, and BullMQ's telemetry carries this one on to the worker.
   */
  enqueueOutbox(message: { jobName: string; payload: unknown; jobId: string }): Promise<unknown> {
    const { jobName, payload, jobId } = message;
    if (!isJobName(jobName)) {
      throw new Error(`outbox row names unknown job "${jobName}"`);
    }
    const traceparent = (payload as { traceparent?: unknown } | null)?.traceparent;
    return withTraceparent(traceparent, () => this.enqueue(jobName, payload as never, { jobId }));
  }

  /** Enqueues a request built elsewhere. */
  enqueueRequest(
    request: JobRequest,
    options: EnqueueOptions = {},
  ): Promise<{ jobId: string | undefined }> {
    return this.enqueue(request.jobName, request.payload as never, options);
  }

  /** The bullmq Queue for `name` (created on first use), for inspection and admin. */
  queue(name: QueueName): Queue {
    if (this.closed) throw new Error('the queue producer is closed');
    if (!ALL_QUEUES.includes(name)) throw new Error(`unknown queue "${name}"`);
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, {
        connection: this.connection,
        prefix: queueKeyPrefix(this.config.prefix, name),
        telemetry: queueTelemetry(),
      });
      queue.on('error', () => undefined);
      this.queues.set(name, queue);
    }
    return queue;
  }

  /**
   * Whether a worker holds the lock of the active job `jobId` now (BullMQ's lock key, named by
   * the queue): an active job without one has stalled.
   */
  async holdsLock(name: QueueName, jobId: string): Promise<boolean> {
    return (await this.connection.exists(`${this.queue(name).toKey(jobId)}:lock`)) === 1;
  }

  /**
   * True the first time it is asked on a Redis that does not hold this installation's marker: a
   * new Redis, or one that lost its data (a restart without persistence, a FLUSHALL), so every
   * job it held is gone. Sets the marker, so the next call answers false.
   */
  async lostDataSinceLastAsked(): Promise<boolean> {
    // Beside the memory jobs (same hash tag): on a Redis Cluster it is lost with them.
    const marker = redisKeys.reconcilerEpoch(this.config.prefix, QueueName.Memory);
    return (await this.connection.set(marker, new Date().toISOString(), 'NX')) === 'OK';
  }

  async ping(timeoutMs = 1_000): Promise<boolean> {
    try {
      const answer = await withTimeout(this.connection.ping(), timeoutMs, 'ping timed out');
      return answer === 'PONG';
    } catch {
      return false;
    }
  }

  /** The Redis settings Chronicle depends on (see redis-settings.ts); null when Redis is down. */
  async redisSettings(timeoutMs = 1_000): Promise<RedisSettings | null> {
    try {
      return await withTimeout(
        readRedisSettings(this.connection),
        timeoutMs,
        'CONFIG GET timed out',
      );
    } catch {
      return null;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.queues.values()].map((q) => q.close()));
    // The connection is ours (the queues only borrow it), so close it here:
    // politely when it is up, at once when it is not (nothing to flush).
    if (this.connection.status !== 'ready') {
      this.connection.disconnect();
      return;
    }
    try {
      await withTimeout(this.connection.quit(), 2_000, 'quit timed out');
    } catch {
      this.connection.disconnect();
    }
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
