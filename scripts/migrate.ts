// `npm run migrate`: applies pending migrations (the apps also do this at
// start-up, under the same advisory lock).
import { createDatabase, migrateToLatest } from '@chronicle/event-store';
import { ensurePostgres, loadConfig, ServiceUnavailableError } from '@chronicle/platform';

async function main(): Promise<void> {
  const config = loadConfig();
  await ensurePostgres(config.databaseUrl);
  const db = createDatabase(config.databaseUrl, 1);
  try {
    const { applied } = await migrateToLatest(db);
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
  } finally {
    await db.destroy();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof ServiceUnavailableError ? error.message : error);
  process.exit(1);
});
