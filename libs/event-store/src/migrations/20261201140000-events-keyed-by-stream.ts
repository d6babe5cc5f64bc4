/* eslint-disable @typescript-eslint/no-explicit-any -- a migration runs on Kysely<any>: it must keep working when today's Database type changes. */
import { type Kysely, sql } from 'kysely';

// Keeps the way past one Postgres open (docs/partitioning.md): a table partitioned by hash of
// stream_id, or distributed on it (Citus), can only enforce a unique key that includes
// stream_id. `events` had its primary key on `position` alone; it now has it on
// (stream_id, version), the key every read of a stream uses, which was already unique (the
// constraint it replaces). `position` stays an identity column, unique because one sequence
// draws it; nothing looks an event up by position alone (the global reader walks
// (tx_id, position), which keeps its own index). Every unique key of `events` now includes
// stream_id: (stream_id, version) and (stream_id, event_id), the idempotency key.
//
// One index fewer on every append: the (stream_id, version) index serves both roles.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE events DROP CONSTRAINT events_pkey`.execute(db);
  await sql`ALTER TABLE events DROP CONSTRAINT events_stream_version_key`.execute(db);
  await sql`ALTER TABLE events ADD CONSTRAINT events_pkey PRIMARY KEY (stream_id, version)`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE events DROP CONSTRAINT events_pkey`.execute(db);
  await sql`ALTER TABLE events ADD CONSTRAINT events_pkey PRIMARY KEY (position)`.execute(db);
  await sql`
    ALTER TABLE events ADD CONSTRAINT events_stream_version_key UNIQUE (stream_id, version)
  `.execute(db);
}
