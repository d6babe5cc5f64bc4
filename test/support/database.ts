// Per-file isolation for integration tests: each test file clones its own
// database from the migrated template (made by global-setup.ts) and uses its
// own BullMQ prefix, so files run in parallel and never see each other's rows
// or jobs.
import { randomBytes } from 'node:crypto';
import { basename } from 'node:path';
import {
  isClusterClient,
  openRedis,
  waitForRedis,
} from '../../libs/platform/src/redis-connection.factory';
import { installationKeyPatterns } from '../../libs/platform/src/redis-keys';
import { Client } from 'pg';
import type { Kysely } from 'kysely';
import { createDatabase, type Database } from '../../libs/event-store/src/database';

export const TEST_POSTGRES_URL =
  process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
// Two working trees on one server whose migrations differ need templates of their own.
export const TEMPLATE_DATABASE = process.env.TEST_TEMPLATE_DATABASE ?? 'chronicle_test_template';

export interface TestDatabase {
  db: Kysely<Database>;
  connectionString: string;
  name: string;
  /** Closes the pool and drops the database (leftover connections are terminated). */
  drop(): Promise<void>;
}

/** The URL of database `name` on the test server. */
export function testDatabaseUrl(name: string): string {
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function withAdminClient<T>(fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({
    connectionString: TEST_POSTGRES_URL,
    connectionTimeoutMillis: 3_000,
  });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** `chronicle_test_<file>_<random>`, within Postgres' 63-byte identifier limit. */
function uniqueName(hint?: string): string {
  const source = hint ?? currentTestFile() ?? 'db';
  const slug = source
    .toLowerCase()
    .replace(/\.(int-spec|e2e-spec|spec)\.ts$/, '')
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 34);
  return `chronicle_test_${slug}_${randomBytes(5).toString('hex')}`;
}

function currentTestFile(): string | undefined {
  const state = (
    globalThis as { expect?: { getState(): { testPath?: string } } }
  ).expect?.getState();
  return state?.testPath ? basename(state.testPath) : undefined;
}

export interface TestDatabaseOptions {
  poolSize?: number;
  /** An empty database instead of a clone of the migrated template (to test migrations). */
  empty?: boolean;
}

export async function createTestDatabase(
  name?: string,
  options: TestDatabaseOptions = {},
): Promise<TestDatabase> {
  const dbName = uniqueName(name);
  const template = options.empty ? 'template0' : TEMPLATE_DATABASE;
  await withAdminClient(async (client) => {
    // CREATE DATABASE … TEMPLATE fails while another session is connected to
    // the template (55006), or in the instant another jest run swaps in a
    // fresh template (3D000): retry briefly.
    for (let attempt = 1; ; attempt++) {
      try {
        await client.query(`CREATE DATABASE "${dbName}" TEMPLATE ${template}`);
        return;
      } catch (error) {
        const code = (error as { code?: string }).code;
        if ((code !== '55006' && code !== '3D000') || attempt >= 20) throw error;
        await new Promise((r) => setTimeout(r, 100 * attempt));
      }
    }
  });
  const connectionString = testDatabaseUrl(dbName);
  const db = createDatabase(connectionString, options.poolSize ?? 10);
  let dropped = false;
  return {
    db,
    connectionString,
    name: dbName,
    drop: async () => {
      if (dropped) return;
      dropped = true;
      await db.destroy();
      await withAdminClient((client) =>
        client.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`),
      );
    },
  };
}

/** A BullMQ prefix of this test file's own (no `:` — BullMQ's separator). */
export function testQueuePrefix(hint?: string): string {
  const slug = (hint ?? currentTestFile() ?? 'test')
    .toLowerCase()
    .replace(/\.(int-spec|e2e-spec|spec)\.ts$/, '')
    .replace(/[^a-z0-9]+/g, '-');
  return `chronicle-test-${slug}-${randomBytes(4).toString('hex')}`;
}

/**
 * Deletes every Redis key of a test installation (call in afterAll): its plain keys and its
 * hash-tagged ones (`{<prefix>:…}`), on one server or on every master of a cluster URL.
 */
export async function removeQueueKeys(prefix: string, redisUrl = TEST_REDIS_URL): Promise<void> {
  if (!prefix.startsWith('chronicle-test-'))
    throw new Error(`refusing to delete keys of "${prefix}"`);
  const client = openRedis(redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 2_000 });
  client.on('error', () => undefined);
  try {
    await waitForRedis(client, 5_000);
    const servers = isClusterClient(client) ? client.nodes('master') : [client];
    for (const redis of servers) {
      for (const pattern of installationKeyPatterns(prefix)) {
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
          // a cluster refuses a DEL of keys in different slots: one at a time there
          if (servers[0] === client) {
            if (keys.length > 0) await redis.del(...keys);
          } else {
            for (const key of keys) await redis.del(key);
          }
          cursor = next;
        } while (cursor !== '0');
      }
    }
  } finally {
    client.disconnect();
  }
}
