/* eslint-disable @typescript-eslint/no-explicit-any -- a migration runs on Kysely<any>: it must keep working when today's Database type changes. */
import { type Kysely, sql } from 'kysely';

// Two changes for the replay targets of issue 7:
// - `state` becomes text. A snapshot is written and read whole, never queried inside, and the
//   server's jsonb → text conversion of a 1 MB snapshot alone cost ~41 ms of a load that must
//   take 10; as text it is sent as stored and parsed once, in the process. Stored EXTERNAL
//   (out of line, uncompressed): a snapshot is written once per many events and read on every
//   cold load, so the read should not pay for decompressing it.
// - Several snapshots per stream and projector version, keyed by their version: the latest for
//   loads, plus checkpoints spaced through the log (SnapshotRepository prunes the rest), so a
//   read at an old version folds from the nearest one below instead of from the first event.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE snapshots ALTER COLUMN state TYPE text USING state::text`.execute(db);
  await sql`ALTER TABLE snapshots ALTER COLUMN state SET STORAGE EXTERNAL`.execute(db);
  await sql`ALTER TABLE snapshots DROP CONSTRAINT snapshots_pkey`.execute(db);
  await sql`ALTER TABLE snapshots ADD PRIMARY KEY (stream_id, projector_version, version)`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  // Back to one row per stream and projector version: keep the newest.
  await sql`
    DELETE FROM snapshots s
    USING snapshots newer
    WHERE newer.stream_id = s.stream_id
      AND newer.projector_version = s.projector_version
      AND newer.version > s.version
  `.execute(db);
  await sql`ALTER TABLE snapshots DROP CONSTRAINT snapshots_pkey`.execute(db);
  await sql`ALTER TABLE snapshots ADD PRIMARY KEY (stream_id, projector_version)`.execute(db);
  await sql`ALTER TABLE snapshots ALTER COLUMN state TYPE jsonb USING state::jsonb`.execute(db);
}
