/* eslint-disable @typescript-eslint/no-explicit-any -- a migration runs on Kysely<any>: it must keep working when today's Database type changes. */
import { type Kysely, sql } from 'kysely';

// Snapshots are stored compressed, in a new bytea column `packed`: the snapshot's JSON, brotli-
// compressed by the process (see SnapshotRepository). A 10,000-event adventure's snapshot was
// ~1 MB of text whose fetch alone cost more than the 10 ms a load may take (issue 7); packed it is
// a few tens of KB. Stored EXTERNAL: the bytes are already compressed, so the server should not
// try again.
//
// A new column rather than a new type for `state`, which becomes nullable: a process still on the
// previous release keeps reading and writing `state` while the new one rolls out, and each
// ignores the other's rows (a load without a readable snapshot folds the log and writes one).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE snapshots ADD COLUMN packed bytea`.execute(db);
  await sql`ALTER TABLE snapshots ALTER COLUMN packed SET STORAGE EXTERNAL`.execute(db);
  await sql`ALTER TABLE snapshots ALTER COLUMN state DROP NOT NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // A snapshot is a shortcut, never the truth: the packed-only rows can simply go.
  await sql`DELETE FROM snapshots WHERE state IS NULL`.execute(db);
  await sql`ALTER TABLE snapshots ALTER COLUMN state SET NOT NULL`.execute(db);
  await sql`ALTER TABLE snapshots DROP COLUMN packed`.execute(db);
}
