import { Inject, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import {
  IndexStoryPassagesUseCase,
  UpdateMemoryUseCase,
  type UpdateMemoryOutcome,
} from '@chronicle/memory-store';
import { ChronicleMetrics } from '@chronicle/metrics';
import { ControlPlane, describeError, withLogContext, type AppConfig } from '@chronicle/platform';
import { assertEveryJobHandled, JobName, QueueName, type MemoryJob } from '@chronicle/queue';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { AdventureLock } from './adventure.lock';
import { WORKER_CONFIG } from './worker-config.token';

/** The jobs this processor answers, checked against the registry at start-up. */
export const MEMORY_HANDLERS = [{ jobName: JobName.UpdateMemory }] as const;

/** How long a job that found its adventure busy waits before it looks again. */
export const BUSY_RETRY_MS = 2_000;

/** A pass that left work undone: thrown so BullMQ retries it with backoff. */
export class MemoryPassIncompleteError extends Error {
  constructor(readonly outcome: UpdateMemoryOutcome) {
    super(outcome.errors.join('; '));
    this.name = 'MemoryPassIncompleteError';
  }
}

/**
 * The memory queue's consumer: job bookkeeping only (log context, roll-call tracking, the
 * per-adventure lock); the pass itself is the use case's. The worker is created paused and
 * started at bootstrap, once the handlers are checked.
 */
@Processor(QueueName.Memory, { autorun: false })
export class MemoryProcessor extends WorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger('MemoryProcessor');

  constructor(
    private readonly updateMemory: UpdateMemoryUseCase,
    private readonly indexPassages: IndexStoryPassagesUseCase,
    private readonly controlPlane: ControlPlane,
    private readonly lock: AdventureLock,
    @Inject(WORKER_CONFIG) private readonly config: AppConfig,
    private readonly metrics: ChronicleMetrics,
  ) {
    super();
  }

  onApplicationBootstrap(): void {
    assertEveryJobHandled(MEMORY_HANDLERS, [QueueName.Memory]);
    this.worker.concurrency = this.config.memoryConcurrency;
    this.metrics.watchWorker(
      QueueName.Memory,
      this.worker,
      (job, error) =>
        !job || job.attemptsMade >= (job.opts.attempts ?? 1) || error instanceof UnrecoverableError,
    );
    if (!this.worker.isRunning()) {
      this.worker.run().catch((error: unknown) => {
        this.logger.error({ msg: 'memory worker stopped', error: describeError(error) });
      });
    }
  }

  async process(job: Job<MemoryJob>, token?: string): Promise<UpdateMemoryOutcome> {
    if (job.name !== JobName.UpdateMemory) {
      throw new UnrecoverableError(`the memory queue has no handler for job "${job.name}"`);
    }
    const { adventureId, userId } = job.data;
    const jobId = job.id ?? '';
    const attempt = job.attemptsMade + 1;
    const ids = { adventureId, ...(typeof userId === 'string' && { userId }), jobId, attempt };
    return withLogContext(ids, async () => {
      if (!(await this.lock.acquire(adventureId, jobId))) {
        // Another pass over this adventure is running: look again shortly, without spending
        // an attempt (the model calls it would make would only be thrown away).
        this.logger.log({ msg: 'adventure busy with another memory pass; delayed' });
        await job.moveToDelayed(Date.now() + BUSY_RETRY_MS, token);
        throw new DelayedError('adventure busy with another memory pass');
      }
      const untrack = this.controlPlane.trackJob({
        jobId,
        queue: QueueName.Memory,
        adventureId,
        since: new Date().toISOString(),
      });
      try {
        // The story's passages for recall first: the next turn searches them. A failure
        // leaves them to the retry, the next pass or the turn's own catch-up.
        let passagesError: string | null = null;
        const passagesIndexed = await this.indexPassages
          .execute({ adventureId, jobId, attempt })
          .catch((error: Error) => {
            passagesError = `passages: ${error.message}`;
            return 0;
          });
        const outcome = await this.updateMemory.execute({ adventureId, jobId, attempt });
        if (passagesError) outcome.errors.push(passagesError);
        const { memoriesWritten, summaryWritten, embedded, errors } = outcome;
        if (errors.length > 0) {
          // Whatever was written stays written; the retry redoes only what failed (the
          // cursors moved only past what succeeded).
          this.logger.warn({ msg: 'memory pass incomplete; will retry', ...outcome });
          throw new MemoryPassIncompleteError(outcome);
        }
        this.logger.log({
          msg: 'memory pass done',
          memoriesWritten,
          summaryWritten,
          embedded,
          passagesIndexed,
        });
        return outcome;
      } finally {
        untrack();
        await this.lock.release(adventureId, jobId).catch((error: unknown) => {
          this.logger.warn({
            msg: 'could not release the adventure lock',
            error: describeError(error),
          });
        });
      }
    });
  }

  /** BullMQ's own trouble (a lock it could not renew, a lost connection), as a structured warning
   * instead of the raw stack traces it prints when nobody listens. */
  @OnWorkerEvent('error')
  onWorkerError(error: Error): void {
    this.logger.warn({ msg: 'queue worker error', error: describeError(error) });
  }
}
