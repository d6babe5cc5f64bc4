// A model provider's limits, shared by every worker process through Redis: requests and tokens
// per minute for one provider key, and the pause a 429 asks for. A provider's limit is per key,
// not per worker, so N workers that each kept their own count (or each retried their own 429)
// would multiply what the provider sees.
//
// Each limit is a GCRA (generic cell rate algorithm) bucket: one number, the "theoretical arrival
// time" (tat) at which the bucket is empty again. A request of cost c is admitted when the bucket
// has room for it within the burst (`tat + min(c, burst) <= now + burst`, in ms of the rate) and
// pushes tat on by c. One that does not fit is given the first slot that fits and pushes tat on
// all the same: its place is reserved, so it waits once, exactly as long as it must, and the
// waiting jobs do not all come back at one instant to fight over the next slot. Time is Redis's
// own (TIME), so every process reads one clock.
//
// Tokens are known only after the call, so a request reserves the provider's running average
// (what its recent requests really cost) and `recordUsage` charges the difference when the
// usage arrives: over any stretch of time the bucket is charged what the provider counted.
import { createHash } from 'node:crypto';
import { redisKeys, type RedisClient, RedisScript } from '@chronicle/platform';

export interface ProviderLimits {
  /** 0: no request limit */
  requestsPerMinute: number;
  /** 0: no token limit */
  tokensPerMinute: number;
  /** How far ahead of the steady rate a burst may run, in seconds of the rate (at least one request). */
  burstSeconds: number;
}

export type ProviderAdmission =
  | { status: 'admitted'; waitMs: 0 }
  /** the slot reserved for this job starts in `waitMs` (the job need not ask again) */
  | { status: 'reserved'; waitMs: number }
  /** a 429 paused the provider for `waitMs` more: nothing was reserved, ask again then */
  | { status: 'paused'; waitMs: number };

/** The token cost a request reserves before the provider has reported any usage. */
export const DEFAULT_TOKENS_PER_REQUEST = 1_500;
/** How far one request's usage moves the running average (1/8: about the last eight requests). */
const USAGE_AVERAGE_WEIGHT = 0.125;
/** A reservation not claimed within this long after its slot is forgotten. */
const RESERVATION_KEEP_MS = 10 * 60_000;

// KEYS[1] the provider's hash (pausedUntil, reqTat, tokTat, avgTokens)
// KEYS[2] the reservations (a zset: job id → slot start)
// ARGV: job id, requests/min, tokens/min, burst ms, default tokens per request, keep ms
const ADMIT = new RedisScript(
  `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local h = redis.call('HMGET', KEYS[1], 'pausedUntil', 'reqTat', 'tokTat', 'avgTokens')
local pausedUntil = tonumber(h[1]) or 0
if pausedUntil > now then return {'paused', pausedUntil - now} end
local reserved = redis.call('ZSCORE', KEYS[2], ARGV[1])
if reserved then
  local wait = tonumber(reserved) - now
  if wait > 0 then return {'reserved', wait} end
  redis.call('ZREM', KEYS[2], ARGV[1])
  return {'admitted', 0}
end
local rpm = tonumber(ARGV[2])
local tpm = tonumber(ARGV[3])
local burstSeconds = tonumber(ARGV[4]) / 1000
local start = now
local reqTat, tokTat
if rpm > 0 then
  local interval = 60000 / rpm
  local burst = math.max(interval, burstSeconds * 1000)
  reqTat = math.max(tonumber(h[2]) or now, now)
  start = math.max(start, reqTat + interval - burst)
end
if tpm > 0 then
  local cost = 60000 * (tonumber(h[4]) or tonumber(ARGV[5])) / tpm
  local burst = math.max(cost, burstSeconds * 1000)
  tokTat = math.max(tonumber(h[3]) or now, now)
  start = math.max(start, tokTat + math.min(cost, burst) - burst)
end
start = math.ceil(start)
local ttl = 120000
if rpm > 0 then
  reqTat = math.max(reqTat, start) + 60000 / rpm
  redis.call('HSET', KEYS[1], 'reqTat', reqTat)
  ttl = math.max(ttl, reqTat - now + 60000)
end
if tpm > 0 then
  tokTat = math.max(tokTat, start) + 60000 * (tonumber(h[4]) or tonumber(ARGV[5])) / tpm
  redis.call('HSET', KEYS[1], 'tokTat', tokTat)
  ttl = math.max(ttl, tokTat - now + 60000)
end
if rpm > 0 or tpm > 0 then redis.call('PEXPIRE', KEYS[1], math.ceil(ttl)) end
if start <= now then return {'admitted', 0} end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[6]))
redis.call('ZADD', KEYS[2], start, ARGV[1])
redis.call('PEXPIRE', KEYS[2], math.ceil(start - now + tonumber(ARGV[6])))
return {'reserved', start - now}
`,
  2,
);

