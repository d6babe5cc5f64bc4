// The Redis settings Chronicle depends on. BullMQ keeps jobs as keys, so an eviction policy
// other than noeviction lets Redis drop a job, a lock or a turn's fence under memory pressure
// (the reconciler would repair turns, slowly and at a cost); without AOF a restart loses every
// job since the last snapshot. Read with CONFIG GET; a server that refuses CONFIG (some managed
// services) reads as unknown and is reported, not refused. On a Redis Cluster every master holds
// some of the jobs, so every master is read, and the report is the worst of them, naming it.
import type Redis from 'ioredis';
import { isClusterClient, type RedisClient } from './redis-connection.factory';

export interface RedisSettings {
  /** null: the server would not say */
  maxmemoryPolicy: string | null;
  appendOnly: boolean | null;
  /** On a cluster: the master whose settings these are (the first that is unsafe, if any). */
  node?: string;
  /** On a cluster: how many masters were read. */
  masters?: number;
  /** On a cluster: a master that did not answer (its jobs cannot be reached). */
  unanswered?: string;
}

/** How long one cluster master may take to answer CONFIG GET. */
const MASTER_TIMEOUT_MS = 800;

export interface RedisSettingsVerdict {
  /** Set when the settings are unsafe: /health answers 503 with it. */
  problem?: string;
  /** Worth an operator's attention, not a failure. */
  warnings: string[];
}

export async function readRedisSettings(redis: RedisClient): Promise<RedisSettings> {
  if (!isClusterClient(redis)) return (await readServerSettings(redis)) as RedisSettings;
  const masters = redis.nodes('master');
  if (masters.length === 0) return { maxmemoryPolicy: null, appendOnly: null, masters: 0 };
  const read = await Promise.all(
    masters.map(async (node) => {
      const address = `${node.options.host}:${node.options.port}`;
      let timer: NodeJS.Timeout | undefined;
      const silent = new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), MASTER_TIMEOUT_MS);
      });
      const settings = await Promise.race([readServerSettings(node, true), silent]);
      clearTimeout(timer);
      return settings
        ? { ...settings, node: address }
        : { maxmemoryPolicy: null, appendOnly: null, node: address, unanswered: address };
    }),
  );
  const unanswered = read.find((s) => s.unanswered);
  if (unanswered) return { ...unanswered, masters: read.length };
  const worst =
    read.find((s) => s.maxmemoryPolicy !== null && s.maxmemoryPolicy !== 'noeviction') ??
    read.find((s) => s.maxmemoryPolicy === null) ??
    read.find((s) => s.appendOnly === false) ??
    read.find((s) => s.appendOnly === null) ??
    read[0];
  return { ...worst, masters: read.length };
}

/** `failOnError`: a node that errors is reported as unanswered (a cluster master), not unknown. */
async function readServerSettings(
  redis: Redis,
  failOnError = false,
): Promise<RedisSettings | null> {
  let failed = false;
  const read = async (name: string): Promise<string | null> => {
    try {
      const reply = (await redis.config('GET', name)) as string[];
      return reply.length >= 2 ? reply[1] : null;
    } catch (error) {
      // CONFIG refused (a managed service) reads as unknown; a dead connection as no answer
      if (!/unknown command|NOPERM|not allowed/i.test((error as Error).message)) failed = true;
      return null;
    }
  };
  const [maxmemoryPolicy, appendOnly] = await Promise.all([
    read('maxmemory-policy'),
    read('appendonly'),
  ]);
  if (failOnError && failed) return null;
  return { maxmemoryPolicy, appendOnly: appendOnly === null ? null : appendOnly === 'yes' };
}

export function judgeRedisSettings(settings: RedisSettings): RedisSettingsVerdict {
  const warnings: string[] = [];
  let problem: string | undefined;
  // "Redis" for one server; "Redis master 10.0.0.2:6379" for the cluster's master at fault.
  const redis = settings.node ? `Redis master ${settings.node}` : 'Redis';
  if (settings.unanswered) {
    problem = `Redis master ${settings.unanswered} does not answer: the jobs and streams in its slots cannot be reached`;
  } else if (settings.masters === 0) {
    warnings.push('could not read the Redis Cluster masters (no master known yet)');
  } else if (settings.maxmemoryPolicy === null) {
    warnings.push(
      `could not read ${redis} maxmemory-policy (CONFIG GET refused); it must be noeviction`,
    );
  } else if (settings.maxmemoryPolicy !== 'noeviction') {
    problem = `${redis} maxmemory-policy is ${settings.maxmemoryPolicy}; Chronicle requires noeviction (an evicting Redis may drop queued turns): set maxmemory-policy noeviction${settings.node ? ' on every master' : ''}`;
  }
  if (settings.appendOnly === false) {
    warnings.push(
      `${redis} AOF is off (appendonly no): a Redis restart loses the queued jobs since the last snapshot; the reconciler re-enqueues lost turns from Postgres, but set appendonly yes in production${settings.node ? ' on every master' : ''}`,
    );
  }
  return { problem, warnings };
}
