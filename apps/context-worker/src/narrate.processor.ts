import { Inject, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { ChronicleMetrics, TurnTimer } from '@chronicle/metrics';
import { ControlPlane, describeError, withLogContext, type AppConfig } from '@chronicle/platform';
import {
  assertEveryJobHandled,
  attemptsOf,
  JobName,
  QueueName,
  type NarrateJob,
  type TurnTimerJob,
} from '@chronicle/queue';
import { randomUUID } from 'node:crypto';
import { decideTurnStep } from '@chronicle/adventure';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import {
  NarrateTurnUseCase,
  TurnDeferredError,
  type NarrateOutcome,
} from './narrate-turn.use-case';
import { NarrateAdmission } from './narrate.admission';
import { WORKER_CONFIG } from './worker-config.token';
import { TurnTimerUseCase } from './turn-timer.use-case';

/** The jobs this processor answers, checked against the registry at start-up. */
export const NARRATE_HANDLERS = [
  { jobName: JobName.NarrateTurn },
  { jobName: JobName.TurnTimer },
] as const;

/**
 * The narrate queue's consumer: job bookkeeping only (log context, roll-call tracking, the
 * attempt count); the turn itself is the use case's. The worker is created paused and started
 * at bootstrap, once the handlers are checked and the concurrency is set.
 */
@Processor(QueueName.Narrate)
export class NarrateProcessor extends WorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger('NarrateProcessor');

  constructor(
    private readonly narrateTurn: NarrateTurnUseCase,
    private readonly controlPlane: ControlPlane,
    @Inject(WORKER_CONFIG) private readonly config: AppConfig,
    private readonly admission: NarrateAdmission,
    private readonly metrics: ChronicleMetrics,
    private readonly timer: TurnTimer,
    private readonly turnTimers: TurnTimerUseCase,
  ) {
    super();
  }

  onApplicationBootstrap(): void {
    assertEveryJobHandled(NARRATE_HANDLERS, [QueueName.Narrate]);
    this.worker.concurrency = this.config.narrateConcurrency;
    this.metrics.watchWorker(QueueName.Narrate, this.worker, (job, error) =>
      job ? isFinal(job, error) : true,
    );
    if (!this.worker.isRunning()) {
      this.worker.run().catch((error: unknown) => {
        this.logger.error({ msg: 'narrate worker stopped', error: describeError(error) });
      });
    }
  }

  async process(
    job: Job<NarrateJob> | Job<TurnTimerJob>,
    token?: string,
  ): Promise<NarrateOutcome | { appended: number }> {
    if (job.name === JobName.TurnTimer) {
      // A room's timer: no model call, so no admission; the decider judges it (turn-timer.use-case.ts).
      const timer = job.data as TurnTimerJob;
      return withLogContext({ adventureId: timer.adventureId, jobId: job.id ?? '' }, () =>
        this.turnTimers.fire(timer, job.id ?? ''),
      );
    }
    return this.narrate(job as Job<NarrateJob>, token);
  }

  private async narrate(job: Job<NarrateJob>, token?: string): Promise<NarrateOutcome> {
    if (job.name !== JobName.NarrateTurn) {
      throw new UnrecoverableError(`the narrate queue has no handler for job "${job.name}"`);
    }
    const { adventureId, turnId } = job.data;
    const attempt = job.attemptsMade + 1;
    const jobId = job.id ?? '';
    return withLogContext({ ...joinIds(job), jobId, attempt }, async () => {
      // The user's share and the provider's limits, shared by every worker: a turn over them
      // goes back to the queue delayed, without spending an attempt (see narrate.admission.ts).
      const admission = await this.admission.admit(job);
      if (admission.status === 'waiting') {
        await job.moveToDelayed(admission.untilMs, token);
        throw new DelayedError(admission.reason);
      }
      const untrack = this.controlPlane.trackJob({
        jobId,
        queue: QueueName.Narrate,
        adventureId,
        turnId,
        since: new Date().toISOString(),
      });
      try {
        // Timed from the POST the API received (the job's own creation for a job without it).
        const requestedAt = job.data.requestedAt ?? job.timestamp;
        return await this.timer.time({ requestedAt, attempt }, () =>
          this.narrateTurn.execute({
            adventureId,
            turnId,
            jobId,
            attempt,
            maxAttempts: attemptsOf(job),
            // The lock token is the attempt's fence: a worker that takes a stalled job over has
            // another, so the one that lost the lock can no longer write the turn's stream.
            fence: token ?? randomUUID(),
          }),
        );
      } catch (error) {
        if (error instanceof TurnDeferredError) {
          // The workflow's retry that spends no attempt: back to the queue (at once, or after
          // the wait); any other error is a retry BullMQ counts.
          await job.moveToDelayed(Date.now() + error.delayMs, token);
          throw new DelayedError(error.message);
        }
        throw error;
      } finally {
        untrack();
        await admission.release();
      }
    });
  }

  /**
   * BullMQ's own trouble (a lock it could not renew on a busy machine, a lost Redis
   * connection): without a listener it prints raw stack traces to stderr. A lost lock is
   * recovered by the stalled-job check and the turn-in-flight check makes the re-run safe, so
   * it is a warning in the structured log.
   */
  @OnWorkerEvent('error')
  onWorkerError(error: Error): void {
    this.logger.warn({ msg: 'queue worker error', error: describeError(error) });
  }

  /**
   * The last failure the use case did not see (a job that threw on its final attempt): the turn
   * must not stay in flight, or the adventure would refuse every action from now on. (A job that
   * stalled too often is failed by BullMQ's stalled check without this event: the reconciler
   * finds it failed with its turn in flight and puts it back.)
   */
  @OnWorkerEvent('failed')
  async onFailed(job: Job<NarrateJob> | undefined, error: Error): Promise<void> {
    if (!job || job.name !== JobName.NarrateTurn) return;
    if (!isFinal(job, error)) return;
    const { adventureId, turnId } = job.data;
    const ids = { ...joinIds(job), jobId: job.id, attempt: job.attemptsMade };
    await withLogContext(ids, async () => {
      try {
        this.logger.warn({
          msg: 'narrate job failed for good; recording the turn as lost',
          error: describeError(error),
          attemptsMade: job.attemptsMade,
        });
        const run = {
          attempt: job.attemptsMade,
          maxAttempts: attemptsOf(job),
          deadlineMs: 0,
          maxRequeues: 0,
        };
        const gaveUp = { type: 'QueueGaveUp', attemptsMade: job.attemptsMade } as const;
        for (const step of decideTurnStep(run, gaveUp)) {
          if (step.type !== 'RecordFailure') continue;
          const recorded = await this.narrateTurn.recordFailure(
            adventureId,
            turnId,
            step,
            step.attempts,
          );
          if (recorded) this.metrics.narrationsFailed.inc({ code: step.code });
        }
      } catch (recordError) {
        this.logger.error({
          msg: 'could not record a failed turn',
          error: describeError(recordError),
        });
      }
    });
  }
}

/**
 * The ids every log line of a narrate job carries, so they join the API's lines of the same
 * turn: requestId and userId come with the job (absent on a job enqueued before they did).
 */
function joinIds(job: Job<NarrateJob>): {
  adventureId: string;
  turnId: string;
  userId?: string;
  requestId?: string;
} {
  const { adventureId, turnId, userId, requestId } = job.data;
  return {
    adventureId,
    turnId,
    ...(typeof userId === 'string' && { userId }),
    ...(typeof requestId === 'string' && { requestId }),
  };
}

/** This failure ends the job: its last attempt, or one no retry can mend. */
function isFinal(job: Job, error: Error): boolean {
  return job.attemptsMade >= attemptsOf(job) || error instanceof UnrecoverableError;
}
