/* eslint-disable @typescript-eslint/no-explicit-any -- a migration runs on Kysely<any>: it must keep working when today's Database type changes. */
import { type Kysely, sql } from 'kysely';

// Accounts for hosted use (issue 8): users and their API keys. A key is shown once and stored as
// the sha256 of its secret; the prefix, also printed in the key, finds the row without a scan.
// Ownership and token usage are not copied into tables of their own: they are read from the
// log through two partial indexes, so there is no second write that could disagree with it.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE users (
      id uuid PRIMARY KEY,
      name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      daily_token_budget integer CHECK (daily_token_budget >= 0)
    )
  `.execute(db);
  await sql`
    CREATE TABLE api_keys (
      id uuid PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users (id),
      prefix text NOT NULL UNIQUE,
      secret_hash bytea NOT NULL,
      name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz,
      last_used_at timestamptz
    )
  `.execute(db);
  await sql`CREATE INDEX api_keys_user_id ON api_keys (user_id)`.execute(db);
  // Who owns an adventure, how many a user owns, and the list of them: AdventureCreated names
  // the owner.
  await sql`
    CREATE INDEX events_adventure_owner ON events ((data ->> 'ownerId'), stream_id)
    WHERE type = 'AdventureCreated'
  `.execute(db);
  // A user's model tokens today: the narrations of their adventures since midnight UTC.
  await sql`
    CREATE INDEX events_narrated_at ON events (stream_id, recorded_at) WHERE type = 'Narrated'
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX events_narrated_at`.execute(db);
  await sql`DROP INDEX events_adventure_owner`.execute(db);
  await sql`DROP TABLE api_keys`.execute(db);
  await sql`DROP TABLE users`.execute(db);
}
