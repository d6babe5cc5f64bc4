import { RedisScript, redisKeys, type RedisClient } from '@chronicle/platform';

// One memory pass per adventure at a time, across every memory worker. BullMQ's deduplication
// (keepLastIfActive) already keeps one job per adventure active, so this lock is the guard for
// what deduplication does not see: a job whose BullMQ lock expired while it was still running
// (and is re-run elsewhere), and two workers with concurrency > 1 racing after a stale key is
// recovered. The holder is the job id: a job that is redelivered after its worker died takes its
// own lock back at once instead of waiting for the lock to expire.

/** Long enough for a pass (a few model calls); a dead holder's lock goes away after this. */
export const ADVENTURE_LOCK_MS = 10 * 60 * 1000;

// Take the lock when free or already ours; refresh its expiry either way.
const ACQUIRE = new RedisScript(
  `
local holder = redis.call('GET', KEYS[1])
if holder == false or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0`,
  1,
);

// Release only a lock we hold: an expired lock may already be someone else's.
const RELEASE = new RedisScript(
  `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`,
  1,
);

export class AdventureLock {
  constructor(
    private readonly redis: RedisClient,
    /** The installation's queue prefix, so test runs and installations never share locks. */
    private readonly prefix: string,
    private readonly ttlMs = ADVENTURE_LOCK_MS,
  ) {}

  key(adventureId: string): string {
    return redisKeys.memoryLock(this.prefix, adventureId);
  }

  /** True when `holder` now holds the adventure's lock. */
  async acquire(adventureId: string, holder: string): Promise<boolean> {
    const taken = await ACQUIRE.run(this.redis, this.key(adventureId), holder, this.ttlMs);
    return taken === 1;
  }

  async release(adventureId: string, holder: string): Promise<void> {
    await RELEASE.run(this.redis, this.key(adventureId), holder);
  }
}
