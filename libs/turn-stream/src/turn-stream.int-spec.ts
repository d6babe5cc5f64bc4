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

  it('fences: after another attempt claims the turn, the first one writes nothing; the stream shows reset, then one take', async () => {
    await publisher.publish('f1', 'player', { action: null });
    expect(await publisher.claim('f1', 'attempt-a', false)).toBe(false); // nothing to reset yet
    expect(
      await publisher.publishFenced('f1', 'attempt-a', [{ event: 'chunk', data: { text: 'A1' } }]),
    ).toBe(true);
    // attempt A loses its lock; B takes the job over and claims the stream
    expect(await publisher.claim('f1', 'attempt-b', false)).toBe(true); // A streamed: reset
    expect(
      await publisher.publishFenced('f1', 'attempt-a', [{ event: 'chunk', data: { text: 'A2' } }]),
    ).toBe(false);
    expect(
      await publisher.publishFenced('f1', 'attempt-b', [{ event: 'chunk', data: { text: 'B1' } }]),
    ).toBe(true);
    expect(await publisher.publishDone('f1', 'attempt-b', 'B1', { turnId: 'f1' })).toBe(false);
    const entries = await publisher.entries('f1');
    expect(entries.map((e) => [e.event, e.data])).toEqual([
      ['player', { action: null }],
      ['chunk', { text: 'A1' }],
      ['reset', {}],
      ['chunk', { text: 'B1' }],
      ['done', { turnId: 'f1' }],
    ]);
  });

  it('gives a fenced-out attempt whose narration won the log a reset and its whole text before done', async () => {
    await publisher.claim('f2', 'attempt-a', false);
    await publisher.publishFenced('f2', 'attempt-a', [
      { event: 'chunk', data: { text: 'A whole' } },
    ]);
    await publisher.claim('f2', 'attempt-b', true);
    await publisher.publishFenced('f2', 'attempt-b', [
      { event: 'chunk', data: { text: 'B part' } },
    ]);
    // A's Narrated was appended first: its done must not follow B's text
    expect(await publisher.publishDone('f2', 'attempt-a', 'A whole take', { turnId: 'f2' })).toBe(
      true,
    );
    expect(
      await publisher.publishFenced('f2', 'attempt-b', [
        { event: 'chunk', data: { text: 'B late' } },
      ]),
    ).toBe(false);
    const events = (await publisher.entries('f2')).map((e) => [e.event, e.data]);
    const lastReset = events.map(([event]) => event).lastIndexOf('reset');
    expect(events.slice(lastReset)).toEqual([
      ['reset', {}],
      ['chunk', { text: 'A whole take' }],
      ['done', { turnId: 'f2' }],
    ]);
  });

  it('refuses fenced writes once the fence is gone (Redis lost its data)', async () => {
    await publisher.claim('f3', 'attempt-a', false);
    await redis.del(publisher.fenceKey('f3'));
    expect(
      await publisher.publishFenced('f3', 'attempt-a', [{ event: 'chunk', data: { text: 'x' } }]),
    ).toBe(false);
  });
});
