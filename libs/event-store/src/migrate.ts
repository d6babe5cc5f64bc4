// Migrations run at start-up by every app and by `npm run migrate`. A session
// advisory lock on one dedicated connection makes concurrent starters take
// turns: the first migrates, the others wait, then find nothing to do.
// (Kysely's own migration lock is taken inside a transaction after it has
// already created its bookkeeping tables, which two fresh processes can race.)
import { type Kysely, type MigrationResultSet, Migrator, sql } from 'kysely';
import { createDatabase, type Database } from './database';
import { migrations } from './migrations';

/** An arbitrary constant, the same in every process: "chronicle migrations". */
const MIGRATION_LOCK_KEY = 7_301_884_112_019_623n;
const LOCK_TIMEOUT = '120s';

export interface MigrationReport {
  applied: string[];
}

export async function migrateToLatest(db: Kysely<Database>): Promise<MigrationReport> {
  return db.connection().execute(async (connection) => {
    // Bounded wait: a migration stuck elsewhere fails this start-up with a
    // message instead of hanging it.
    await sql`SELECT set_config('lock_timeout', ${LOCK_TIMEOUT}, false)`.execute(connection);
    await sql`SELECT pg_advisory_lock(${MIGRATION_LOCK_KEY.toString()}::bigint)`.execute(
      connection,
    );
    try {
      const migrator = new Migrator({
        db: connection,
        provider: { getMigrations: async () => migrations },
      });
      const result: MigrationResultSet = await migrator.migrateToLatest();
      if (result.error) {
        const failed = result.results?.find((r) => r.status === 'Error')?.migrationName;
        const reason = result.error instanceof Error ? result.error.message : String(result.error);
        throw new Error(`migration ${failed ?? '(before any migration ran)'} failed: ${reason}`, {
          cause: result.error,
        });
      }
      return {
        applied: (result.results ?? [])
          .filter((r) => r.status === 'Success')
          .map((r) => r.migrationName),
      };
    } finally {
      await sql`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY.toString()}::bigint)`.execute(
        connection,
      );
      await sql`RESET lock_timeout`.execute(connection);
    }
  });
}

/** Migrates the database at `databaseUrl` on a connection of its own, then closes it. */
export async function migrateDatabase(databaseUrl: string): Promise<void> {
  const db = createDatabase(databaseUrl, 1);
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
}
