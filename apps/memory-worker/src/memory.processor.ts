import { Inject, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import { ControlPlane, describeError, withLogContext, type AppConfig } from '@chronicle/platform';
import { assertEveryJobHandled, JobName, QueueName, type MemoryJob } from '@chronicle/queue';
import { UnrecoverableError, type Job } from 'bullmq';
import { UpdateMemoryUseCase, type UpdateMemoryOutcome } from './update-memory.use-case';
import { WORKER_CONFIG } from './worker-config.token';

/** The jobs this processor answers, checked against the registry at start-up. */
export const MEMORY_HANDLERS = [{ jobName: JobName.UpdateMemory }] as const;

/**
 * The memory queue's consumer: job bookkeeping only; the pass itself is the use case's. The
 * worker is created paused and started at bootstrap, once the handlers are checked.
 */
@Processor(QueueName.Memory, { autorun: false })
export class MemoryProcessor extends WorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger('MemoryProcessor');

  constructor(
    private readonly updateMemory: UpdateMemoryUseCase,
    private readonly controlPlane: ControlPlane,
    @Inject(WORKER_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  onApplicationBootstrap(): void {
    assertEveryJobHandled(MEMORY_HANDLERS, [QueueName.Memory]);
    this.worker.concurrency = this.config.memoryConcurrency;
    if (!this.worker.isRunning()) {
      this.worker.run().catch((error: unknown) => {
        this.logger.error({ msg: 'memory worker stopped', error: describeError(error) });
      });
    }
  }

  async process(job: Job<MemoryJob>): Promise<UpdateMemoryOutcome> {
    if (job.name !== JobName.UpdateMemory) {
      throw new UnrecoverableError(`the memory queue has no handler for job "${job.name}"`);
    }
    const { adventureId } = job.data;
    const jobId = job.id ?? '';
    const attempt = job.attemptsMade + 1;
    return withLogContext({ adventureId, jobId, attempt }, async () => {
      const untrack = this.controlPlane.trackJob({
        jobId,
        queue: QueueName.Memory,
        adventureId,
        since: new Date().toISOString(),
      });
      try {
        return await this.updateMemory.execute({ adventureId });
      } finally {
        untrack();
      }
    });
  }
}