// KEYS[1] the provider's hash; ARGV: pause ms
const PAUSE = new RedisScript(
  `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local untilMs = now + tonumber(ARGV[1])
local current = tonumber(redis.call('HGET', KEYS[1], 'pausedUntil')) or 0
if untilMs > current then
  redis.call('HSET', KEYS[1], 'pausedUntil', untilMs)
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < tonumber(ARGV[1]) + 60000 then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) + 60000) end
  return untilMs - now
end
return current - now
`,
  1,
);

// KEYS[1] the provider's hash; ARGV: tokens used, tokens/min, default tokens per request, weight
const RECORD_USAGE = new RedisScript(
  `
local used = tonumber(ARGV[1])
local tpm = tonumber(ARGV[2])
local h = redis.call('HMGET', KEYS[1], 'tokTat', 'avgTokens')
local avg = tonumber(h[2]) or tonumber(ARGV[3])
if tpm > 0 and h[1] then
  redis.call('HSET', KEYS[1], 'tokTat', tonumber(h[1]) + 60000 * (used - avg) / tpm)
end
redis.call('HSET', KEYS[1], 'avgTokens', avg + (used - avg) * tonumber(ARGV[4]))
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], 600000) end
return 1
`,
  1,
);

/**
 * The id a provider key's limits are kept under: the endpoint and a digest of its key, so two
 * installations of one key on one Redis prefix share a limit and the key itself is never written.
 */
export function providerIdOf(baseUrl: string, apiKey: string | undefined): string {
  return createHash('sha256')
    .update(`${baseUrl.replace(/\/+$/, '')}\n${apiKey ?? ''}`)
    .digest('hex')
    .slice(0, 16);
}

/**
 * The provider's keys. Both carry one hash tag, the provider's, so the script that reads and
 * writes them both runs on one Redis Cluster slot.
 */
export function providerKeys(
  prefix: string,
  providerId: string,
): { state: string; reservations: string } {
  return {
    state: redisKeys.providerLimits(prefix, providerId),
    reservations: redisKeys.providerReservations(prefix, providerId),
  };
}

export class ProviderLimiter {
  private readonly keys: { state: string; reservations: string };

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    readonly providerId: string,
    private readonly limits: ProviderLimits,
  ) {
    this.keys = providerKeys(prefix, providerId);
  }

  get limited(): boolean {
    return this.limits.requestsPerMinute > 0 || this.limits.tokensPerMinute > 0;
  }

  /**
   * Admits one request for `jobId` now, or says how long it waits: for the slot reserved for it
   * (asking again with the same id then admits it without charging twice), or for a 429's pause.
   */
  async admit(jobId: string): Promise<ProviderAdmission> {
    const [status, waitMs] = (await ADMIT.run(
      this.redis,
      this.keys.state,
      this.keys.reservations,
      jobId,
      String(this.limits.requestsPerMinute),
      String(this.limits.tokensPerMinute),
      String(Math.round(this.limits.burstSeconds * 1000)),
      String(DEFAULT_TOKENS_PER_REQUEST),
      String(RESERVATION_KEEP_MS),
    )) as [ProviderAdmission['status'], number];
    return { status, waitMs: Math.max(0, Number(waitMs)) } as ProviderAdmission;
  }

  /** Pauses every worker's requests to this provider for `ms` (a longer pause already set stands); the time left. */
  async pause(ms: number): Promise<number> {
    return Number(
      await PAUSE.run(this.redis, this.keys.state, String(Math.max(1, Math.round(ms)))),
    );
  }

  /**
   * Charges a finished request's real token count (the reservation charged the average). Without
   * a token limit nothing reads the bucket or the average (ADMIT only with tokens/min > 0), so
   * the narration is spared the round trip.
   */
  async recordUsage(tokens: number): Promise<void> {
    if (this.limits.tokensPerMinute <= 0) return;
    if (!Number.isFinite(tokens) || tokens < 0) return;
    await RECORD_USAGE.run(
      this.redis,
      this.keys.state,
      String(Math.round(tokens)),
      String(this.limits.tokensPerMinute),
      String(DEFAULT_TOKENS_PER_REQUEST),
      String(USAGE_AVERAGE_WEIGHT),
    );
  }
}
