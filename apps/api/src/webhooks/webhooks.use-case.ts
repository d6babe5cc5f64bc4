import { randomUUID } from 'node:crypto';
import { Inject, Injectable, ServiceUnavailableException } from '@nestjs/common';
import { AdventureOwners } from '@chronicle/accounts';
import { InvalidCommandError, LimitExceededError, NotFoundError } from '@chronicle/adventure';
import {
  checkWebhookTarget,
  newWebhookSecret,
  WEBHOOK_OPTIONS,
  WebhookSecretBox,
  WebhooksRepository,
  WebhookTargetError,
  type DeliveryAttempt,
  type Webhook,
  type WebhookDeliveryOptions,
} from '@chronicle/webhooks';
import type {
  CreatedWebhookView,
  CreateWebhookDto,
  DeliveryAttemptView,
  WebhookView,
} from './webhook.dto';

/** Webhooks one user may have at once. */
export const WEBHOOKS_PER_USER = 20;
/** Attempts a delivery log answers with. */
const DELIVERIES_SHOWN = 100;

/** An owner's webhooks: register (the secret shown once), list, delete, read the delivery log. */
@Injectable()
export class WebhooksUseCase {
  private readonly box: WebhookSecretBox | null;

  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly owners: AdventureOwners,
    @Inject(WEBHOOK_OPTIONS) private readonly options: WebhookDeliveryOptions,
  ) {
    this.box = options.secretKey ? new WebhookSecretBox(options.secretKey) : null;
  }

  async create(userId: string, body: CreateWebhookDto): Promise<CreatedWebhookView> {
    const box = this.requireOn();
    if (
      body.adventureId !== undefined &&
      !(await this.owners.isOwnedBy(body.adventureId, userId))
    ) {
      throw new NotFoundError(`adventure ${body.adventureId} not found`);
    }
    let url: string;
    try {
      ({ url } = await checkWebhookTarget(body.url, this.options));
    } catch (error) {
      if (error instanceof WebhookTargetError) throw new InvalidCommandError(error.message);
      throw error;
    }
    if ((await this.webhooks.countOwnedBy(userId)) >= WEBHOOKS_PER_USER) {
      throw new LimitExceededError(
        `a user has at most ${WEBHOOKS_PER_USER} webhooks; delete one first`,
      );
    }
    const id = randomUUID();
    const secret = newWebhookSecret();
    const webhook = await this.webhooks.create({
      id,
      userId,
      adventureId: body.adventureId ?? null,
      url,
      events: body.events,
      description: body.description ?? '',
      sealedSecret: box.seal(secret, id),
    });
    return { ...viewOf(webhook), secret };
  }

  async list(userId: string): Promise<{ webhooks: WebhookView[] }> {
    this.requireOn();
    return { webhooks: (await this.webhooks.listOwnedBy(userId)).map(viewOf) };
  }

  async get(userId: string, id: string): Promise<WebhookView> {
    this.requireOn();
    return viewOf(await this.owned(userId, id));
  }

  async delete(userId: string, id: string): Promise<void> {
    this.requireOn();
    if (!(await this.webhooks.delete(userId, id)))
      throw new NotFoundError(`webhook ${id} not found`);
  }

  async deliveries(userId: string, id: string): Promise<{ deliveries: DeliveryAttemptView[] }> {
    this.requireOn();
    await this.owned(userId, id);
    const attempts = await this.webhooks.attempts(id, DELIVERIES_SHOWN);
    return { deliveries: attempts.map(attemptViewOf) };
  }

  private async owned(userId: string, id: string): Promise<Webhook> {
    const webhook = await this.webhooks.ownedBy(userId, id);
    if (!webhook) throw new NotFoundError(`webhook ${id} not found`);
    return webhook;
  }

  private requireOn(): WebhookSecretBox {
    if (!this.box) {
      throw new ServiceUnavailableException(
        'webhooks are off on this server: its operator sets WEBHOOKS_SECRET_KEY to turn them on',
      );
    }
    return this.box;
  }
}

function viewOf(webhook: Webhook): WebhookView {
  return {
    id: webhook.id,
    url: webhook.url,
    events: webhook.events,
    adventureId: webhook.adventureId,
    description: webhook.description,
    createdAt: webhook.createdAt.toISOString(),
  };
}

function attemptViewOf(attempt: DeliveryAttempt): DeliveryAttemptView {
  return {
    deliveryId: attempt.deliveryId,
    messageId: attempt.messageId,
    event: attempt.event,
    attempt: attempt.attempt,
    status: attempt.status,
    responseStatus: attempt.responseStatus,
    durationMs: attempt.durationMs,
    error: attempt.error,
    nextAttemptAt: attempt.nextAttemptAt?.toISOString() ?? null,
    attemptedAt: attempt.attemptedAt.toISOString(),
  };
}
