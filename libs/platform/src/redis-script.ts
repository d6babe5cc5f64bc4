import { createHash } from 'node:crypto';
import type { RedisClient } from './redis-connection.factory';

/**
 * A Lua script run by its SHA1 (EVALSHA), its text sent only when the server answers NOSCRIPT
 * (a restarted or flushed Redis, a cluster node that has not seen it yet): then EVAL, which also
 * caches it there. A turn runs a dozen scripts; EVAL sent each one's whole text every time and had
 * Redis hash it again. NOSCRIPT means the script did not run, so the EVAL after it runs it once.
 */
export class RedisScript {
  readonly sha: string;

  constructor(
    readonly lua: string,
    /** How many of `run`'s arguments are keys (KEYS); the rest are ARGV. */
    readonly numberOfKeys: number,
  ) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  /** EVALSHA with these keys, then arguments, as EVAL takes them after its key count. */
  async run(redis: RedisClient, ...keysAndArgs: (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, this.numberOfKeys, ...keysAndArgs);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(this.lua, this.numberOfKeys, ...keysAndArgs);
    }
  }
}
