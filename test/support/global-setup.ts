// Runs once before every jest run: checks that Postgres and Redis answer (and
// says how to start them if not), then rebuilds the template database that
// each integration test file clones, so the template always carries the
// current migrations. Imports are relative: jest's module aliases do not
// apply to global setup.
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { createDatabase } from '../../libs/event-store/src/database';
import { migrateToLatest } from '../../libs/event-store/src/migrate';
import {
  TEMPLATE_DATABASE,
  TEST_POSTGRES_URL,
  TEST_REDIS_URL,
  testDatabaseUrl,
  withAdminClient,
} from './database';

export default async function globalSetup(): Promise<void> {
  await checkPostgres();
  await checkRedis();
  // Build under a fresh name, then swap it in: another jest run on this
  // machine may be cloning the template right now, and must find one.
  const building = `${TEMPLATE_DATABASE}_${randomBytes(4).toString('hex')}`;
  await withAdminClient((client) => client.query(`CREATE DATABASE ${building}`));
  const db = createDatabase(testDatabaseUrl(building), 1);
  try {
    await migrateToLatest(db);
  } catch (error) {
    await db.destroy();
    await withAdminClient((client) =>
      client.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`),
    );
    throw error;
  }
  // Nobody may stay connected to a template while it is being copied.
  await db.destroy();
  await withAdminClient(async (client) => {
    await client.query('SELECT pg_advisory_lock(7301884112019624)');
    try {
      await client.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DATABASE} WITH (FORCE)`);
      await client.query(`ALTER DATABASE ${building} RENAME TO ${TEMPLATE_DATABASE}`);
    } finally {
      await client.query('SELECT pg_advisory_unlock(7301884112019624)');
    }
  });
}

async function checkPostgres(): Promise<void> {
  try {
    await withAdminClient((client) => client.query('SELECT 1'));
  } catch (error) {
    throw new Error(
      `Postgres does not answer at ${TEST_POSTGRES_URL} (${(error as Error).message}).\n` +
        'Start it (see README.md, Quick start) or point TEST_POSTGRES_URL at a server where user postgres may create databases.',
    );
  }
}

async function checkRedis(): Promise<void> {
  const redis = new Redis(TEST_REDIS_URL, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 2_000,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new Error(
      `Redis does not answer at ${TEST_REDIS_URL} (${(error as Error).message}).\n` +
        'Start it (see README.md, Quick start) or point TEST_REDIS_URL at a running server.',
    );
  } finally {
    redis.disconnect();
  }
}
