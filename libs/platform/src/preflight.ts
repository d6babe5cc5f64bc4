import { Client } from 'pg';
import { createProbeConnection, isClusterClient } from './redis-connection.factory';
import { judgeRedisSettings, readRedisSettings } from './redis-settings';
import { describeRedisUrl, isClusterUrl } from './redis-target';
import type { AppConfig } from './config';

// Checked before Nest boots: a missing service is the most common first-run
// problem, and it deserves one sentence naming the service and how to start
// it, not a wall of reconnect stack traces.

export class ServiceUnavailableError extends Error {
  constructor(
    readonly service: 'Postgres' | 'Redis',
    message: string,
  ) {
    super(message);
    this.name = 'ServiceUnavailableError';
  }
}

const PREFLIGHT_TIMEOUT_MS = 5000;
/** One cluster master's answer at start-up. */
const NODE_TIMEOUT_MS = 2000;

function bounded<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function describe(error: unknown): string {
  const e = error as { code?: string; message?: string };
  return e.code ?? e.message ?? String(error);
}

function where(connection: string): string {
  const url = new URL(connection);
  return `${url.hostname}:${url.port || 5432}`;
}

/** Connects to Postgres; creates the configured database when the server answers but it is missing. */
export async function ensurePostgres(databaseUrl: string): Promise<void> {
  const target = new URL(databaseUrl);
  const database = decodeURIComponent(target.pathname.replace(/^\//, '')) || 'postgres';
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new Client({
    connectionString: admin.toString(),
    connectionTimeoutMillis: PREFLIGHT_TIMEOUT_MS,
  });
  try {
    await client.connect();
  } catch (error) {
    throw new ServiceUnavailableError(
      'Postgres',
      `Postgres is not answering at ${where(databaseUrl)} (${describe(error)}). Start it ` +
        `(Debian: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start; ` +
        `Docker: docker compose up -d postgres) or point DATABASE_URL at a running server.`,
    );
  }
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`).catch((error) => {
        // Another process starting at the same moment may have created it:
        // Postgres reports that as duplicate_database (42P04) or, when the two
        // CREATEs race inside the catalog, as a unique violation (23505).
        const code = (error as { code?: string }).code;
        if (code !== '42P04' && code !== '23505') throw error;
      });
    }
  } finally {
    await client.end();
  }
}

/** What start-up found wrong with Redis's settings: logged, and /health reports the problem. */
export interface RedisSettingsReport {
  problem?: string;
  warnings: string[];
}

export async function ensureRedis(redisUrl: string): Promise<RedisSettingsReport> {
  const redis = createProbeConnection(redisUrl, PREFLIGHT_TIMEOUT_MS);
  try {
    // bounded: a cluster with a dead master may hold a command for it past every retry
    await bounded(redis.connect(), PREFLIGHT_TIMEOUT_MS);
    await bounded(redis.ping(), PREFLIGHT_TIMEOUT_MS);
  } catch (error) {
    redis.disconnect();
    throw new ServiceUnavailableError(
      'Redis',
      isClusterUrl(redisUrl)
        ? `Redis is not answering at ${describeRedisUrl(redisUrl)} (${describe(error)}). ` +
            `Start its nodes or point REDIS_URL at a running cluster (any of its masters as seeds).`
        : `Redis is not answering at ${describeRedisUrl(redisUrl)} (${describe(error)}). Start it ` +
            `(redis-server --daemonize yes --bind 127.0.0.1 --port 6379; ` +
            `Docker: docker compose up -d redis) or point REDIS_URL at a running server.`,
    );
  }
  try {
    if (isClusterClient(redis)) {
      // A cluster that is up but not serving every slot (a master down, slots unassigned)
      // answers some keys and refuses others: a start-up against it would fail at random. Every
      // master is asked, each within a bound (a dead one would hold its command forever).
      for (const node of redis.nodes('master')) {
        const info = await bounded(node.cluster('INFO'), NODE_TIMEOUT_MS).then(String, describe);
        const state = /cluster_state:(\w+)/.exec(info)?.[1];
        if (state !== 'ok') {
          throw new ServiceUnavailableError(
            'Redis',
            `the Redis Cluster at ${describeRedisUrl(redisUrl)} is not serving every slot ` +
              `(master ${node.options.host}:${node.options.port}: ${state ? `cluster_state:${state}` : info}); ` +
              `fix it (redis-cli --cluster check host:port) and start again.`,
          );
        }
      }
    }
    return judgeRedisSettings(await readRedisSettings(redis));
  } finally {
    // a probe has nothing to flush; QUIT to a dead cluster master would wait for it
    redis.disconnect();
  }
}

export async function ensureServices(
  config: Pick<AppConfig, 'databaseUrl' | 'redisUrl'>,
): Promise<RedisSettingsReport> {
  await ensurePostgres(config.databaseUrl);
  return ensureRedis(config.redisUrl);
}
