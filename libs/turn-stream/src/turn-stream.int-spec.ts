import { testQueuePrefix, TEST_REDIS_URL } from '@chronicle/testing';
import Redis from 'ioredis';
import { BlockingReaderPool, followTurnStream, TurnStreamPublisher } from './turn-stream';

// The turn stream against the real Redis: entries published together arrive in order, and the
// blocking readers are reused between followers, except one whose read was cut off.

// readers are duplicates of this client: a short disconnect timeout lets jest exit at once
const redis = new Redis(TEST_REDIS_URL, { disconnectTimeout: 200 });
const prefix = testQueuePrefix('turn-stream');
const publisher = new TurnStreamPublisher(redis, prefix);

afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

async function follow(readers: BlockingReaderPool, turnId: string, signal?: AbortSignal) {
  const seen: string[] = [];
  for await (const entry of followTurnStream(readers, prefix, turnId, { signal, blockMs: 200 })) {
    seen.push(`${entry.event}:${JSON.stringify(entry.data)}`);
  }
  return seen;
}

describe('turn stream', () => {
  it('publishes several entries in one round trip, in order, each its own entry', async () => {
    await publisher.publish('t1', 'player', { action: null });
    const ids = await publisher.publishMany('t1', [
      { event: 'chunk', data: { text: 'a' } },
      { event: 'reasoning', data: { text: 'b' } },
      { event: 'chunk', data: { text: 'c' } },
    ]);
    expect(ids).toHaveLength(3);
    expect(await publisher.publishMany('t1', [])).toEqual([]);
    const entries = await publisher.entries('t1');
    expect(entries.map((e) => [e.event, e.data])).toEqual([
      ['player', { action: null }],
      ['chunk', { text: 'a' }],
      ['reasoning', { text: 'b' }],
      ['chunk', { text: 'c' }],
    ]);
    expect(entries.slice(1).map((e) => e.id)).toEqual(ids);
    expect(await redis.ttl(publisher.key('t1'))).toBeGreaterThan(0);
  });

  it('reuses a reader between followers and closes one whose read was cut off', async () => {
    const readers = new BlockingReaderPool(redis);
    try {
      await publisher.publish('t2', 'chunk', { text: 'x' });
      const following = follow(readers, 't2');
      await new Promise((resolve) => setTimeout(resolve, 50));
      await publisher.publish('t2', 'done', { turnId: 't2' });
      expect(await following).toEqual(['chunk:{"text":"x"}', 'done:{"turnId":"t2"}']);
      expect(readers.idleCount).toBe(1);

      await publisher.publish('t3', 'error', { message: 'no' });
      expect(await follow(readers, 't3')).toEqual(['error:{"message":"no"}']);
      expect(readers.idleCount).toBe(1); // the same connection again

      const left = new AbortController();
      const waiting = follow(readers, 't4', left.signal);
      await new Promise((resolve) => setTimeout(resolve, 50));
      left.abort();
      expect(await waiting).toEqual([]);
      expect(readers.idleCount).toBe(0);

      // the pool still serves followers after that
      await publisher.publish('t5', 'done', {});
      expect(await follow(readers, 't5')).toEqual(['done:{}']);
    } finally {
      readers.close();
    }
  });
});
