// Fairness between users: at most K of one user's turns narrate at once, whichever worker
// process runs them, so one user with a hundred adventures cannot fill every worker ahead of
// everyone else. A lease per running turn, in Redis, with an expiry (a crashed worker's slot
// comes back by itself); the turns over the limit wait in line, oldest first, and the release
// of a slot names the ones to wake. A waiter that stops asking (its job was removed) drops out
// of the line after `staleMs`, so it cannot block the ones behind it.
import { redisKeys, type RedisClient, RedisScript } from '@chronicle/platform';

export type LeaseGrant =
  | { granted: true }
  /** `position`: 1 for the next in line */
  | { granted: false; position: number };

// KEYS[1] leases (zset: job id → lease expiry), KEYS[2] the line (zset: job id → order),
// KEYS[3] when each waiter last asked (zset: job id → ms)
// ARGV: job id, limit, order, lease ms, stale ms
const ACQUIRE = new RedisScript(
  `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local job, limit, leaseMs = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[4])
local keep = leaseMs * 4 + tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local gone = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now - tonumber(ARGV[5]))
for _, member in ipairs(gone) do
  redis.call('ZREM', KEYS[2], member)
  redis.call('ZREM', KEYS[3], member)
end
local function grant()
  local expiry = math.max(now + leaseMs, tonumber(redis.call('ZSCORE', KEYS[1], job)) or 0)
  redis.call('ZADD', KEYS[1], expiry, job)
  redis.call('ZREM', KEYS[2], job)
  redis.call('ZREM', KEYS[3], job)
  for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], math.ceil(math.max(keep, expiry - now + keep))) end
  return {1, 0}
end
if redis.call('ZSCORE', KEYS[1], job) then return grant() end
redis.call('ZADD', KEYS[2], 'NX', tonumber(ARGV[3]), job)
redis.call('ZADD', KEYS[3], now, job)
local free = limit - redis.call('ZCARD', KEYS[1])
local rank = redis.call('ZRANK', KEYS[2], job)
if rank < free then return grant() end
for i = 1, 3 do
  if redis.call('PTTL', KEYS[i]) < keep then redis.call('PEXPIRE', KEYS[i], math.ceil(keep)) end
end
return {0, rank + 1}
`,
  3,
);

// KEYS[1] leases; ARGV: job id, lease expiry in ms from now
const EXTEND = new RedisScript(
  `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZADD', KEYS[1], 'XX', 'CH', now + tonumber(ARGV[2]), ARGV[1])
`,
  1,
);

// KEYS as ACQUIRE; ARGV: job id, limit. Returns the waiters the freed slots are for.
const RELEASE = new RedisScript(
  `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local free = tonumber(ARGV[2]) - redis.call('ZCARD', KEYS[1])
if free <= 0 then return {} end
return redis.call('ZRANGE', KEYS[2], 0, free - 1)
`,
  3,
);

/**
 * A user's keys, under one hash tag (the user's), so each script's three keys sit on one Redis
 * Cluster slot.
 */
export function userLeaseKeys(prefix: string, userId: string): [string, string, string] {
  return [
    redisKeys.userLeases(prefix, userId),
    redisKeys.userLine(prefix, userId),
    redisKeys.userAsked(prefix, userId),
  ];
}

export interface UserLeaseOptions {
  /** K: the turns of one user that narrate at once */
  perUser: number;
  /** how long a lease lasts without renewal (a crashed worker's slot is free after this) */
  leaseMs: number;
  /** a waiter that has not asked for this long leaves the line */
  staleMs: number;
}

export class UserLeases {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    readonly options: UserLeaseOptions,
  ) {}

  /**
   * A slot for `jobId` among `userId`'s, or its place in the line. `order` places it there
   * (the job's creation time: the oldest turn goes first, however often it asked). A job that
   * holds a lease already keeps it (a re-run after a wait).
   */
  async acquire(userId: string, jobId: string, order: number): Promise<LeaseGrant> {
    const [granted, position] = (await ACQUIRE.run(
      this.redis,
      ...userLeaseKeys(this.prefix, userId),
      jobId,
      String(this.options.perUser),
      String(order),
      String(this.options.leaseMs),
      String(this.options.staleMs),
    )) as [number, number];
    return granted === 1 ? { granted: true } : { granted: false, position };
  }

  /** Keeps the lease for `ms` more (a long turn, or one waiting for its provider slot). */
  async extend(userId: string, jobId: string, ms: number): Promise<boolean> {
    const [leases] = userLeaseKeys(this.prefix, userId);
    return Number(await EXTEND.run(this.redis, leases, jobId, String(Math.ceil(ms)))) === 1;
  }

  /** Frees the slot; returns the waiting jobs, oldest first, that the free slots are for. */
  async release(userId: string, jobId: string): Promise<string[]> {
    return (await RELEASE.run(
      this.redis,
      ...userLeaseKeys(this.prefix, userId),
      jobId,
      String(this.options.perUser),
    )) as string[];
  }
}
