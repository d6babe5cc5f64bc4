import { redisKeys, type RedisClient, RedisScript } from '@chronicle/platform';

// Counters in Redis, so a limit holds across every API instance. A fixed window that opens at
// the first request: one atomic script increments the counter and starts its expiry, and the
// time left on that expiry is when the client may try again.

export interface RateLimitResult {
  allowed: boolean;
  /** Whole seconds until the window resets (at least 1). */
  retryAfterSeconds: number;
  remaining: number;
}

const HIT = new RedisScript(
  `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`,
  1,
);

export class RateLimiter {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  /** Counts one request of `subject` in `bucket` against `limit` per `windowSeconds`. */
  async hit(
    bucket: string,
    subject: string,
    limit: number,
    windowSeconds: number,
  ): Promise<RateLimitResult> {
    const key = redisKeys.rateLimit(this.prefix, bucket, subject);
    const [count, ttlMs] = (await HIT.run(this.redis, key, String(windowSeconds * 1000))) as [
      number,
      number,
    ];
    return {
      allowed: count <= limit,
      retryAfterSeconds: Math.max(1, Math.ceil(ttlMs / 1000)),
      remaining: Math.max(0, limit - count),
    };
  }
}
