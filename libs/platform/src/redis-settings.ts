// The Redis settings Chronicle depends on. BullMQ keeps jobs as keys, so an eviction policy
// other than noeviction lets Redis drop a job, a lock or a turn's fence under memory pressure
// (the reconciler would repair turns, slowly and at a cost); without AOF a restart loses every
// job since the last snapshot. Read with CONFIG GET; a server that refuses CONFIG (some managed
// services) reads as unknown and is reported, not refused.
import type Redis from 'ioredis';

export interface RedisSettings {
  /** null: the server would not say */
  maxmemoryPolicy: string | null;
  appendOnly: boolean | null;
}

export interface RedisSettingsVerdict {
  /** Set when the settings are unsafe: /health answers 503 with it. */
  problem?: string;
  /** Worth an operator's attention, not a failure. */
  warnings: string[];
}

export async function readRedisSettings(redis: Redis): Promise<RedisSettings> {
  const read = async (name: string): Promise<string | null> => {
    try {
      const reply = (await redis.config('GET', name)) as string[];
      return reply.length >= 2 ? reply[1] : null;
    } catch {
      return null;
    }
  };
  const [maxmemoryPolicy, appendOnly] = await Promise.all([
    read('maxmemory-policy'),
    read('appendonly'),
  ]);
  return { maxmemoryPolicy, appendOnly: appendOnly === null ? null : appendOnly === 'yes' };
}

export function judgeRedisSettings(settings: RedisSettings): RedisSettingsVerdict {
  const warnings: string[] = [];
  let problem: string | undefined;
  if (settings.maxmemoryPolicy === null) {
    warnings.push(
      'could not read Redis maxmemory-policy (CONFIG GET refused); it must be noeviction',
    );
  } else if (settings.maxmemoryPolicy !== 'noeviction') {
    problem = `Redis maxmemory-policy is ${settings.maxmemoryPolicy}; Chronicle requires noeviction (an evicting Redis may drop queued turns): set maxmemory-policy noeviction`;
  }
  if (settings.appendOnly === false) {
    warnings.push(
      'Redis AOF is off (appendonly no): a Redis restart loses the queued jobs since the last snapshot; the reconciler re-enqueues lost turns from Postgres, but set appendonly yes in production',
    );
  }
  return { problem, warnings };
}
