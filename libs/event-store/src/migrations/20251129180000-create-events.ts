/* eslint-disable @typescript-eslint/no-explicit-any -- a migration runs on Kysely<any>: it must keep working when today's Database type changes. */
import { type Kysely, sql } from 'kysely';

// `streams` holds each stream's current version. Its row is the per-stream
// lock: appends to one stream queue on it, appends to different streams never
// wait for each other, and the current version is one index lookup.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE streams (
      stream_id text PRIMARY KEY,
      version integer NOT NULL CHECK (version >= 0),
      updated_at timestamptz NOT NULL DEFAULT now()
    )
  `.execute(db);

  // tx_id records the writing transaction so the global reader can tell which
  // positions may still be filled by a transaction that has not committed yet
  // (see readAll in event-store.repository.ts).
  await sql`
    CREATE TABLE events (
      position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      stream_id text NOT NULL,
      version integer NOT NULL CHECK (version >= 1),
      event_id uuid NOT NULL,
      type text NOT NULL,
      schema_version integer NOT NULL CHECK (schema_version >= 1),
      data jsonb NOT NULL,
      metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
      recorded_at timestamptz NOT NULL DEFAULT now(),
      tx_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
      CONSTRAINT events_stream_version_key UNIQUE (stream_id, version),
      CONSTRAINT events_stream_event_id_key UNIQUE (stream_id, event_id)
    )
  `.execute(db);

  await sql`CREATE INDEX events_tx_id_position_idx ON events (tx_id, position)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE events`.execute(db);
  await sql`DROP TABLE streams`.execute(db);
}
