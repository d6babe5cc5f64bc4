import { createHash } from 'node:crypto';
import type { RedisClient } from './redis-connection.factory';

/**
 * A Lua script run by its SHA1 (EVALSHA), its text sent only when the server answers NOSCRIPT
 * (a restarted or flushed Redis, a cluster node that has not seen it yet): then EVAL, which also
 * caches it there. A turn runs a dozen scripts; EVAL sent each one's whole text every time and had
 * Redis hash it again. NOSCRIPT means the script did not run, so the EVAL after it runs it once.
 *
 * Not for calls that are sent one after another without waiting and must run in that order (the
 * turn stream's numbered batches): a call's EVAL after its NOSCRIPT would run after a later call
 * that found the script cached by then, so a batch would land behind the next one (and be
 * skipped as already written). Those are `inOrder`: always sent whole, by EVAL.
 */
export class RedisScript {
  readonly sha: string;

  constructor(
    readonly lua: string,
    /** How many of `run`'s arguments are keys (KEYS); the rest are ARGV. */
    readonly numberOfKeys: number,
    private readonly options: { inOrder?: boolean } = {},
  ) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  /** EVALSHA with these keys, then arguments, as EVAL takes them after its key count. */
  async run(redis: RedisClient, ...keysAndArgs: (string | number)[]): Promise<unknown> {
    if (this.options.inOrder) return redis.eval(this.lua, this.numberOfKeys, ...keysAndArgs);
    try {
      return await redis.evalsha(this.sha, this.numberOfKeys, ...keysAndArgs);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(this.lua, this.numberOfKeys, ...keysAndArgs);
    }
  }
}
