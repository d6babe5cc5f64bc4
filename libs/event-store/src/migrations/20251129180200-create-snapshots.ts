/* eslint-disable @typescript-eslint/no-explicit-any -- a migration runs on Kysely<any>: it must keep working when today's Database type changes. */
import { type Kysely, sql } from 'kysely';

// One snapshot per stream and projector version: a changed projector reads
// under its new version, finds nothing and rebuilds from the log.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE snapshots (
      stream_id text NOT NULL,
      projector_version integer NOT NULL,
      version integer NOT NULL CHECK (version >= 0),
      state jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (stream_id, projector_version)
    )
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE snapshots`.execute(db);
}
