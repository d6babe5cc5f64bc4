import { Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { ChronicleMetrics } from '@chronicle/metrics';
import { describeError, withLogContext } from '@chronicle/platform';
import {
  assertEveryJobHandled,
  attemptsOf,
  DEFAULT_RETRY_BASE_MS,
  JobName,
  QueueName,
  type DeliverWebhookJob,
  type NotifyWebhooksJob,
} from '@chronicle/queue';
import { WebhookDeliveries } from '@chronicle/webhooks';
import { UnrecoverableError, type Job } from 'bullmq';

/** The jobs this processor answers, checked against the registry at start-up. */
export const WEBHOOK_HANDLERS = [
  { jobName: JobName.NotifyWebhooks },
  { jobName: JobName.DeliverWebhook },
] as const;

/** A delivery the receiver did not take: thrown so BullMQ tries again after its backoff. */
export class DeliveryNotTakenError extends Error {
  constructor(detail: string) {
    super(`the receiver did not take the delivery: ${detail}`);
    this.name = 'DeliveryNotTakenError';
  }
}

/**
 * The webhooks queue's consumer, in the memory worker: its own queue and its own worker, so a
 * receiver that hangs holds one delivery slot, never a memory pass or a turn. Job bookkeeping
 * only; the work is WebhookDeliveries'.
 */
@Processor(QueueName.Webhooks, { autorun: false })
export class WebhooksProcessor extends WorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger('WebhooksProcessor');

  constructor(
    private readonly deliveries: WebhookDeliveries,
    private readonly metrics: ChronicleMetrics,
  ) {
    super();
  }

  onApplicationBootstrap(): void {
    assertEveryJobHandled(WEBHOOK_HANDLERS, [QueueName.Webhooks]);
    this.metrics.watchWorker(
      QueueName.Webhooks,
      this.worker,
      (job, error) =>
        !job || job.attemptsMade >= attemptsOf(job) || error instanceof UnrecoverableError,
    );
    if (!this.worker.isRunning()) {
      this.worker.run().catch((error: unknown) => {
        this.logger.error({ msg: 'webhooks worker stopped', error: describeError(error) });
      });
    }
  }

  async process(job: Job<NotifyWebhooksJob | DeliverWebhookJob>): Promise<unknown> {
    const jobId = job.id ?? '';
    const attempt = job.attemptsMade + 1;
    return withLogContext({ jobId, attempt }, async () => {
      if (job.name === JobName.NotifyWebhooks) {
        const data = job.data as NotifyWebhooksJob;
        const deliveries = await this.deliveries.notify(data);
        if (deliveries > 0) this.logger.log({ msg: 'webhook deliveries enqueued', deliveries });
        return { deliveries };
      }
      if (job.name !== JobName.DeliverWebhook) {
        throw new UnrecoverableError(`the webhooks queue has no handler for job "${job.name}"`);
      }
      const backoff = job.opts.backoff;
      const outcome = await this.deliveries.deliver(job.data as DeliverWebhookJob, {
        deliveryId: jobId,
        attempt,
        attempts: attemptsOf(job),
        retryBaseMs:
          (typeof backoff === 'object' ? backoff.delay : backoff) ??
          DEFAULT_RETRY_BASE_MS[JobName.DeliverWebhook],
      });
      const { webhookId, messageId } = job.data as DeliverWebhookJob;
      this.logger.log({
        msg: `webhook delivery ${outcome.status}`,
        webhookId,
        messageId,
        detail: outcome.detail,
      });
      if (outcome.retry) throw new DeliveryNotTakenError(outcome.detail);
      if (outcome.status === 'refused' || outcome.status === 'failed') {
        throw new UnrecoverableError(outcome.detail);
      }
      return outcome;
    });
  }

  @OnWorkerEvent('error')
  onWorkerError(error: Error): void {
    this.logger.warn({ msg: 'webhooks queue worker error', error: describeError(error) });
  }
}
