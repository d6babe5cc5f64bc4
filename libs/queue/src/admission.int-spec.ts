import Redis from 'ioredis';
import { removeQueueKeys, TEST_REDIS_URL, testQueuePrefix } from '@chronicle/testing';
import {
  DEFAULT_TOKENS_PER_REQUEST,
  ProviderLimiter,
  providerIdOf,
  providerKeys,
  UserLeases,
  userLeaseKeys,
} from '@chronicle/queue';

// Two clients stand for two worker processes: what one counts, the other sees.
describe('shared admission (Redis)', () => {
  const prefix = testQueuePrefix();
  let first: Redis;
  let second: Redis;

  beforeAll(() => {
    first = new Redis(TEST_REDIS_URL);
    second = new Redis(TEST_REDIS_URL);
  });

  afterAll(async () => {
    await removeQueueKeys(prefix);
    first.disconnect();
    second.disconnect();
  });

  describe('ProviderLimiter', () => {
    // One slot a second: wide enough that a loaded machine's scheduling delay cannot reach the
    // next slot between two calls of one case (at 600 a minute a 100 ms stall did).
    const limits = { requestsPerMinute: 60, tokensPerMinute: 0, burstSeconds: 0 };

    it('keys a provider by endpoint and key digest, under one hash tag, never the key itself', () => {
      const id = providerIdOf('http://model.test/v1/', 'sk-secret');
      expect(id).toBe(providerIdOf('http://model.test/v1', 'sk-secret'));
      expect(id).not.toBe(providerIdOf('http://model.test/v1', 'sk-other'));
      const keys = providerKeys(prefix, id);
      expect(JSON.stringify(keys)).not.toContain('sk-secret');
      const tags = Object.values(keys).map((key) => /\{([^}]*)\}/.exec(key)?.[1]);
      expect(new Set(tags)).toEqual(new Set([`${prefix}:provider-${id}`]));
    });

    it('given 60 requests a minute and no burst, when two workers ask at once, then one goes and the other is given the next slot', async () => {
      const id = providerIdOf('http://rpm.test/v1', 'k');
      const a = new ProviderLimiter(first, prefix, id, limits);
      const b = new ProviderLimiter(second, prefix, id, limits);
      const [one, two, three] = await Promise.all([a.admit('j1'), b.admit('j2'), a.admit('j3')]);
      const statuses = [one, two, three].map((x) => x.status).sort();
      expect(statuses).toEqual(['admitted', 'reserved', 'reserved']);
      const waits = [one, two, three].map((x) => x.waitMs).sort((x, y) => x - y);
      // one slot a second: the reserved ones start 1 and 2 s on
      expect(waits[1]).toBeGreaterThan(500);
      expect(waits[1]).toBeLessThanOrEqual(1_000);
      expect(waits[2]).toBeGreaterThan(1_500);
      expect(waits[2]).toBeLessThanOrEqual(2_000);
      // Asking again before the slot says how long is left; at the slot, it goes without a second charge.
      const reservedId = [
        ['j1', one],
        ['j2', two],
        ['j3', three],
      ].find(([, x]) => (x as { waitMs: number }).waitMs === waits[1])?.[0] as string;
      await new Promise((r) => setTimeout(r, waits[1] + 5));
      expect(await b.admit(reservedId)).toEqual({ status: 'admitted', waitMs: 0 });
      const next = await a.admit('j4');
      expect(next.status).toBe('reserved');
      expect(next.waitMs).toBeGreaterThan(1_000);
    });

    it('a burst lets that many requests through at once, then the rate holds', async () => {
      const id = providerIdOf('http://burst.test/v1', 'k');
      const a = new ProviderLimiter(first, prefix, id, {
        requestsPerMinute: 60,
        tokensPerMinute: 0,
        burstSeconds: 3,
      });
      const results = await Promise.all([1, 2, 3, 4].map((n) => a.admit(`b${n}`)));
      expect(results.filter((r) => r.status === 'admitted')).toHaveLength(3);
      const late = results.find((r) => r.status === 'reserved');
      expect(late?.waitMs).toBeGreaterThan(900);
      expect(late?.waitMs).toBeLessThanOrEqual(1_000);
    });

    it('reserves tokens at the running average and charges what a request really used', async () => {
      const id = providerIdOf('http://tpm.test/v1', 'k');
      const tokenLimits = { requestsPerMinute: 0, tokensPerMinute: 60_000, burstSeconds: 0 };
      const a = new ProviderLimiter(first, prefix, id, tokenLimits);
      expect((await a.admit('t1')).status).toBe('admitted');
      // 1,500 tokens at 1,000 a second: the next request's slot is 1.5 s on
      const second = await a.admit('t2');
      expect(second.status).toBe('reserved');
      expect(second.waitMs).toBeGreaterThan(1_400);
      expect(second.waitMs).toBeLessThanOrEqual(DEFAULT_TOKENS_PER_REQUEST);
      // The first really used 4,000: 2.5 s more to pay; the average moves an eighth of the way.
      await a.recordUsage(4_000);
      const state = await first.hgetall(providerKeys(prefix, id).state);
      expect(Number(state.avgTokens)).toBeCloseTo(1_500 + 2_500 / 8);
      const third = await a.admit('t3');
      expect(third.waitMs).toBeGreaterThan(1_500 + 2_500 + 1_500 - 200);
    });

    it('a 429 pauses every worker: no slot is handed out until the pause ends, and a longer pause stands', async () => {
      const id = providerIdOf('http://pause.test/v1', 'k');
      const off = { requestsPerMinute: 0, tokensPerMinute: 0, burstSeconds: 0 };
      const a = new ProviderLimiter(first, prefix, id, off);
      const b = new ProviderLimiter(second, prefix, id, off);
      expect(await b.admit('p0')).toEqual({ status: 'admitted', waitMs: 0 });
      expect(await a.pause(400)).toBeGreaterThan(390);
      expect(await a.pause(100)).toBeGreaterThan(300);
      const paused = await b.admit('p1');
      expect(paused.status).toBe('paused');
      expect(paused.waitMs).toBeGreaterThan(250);
      await new Promise((r) => setTimeout(r, paused.waitMs + 10));
      expect(await b.admit('p1')).toEqual({ status: 'admitted', waitMs: 0 });
    });
  });

  describe('UserLeases', () => {
    const options = { perUser: 2, leaseMs: 5_000, staleMs: 10_000 };

    it("keys a user's leases and line under the user's hash tag", () => {
      const tags = userLeaseKeys(prefix, 'u1').map((key) => /\{([^}]*)\}/.exec(key)?.[1]);
      expect(new Set(tags)).toEqual(new Set([`${prefix}:user-u1`]));
    });

    it('given K = 2, when a third turn asks, then it waits first in line and is named when a slot frees', async () => {
      const a = new UserLeases(first, prefix, options);
      const b = new UserLeases(second, prefix, options);
      expect(await a.acquire('u2', 'j1', 1)).toEqual({ granted: true });
      expect(await b.acquire('u2', 'j2', 2)).toEqual({ granted: true });
      expect(await a.acquire('u2', 'j3', 3)).toEqual({ granted: false, position: 1 });
      expect(await b.acquire('u2', 'j4', 4)).toEqual({ granted: false, position: 2 });
      // another user is not held up by this one
      expect(await b.acquire('u3', 'k1', 5)).toEqual({ granted: true });
      // a re-run of a job holding a lease keeps it
      expect(await a.acquire('u2', 'j1', 1)).toEqual({ granted: true });
      expect(await b.release('u2', 'j2')).toEqual(['j3']);
      // the oldest in line goes first, even when a younger one asks before it
      expect(await b.acquire('u2', 'j4', 4)).toEqual({ granted: false, position: 2 });
      expect(await a.acquire('u2', 'j3', 3)).toEqual({ granted: true });
      expect(await b.acquire('u2', 'j4', 4)).toEqual({ granted: false, position: 1 });
    });

    it("a crashed worker's lease expires, and a waiter that stopped asking leaves the line", async () => {
      const short = new UserLeases(first, prefix, { perUser: 1, leaseMs: 200, staleMs: 300 });
      expect(await short.acquire('u4', 'dead', 1)).toEqual({ granted: true });
      expect(await short.acquire('u4', 'gone', 2)).toEqual({ granted: false, position: 1 });
      expect(await short.acquire('u4', 'live', 3)).toEqual({ granted: false, position: 2 });
      await new Promise((r) => setTimeout(r, 350));
      // 'dead' never released; 'gone' never asked again: 'live' is next after both lapse
      expect(await short.acquire('u4', 'live', 3)).toEqual({ granted: true });
      expect(await short.extend('u4', 'live', 1_000)).toBe(true);
      await new Promise((r) => setTimeout(r, 250));
      expect(await short.acquire('u4', 'other', 4)).toEqual({ granted: false, position: 1 });
    });
  });
});
