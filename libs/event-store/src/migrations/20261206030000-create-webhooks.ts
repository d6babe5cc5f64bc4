/* eslint-disable @typescript-eslint/no-explicit-any -- a migration runs on Kysely<any>: it must keep working when today's Database type changes. */
import { type Kysely, sql } from 'kysely';

// Signed webhooks (libs/webhooks). A registration belongs to its owner, not to an adventure: it
// covers all their adventures (adventure_id null) or one, so it is an accounts-like row, not an
// adventure's event. The signing secret has to be kept in a form that can sign (an HMAC key,
// unlike an API key's hash): it is stored sealed (AES-256-GCM under WEBHOOKS_SECRET_KEY, which
// the database never holds), so a leaked dump alone cannot forge deliveries.
//
// webhook_deliveries holds one row per attempt (the owner's delivery log): the delivery id is
// the BullMQ job's, the same on every retry of one message to one webhook, and the message id
// is what the receiver sees as `webhook-id`.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE webhooks (
      id uuid PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users (id),
      adventure_id text,
      url text NOT NULL,
      events text[] NOT NULL,
      description text NOT NULL DEFAULT '',
      sealed_secret bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      deleted_at timestamptz
    )
  `.execute(db);
  await sql`CREATE INDEX webhooks_user_idx ON webhooks (user_id) WHERE deleted_at IS NULL`.execute(
    db,
  );
  await sql`
    CREATE TABLE webhook_deliveries (
      webhook_id uuid NOT NULL REFERENCES webhooks (id),
      delivery_id text NOT NULL,
      message_id text NOT NULL,
      event_type text NOT NULL,
      attempt integer NOT NULL,
      status text NOT NULL,
      response_status integer,
      duration_ms integer NOT NULL,
      error text,
      next_attempt_at timestamptz,
      attempted_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (webhook_id, delivery_id, attempt)
    )
  `.execute(db);
  await sql`CREATE INDEX webhook_deliveries_recent_idx ON webhook_deliveries (webhook_id, attempted_at DESC)`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE webhook_deliveries`.execute(db);
  await sql`DROP TABLE webhooks`.execute(db);
}
