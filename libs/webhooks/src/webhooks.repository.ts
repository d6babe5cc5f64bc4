// The webhooks and their delivery log (see the 20261206030000 migration). Rows are the owner's:
// every read and delete names the user, so another user's webhook reads as none.
import { sql, type Kysely } from 'kysely';
import type { Database } from '@chronicle/event-store';

export interface Webhook {
  id: string;
  userId: string;
  /** null: every adventure of the owner. */
  adventureId: string | null;
  url: string;
  events: string[];
  description: string;
  createdAt: Date;
}

/** A webhook as its deliveries need it: with its sealed secret. */
export interface WebhookWithSecret extends Webhook {
  sealedSecret: Buffer;
}

export type DeliveryStatus = 'delivered' | 'retrying' | 'failed' | 'refused';

/** One attempt of one delivery. */
export interface DeliveryAttempt {
  webhookId: string;
  deliveryId: string;
  messageId: string;
  event: string;
  attempt: number;
  status: DeliveryStatus;
  /** The receiver's HTTP status; null when it did not answer (or the target was refused). */
  responseStatus: number | null;
  durationMs: number;
  error: string | null;
  /** When the next attempt runs; null when this one was the last. */
  nextAttemptAt: Date | null;
  /** When the attempt started. */
  attemptedAt: Date;
}

export class WebhooksRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async create(webhook: Omit<WebhookWithSecret, 'createdAt'>): Promise<Webhook> {
    const row = await this.db
      .insertInto('webhooks')
      .values({
        id: webhook.id,
        user_id: webhook.userId,
        adventure_id: webhook.adventureId,
        url: webhook.url,
        events: webhook.events,
        description: webhook.description,
        sealed_secret: webhook.sealedSecret,
        deleted_at: null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return webhookOf(row);
  }

  async countOwnedBy(userId: string): Promise<number> {
    const row = await this.db
      .selectFrom('webhooks')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('user_id', '=', userId)
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  async listOwnedBy(userId: string): Promise<Webhook[]> {
    const rows = await this.db
      .selectFrom('webhooks')
      .selectAll()
      .where('user_id', '=', userId)
      .where('deleted_at', 'is', null)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(webhookOf);
  }

  async ownedBy(userId: string, id: string): Promise<Webhook | null> {
    const row = await this.db
      .selectFrom('webhooks')
      .selectAll()
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return row ? webhookOf(row) : null;
  }

  /** Deleted: no new deliveries, none retried; its log stays until the user goes. */
  async delete(userId: string, id: string): Promise<boolean> {
    const result = await this.db
      .updateTable('webhooks')
      .set({ deleted_at: sql<Date>`now()` })
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** The owner's live webhooks told of `event` on `adventureId`. */
  async subscribedTo(userId: string, adventureId: string, event: string): Promise<Webhook[]> {
    const rows = await this.db
      .selectFrom('webhooks')
      .selectAll()
      .where('user_id', '=', userId)
      .where('deleted_at', 'is', null)
      .where((eb) => eb.or([eb('adventure_id', 'is', null), eb('adventure_id', '=', adventureId)]))
      .where(sql<boolean>`${event} = ANY(events)`)
      .orderBy('id')
      .execute();
    return rows.map(webhookOf);
  }

  /** A live webhook with its sealed secret, for a delivery; null once deleted. */
  async forDelivery(id: string): Promise<WebhookWithSecret | null> {
    const row = await this.db
      .selectFrom('webhooks')
      .selectAll()
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return row ? { ...webhookOf(row), sealedSecret: row.sealed_secret } : null;
  }

  /** Records an attempt; the same attempt recorded twice (a redelivered job) keeps the last. */
  async recordAttempt(attempt: DeliveryAttempt): Promise<void> {
    const values = {
      webhook_id: attempt.webhookId,
      delivery_id: attempt.deliveryId,
      message_id: attempt.messageId,
      event_type: attempt.event,
      attempt: attempt.attempt,
      status: attempt.status,
      response_status: attempt.responseStatus,
      duration_ms: attempt.durationMs,
      error: attempt.error,
      next_attempt_at: attempt.nextAttemptAt,
      attempted_at: attempt.attemptedAt,
    };
    await this.db
      .insertInto('webhook_deliveries')
      .values(values)
      .onConflict((oc) =>
        oc.columns(['webhook_id', 'delivery_id', 'attempt']).doUpdateSet({
          status: values.status,
          response_status: values.response_status,
          duration_ms: values.duration_ms,
          error: values.error,
          next_attempt_at: values.next_attempt_at,
          attempted_at: values.attempted_at,
        }),
      )
      .execute();
  }

  /** A webhook's attempts, newest first. */
  async attempts(webhookId: string, limit: number): Promise<DeliveryAttempt[]> {
    const rows = await this.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('webhook_id', '=', webhookId)
      .orderBy('attempted_at', 'desc')
      .orderBy('attempt', 'desc')
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      webhookId: row.webhook_id,
      deliveryId: row.delivery_id,
      messageId: row.message_id,
      event: row.event_type,
      attempt: row.attempt,
      status: row.status as DeliveryStatus,
      responseStatus: row.response_status,
      durationMs: row.duration_ms,
      error: row.error,
      nextAttemptAt: row.next_attempt_at,
      attemptedAt: row.attempted_at,
    }));
  }
}

function webhookOf(row: {
  id: string;
  user_id: string;
  adventure_id: string | null;
  url: string;
  events: string[];
  description: string;
  created_at: Date;
}): Webhook {
  return {
    id: row.id,
    userId: row.user_id,
    adventureId: row.adventure_id,
    url: row.url,
    events: row.events,
    description: row.description,
    createdAt: row.created_at,
  };
}
