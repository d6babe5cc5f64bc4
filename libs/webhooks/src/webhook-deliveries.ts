// The two jobs of the webhooks queue, as use cases the memory worker's processor calls:
// `notify` finds the owner's webhooks an event concerns and enqueues one delivery for each
// (deterministic job ids: a notify job run twice enqueues nothing new); `deliver` signs and
// sends one, records the attempt, and says whether BullMQ should try again. Neither is on a
// turn's path: the turn's append wrote the notify job to the outbox and returned.
import {
  exponentialRetryMs,
  JobName,
  QueueProducer,
  type DeliverWebhookJob,
  type NotifyWebhooksJob,
} from '@chronicle/queue';
import { sendSigned, type SendResult } from './webhook-sender';
import { WebhookSecretBox } from './webhook-secret.box';
import { signedRequest } from './webhook-signing';
import { WebhookTargetError, type Lookup } from './webhook-target';
import { WebhooksRepository, type DeliveryStatus } from './webhooks.repository';

export interface WebhookDeliveryOptions {
  /** WEBHOOKS_SECRET_KEY; undefined: webhooks are off and nothing is sent. */
  secretKey: string | undefined;
  allowPrivate: boolean;
  timeoutMs: number;
  /** The resolver; tests give their own. */
  lookup?: Lookup;
}

export interface DeliveryAttemptInfo {
  /** The BullMQ job's id: the same on every retry of this delivery. */
  deliveryId: string;
  /** 1-based. */
  attempt: number;
  attempts: number;
  /** The job's backoff base: when the next attempt runs is recorded from it. */
  retryBaseMs: number;
}

/** What became of an attempt: `retry` asks the queue to try again after its backoff. */
export type DeliveryOutcome =
  | { status: 'delivered' | 'failed' | 'refused'; retry: false; detail: string }
  | { status: 'retrying'; retry: true; detail: string }
  | { status: 'gone'; retry: false; detail: string };

export class WebhookDeliveries {
  private readonly box: WebhookSecretBox | null;

  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly producer: QueueProducer,
    private readonly options: WebhookDeliveryOptions,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.box = options.secretKey ? new WebhookSecretBox(options.secretKey) : null;
  }

  /** Enqueues a delivery per subscribed webhook; returns how many. */
  async notify(job: NotifyWebhooksJob): Promise<number> {
    if (!this.box) return 0;
    const { adventureId, userId, event, messageId, data } = job;
    const subscribed = await this.webhooks.subscribedTo(userId, adventureId, event);
    for (const webhook of subscribed) {
      await this.producer.enqueue(JobName.DeliverWebhook, {
        webhookId: webhook.id,
        event,
        messageId,
        data,
      });
    }
    return subscribed.length;
  }

  async deliver(job: DeliverWebhookJob, info: DeliveryAttemptInfo): Promise<DeliveryOutcome> {
    const webhook = await this.webhooks.forDelivery(job.webhookId);
    if (!webhook || !this.box) {
      return {
        status: 'gone',
        retry: false,
        detail: 'the webhook was deleted (or webhooks are off)',
      };
    }
    const secret = this.box.open(webhook.sealedSecret, webhook.id);
    const started = this.now();
    const attempt = { ...info, started };
    const signed = signedRequest(secret, {
      id: job.messageId,
      type: job.event,
      timestamp: started,
      data: job.data,
    });
    let result: SendResult;
    try {
      result = await sendSigned(webhook.url, signed, this.options);
    } catch (error) {
      if (!(error instanceof WebhookTargetError)) throw error;
      // The name points somewhere it may not go now: never sent, never retried.
      await this.record(job, attempt, 'refused', { durationMs: 0, error: error.message });
      return { status: 'refused', retry: false, detail: error.message };
    }
    if (result.answered && result.status >= 200 && result.status < 300) {
      await this.record(job, attempt, 'delivered', result);
      return { status: 'delivered', retry: false, detail: `answered ${result.status}` };
    }
    const detail = result.answered ? `answered ${result.status}` : result.error;
    const last = info.attempt >= info.attempts;
    await this.record(job, attempt, last ? 'failed' : 'retrying', result);
    return last
      ? { status: 'failed', retry: false, detail }
      : { status: 'retrying', retry: true, detail };
  }

  private async record(
    job: DeliverWebhookJob,
    info: DeliveryAttemptInfo & { started: Date },
    status: DeliveryStatus,
    result: { status?: number; durationMs: number; error?: string },
  ): Promise<void> {
    await this.webhooks.recordAttempt({
      webhookId: job.webhookId,
      deliveryId: info.deliveryId,
      messageId: job.messageId,
      event: job.event,
      attempt: info.attempt,
      status,
      responseStatus: result.status ?? null,
      durationMs: result.durationMs,
      error: result.error ?? null,
      // BullMQ schedules the retry when the attempt ends, from then
      nextAttemptAt:
        status === 'retrying'
          ? new Date(this.now().getTime() + exponentialRetryMs(info.attempt, info.retryBaseMs))
          : null,
      attemptedAt: info.started,
    });
  }
}
