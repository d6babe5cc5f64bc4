import { PrivateRedis, testQueuePrefix, TEST_REDIS_URL } from '@chronicle/testing';
import { createCommandConnection, installationKeyPatterns } from '@chronicle/platform';
import Redis from 'ioredis';
import { TurnStreamPublisher } from './turn-stream';
import { compareEntryIds, TurnStreamHub } from './turn-stream.hub';

// The turn stream against the real Redis: entries published together arrive in order, and the
// followers of many streams share the hub's few subscriber connections.

// readers are duplicates of this client: a short disconnect timeout lets jest exit at once
const redis = new Redis(TEST_REDIS_URL, { disconnectTimeout: 200 });
const prefix = testQueuePrefix('turn-stream');
const publisher = new TurnStreamPublisher(redis, prefix);

afterAll(async () => {
  for (const pattern of installationKeyPatterns(prefix)) {
    const keys = await redis.keys(pattern);
    if (keys.length > 0) await redis.del(...keys);
  }
  await redis.quit();
});

async function follow(hub: TurnStreamHub, turnId: string, options = {}) {
  const seen: string[] = [];
  for await (const entry of hub.follow(turnId, options)) {
    seen.push(`${entry.event}:${JSON.stringify(entry.data)}`);
  }
  return seen;
}

const tick = (ms = 50) => new Promise((resolve) => setTimeout(resolve, ms));

/** This file's hub connections, by their name: CLIENT LIST's id and address of each. */
async function readers(): Promise<{ id: string; addr: string }[]> {
  const list = (await redis.client('LIST')) as string;
  return list
    .split('\n')
    .filter((line) => line.includes(` name=${prefix}-turn-stream-reader-`))
    .map((line) => ({ id: /\bid=(\d+)/.exec(line)![1], addr: /\baddr=(\S+)/.exec(line)![1] }));
}

/** Counts the commands the hub's connections send from now until the answer's `stop`. */
async function countReaderCommands(): Promise<{ stop: () => Promise<string[]> }> {
  const addresses = new Set((await readers()).map((reader) => reader.addr));
  const monitor = await redis.monitor();
  const sent: string[] = [];
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (addresses.has(source)) sent.push(String(args[0]).toLowerCase());
  });
  return {
    stop: async () => {
      await tick();
      monitor.disconnect();
      return sent;
    },
  };
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

  it('compares entry ids by time, then sequence', () => {
    expect(compareEntryIds('9-0', '10-0')).toBeLessThan(0);
    expect(compareEntryIds('10-2', '10-10')).toBeLessThan(0);
    expect(compareEntryIds('10-1', '10-1')).toBe(0);
    expect(compareEntryIds('11-0', '10-5')).toBeGreaterThan(0);
  });

  it('serves many streams and late joiners on its few connections, new streams without delay', async () => {
    const hub = new TurnStreamHub(redis, prefix, 2);
    try {
      // Two followers of one stream, one joining after the hub has read past its point.
      await publisher.publish('h1', 'player', { action: null });
      const first = follow(hub, 'h1');
      await tick();
      const [secondChunk] = await publisher.publishMany('h1', [
        { event: 'chunk', data: { text: 'a' } },
      ]);
      await tick();
      const late = follow(hub, 'h1', { afterId: '0-0' });
      const fromMiddle = follow(hub, 'h1', { afterId: secondChunk });
      await tick();
      // A stream nobody followed yet, while both loops block: answered at once, not after the
      // blocked read times out (5 s).
      const started = Date.now();
      await publisher.publish('h2', 'chunk', { text: 'b' });
      const other = follow(hub, 'h2');
      await tick();
      await publisher.publish('h2', 'done', { turnId: 'h2', version: 2 });
      expect(await other).toEqual(['chunk:{"text":"b"}', 'done:{"turnId":"h2","version":2}']);
      expect(Date.now() - started).toBeLessThan(1_000);

      await publisher.publish('h1', 'done', { turnId: 'h1', version: 2 });
      const all = [
        'player:{"action":null}',
        'chunk:{"text":"a"}',
        'done:{"turnId":"h1","version":2}',
      ];
      expect(await first).toEqual(all);
      expect(await late).toEqual(all);
      expect(await fromMiddle).toEqual(['done:{"turnId":"h1","version":2}']);

      // A follower that leaves stops being read for; one that hears nothing ends when idle.
      const left = new AbortController();
      const waiting = follow(hub, 'h3', { signal: left.signal });
      await tick();
      left.abort();
      expect(await waiting).toEqual([]);
      expect(await follow(hub, 'h4', { idleMs: 100 })).toEqual([]);
      expect(hub.streams).toBe(0);
      expect(hub.connections).toBeLessThanOrEqual(2);
    } finally {
      hub.close();
    }
  });

  it('hands every entry of many streams to their followers as it is written, none twice, and no read is repeated per entry', async () => {
    const hub = new TurnStreamHub(redis, prefix, 2);
    const turns = Array.from({ length: 40 }, (_, i) => `m${i}`);
    try {
      for (const turnId of turns) await publisher.publish(turnId, 'player', { action: null });
      const followed = turns.map((turnId) => follow(hub, turnId));
      await tick();
      const counting = await countReaderCommands();
      // Entries written while the followers' catch-up reads may still be answering: each is
      // in the read, in the messages, or both, and is handed over once.
      for (let round = 0; round < 5; round++) {
        await Promise.all(
          turns.map((turnId) => publisher.publish(turnId, 'chunk', { text: String(round) })),
        );
      }
      for (const turnId of turns) await publisher.publish(turnId, 'done', { turnId, version: 2 });
      const seen = await Promise.all(followed);
      const expected = (turnId: string) => [
        'player:{"action":null}',
        ...[0, 1, 2, 3, 4].map((round) => `chunk:{"text":"${round}"}`),
        `done:{"turnId":"${turnId}","version":2}`,
      ];
      expect(seen).toEqual(turns.map(expected));
      // The hub's connections only listen: 240 entries cost them no command, only each channel's
      // UNSUBSCRIBE as its follower left (an XREAD loop sent a read naming every stream for
      // every one of them).
      expect(await counting.stop()).toEqual(turns.map(() => 'unsubscribe'));
      expect(hub.streams).toBe(0);
    } finally {
      hub.close();
    }
  });

  it('leaves no subscription behind for a follower that left before its SUBSCRIBE went out', async () => {
    const hub = new TurnStreamHub(redis, prefix, 1);
    try {
      const left = new AbortController();
      // A new hub's connection is still opening: the SUBSCRIBE waits for it, the leave does not.
      const following = follow(hub, 'gone', { signal: left.signal });
      left.abort();
      expect(await following).toEqual([]);
      await tick(300);
      expect(await redis.pubsub('NUMSUB', publisher.key('gone'))).toEqual([
        publisher.key('gone'),
        0,
      ]);
      expect(hub.streams).toBe(0);
    } finally {
      hub.close();
    }
  });

  it("ends its followers with an error when a subscriber's connection closes, and serves new ones after", async () => {
    const hub = new TurnStreamHub(redis, prefix, 1);
    try {
      await publisher.publish('k1', 'player', { action: null });
      const cut = (async () => {
        const seen: string[] = [];
        try {
          for await (const entry of hub.follow('k1')) seen.push(entry.event);
        } catch (error) {
          return { seen, error: (error as Error).message };
        }
        return { seen, error: null };
      })();
      await tick();
      // Pub/sub keeps nothing for a subscriber that was away: its followers must resume from
      // the stream (the SSE client reconnects with Last-Event-ID), not wait on a silent channel.
      for (const reader of await readers()) await redis.client('KILL', 'ID', reader.id);
      expect(await cut).toEqual({ seen: ['player'], error: expect.stringMatching(/closed/) });
      await publisher.publish('k1', 'chunk', { text: 'after' });
      const resumed = follow(hub, 'k1');
      await tick(300);
      await publisher.publish('k1', 'done', { turnId: 'k1', version: 2 });
      expect(await resumed).toEqual([
        'player:{"action":null}',
        'chunk:{"text":"after"}',
        'done:{"turnId":"k1","version":2}',
      ]);
    } finally {
      hub.close();
    }
  });

  it('fences: after another attempt claims the turn, the first one writes nothing; the stream shows reset, then one take', async () => {
    await publisher.publish('f1', 'player', { action: null });
    expect(await publisher.claim('f1', 'attempt-a', false)).toBe(false); // nothing to reset yet
    expect(
      await publisher.publishFenced(
        'f1',
        'attempt-a',
        [{ event: 'chunk', data: { text: 'A1' } }],
        1,
      ),
    ).toBe(true);
    // attempt A loses its lock; B takes the job over and claims the stream
    expect(await publisher.claim('f1', 'attempt-b', false)).toBe(true); // A streamed: reset
    expect(
      await publisher.publishFenced(
        'f1',
        'attempt-a',
        [{ event: 'chunk', data: { text: 'A2' } }],
        2,
      ),
    ).toBe(false);
    expect(
      await publisher.publishFenced(
        'f1',
        'attempt-b',
        [{ event: 'chunk', data: { text: 'B1' } }],
        1,
      ),
    ).toBe(true);
    expect(await publisher.publishDone('f1', 'attempt-b', 'B1', { turnId: 'f1', version: 2 })).toBe(
      false,
    );
    const entries = await publisher.entries('f1');
    expect(entries.map((e) => [e.event, e.data])).toEqual([
      ['player', { action: null }],
      ['chunk', { text: 'A1' }],
      ['reset', {}],
      ['chunk', { text: 'B1' }],
      ['done', { turnId: 'f1', version: 2 }],
    ]);
  });

  it('gives a fenced-out attempt whose narration won the log a reset and its whole text before done', async () => {
    await publisher.claim('f2', 'attempt-a', false);
    await publisher.publishFenced(
      'f2',
      'attempt-a',
      [{ event: 'chunk', data: { text: 'A whole' } }],
      1,
    );
    await publisher.claim('f2', 'attempt-b', true);
    await publisher.publishFenced(
      'f2',
      'attempt-b',
      [{ event: 'chunk', data: { text: 'B part' } }],
      1,
    );
    // A's Narrated was appended first: its done must not follow B's text
    expect(
      await publisher.publishDone('f2', 'attempt-a', 'A whole take', { turnId: 'f2', version: 2 }),
    ).toBe(true);
    expect(
      await publisher.publishFenced(
        'f2',
        'attempt-b',
        [{ event: 'chunk', data: { text: 'B late' } }],
        2,
      ),
    ).toBe(false);
    const events = (await publisher.entries('f2')).map((e) => [e.event, e.data]);
    const lastReset = events.map(([event]) => event).lastIndexOf('reset');
    expect(events.slice(lastReset)).toEqual([
      ['reset', {}],
      ['chunk', { text: 'A whole take' }],
      ['done', { turnId: 'f2', version: 2 }],
    ]);
  });

  it("gives a fenced-out winner's script messages after its reset, before done", async () => {
    await publisher.claim('f4', 'attempt-a', false);
    await publisher.claim('f4', 'attempt-b', true);
    await publisher.publishFenced('f4', 'attempt-b', [{ event: 'chunk', data: { text: 'B' } }], 1);
    // A's Narrated won the log: its messages must survive the reset its done writes
    expect(
      await publisher.publishDone('f4', 'attempt-a', 'A take', { turnId: 'f4', version: 3 }, [
        { event: 'message', data: { text: 'A found a key' } },
        { event: 'notice', data: { text: 'A script failed', scriptId: 's', hook: 'output' } },
      ]),
    ).toBe(true);
    const events = (await publisher.entries('f4')).map((e) => [e.event, e.data]);
    const lastReset = events.map(([event]) => event).lastIndexOf('reset');
    expect(events.slice(lastReset)).toEqual([
      ['reset', {}],
      ['chunk', { text: 'A take' }],
      ['message', { text: 'A found a key' }],
      ['notice', { text: 'A script failed', scriptId: 's', hook: 'output' }],
      ['done', { turnId: 'f4', version: 3 }],
    ]);
  });

  it('refuses fenced writes once the fence is gone (Redis lost its data)', async () => {
    await publisher.claim('f3', 'attempt-a', false);
    await redis.del(publisher.fenceKey('f3'));
    expect(
      await publisher.publishFenced(
        'f3',
        'attempt-a',
        [{ event: 'chunk', data: { text: 'x' } }],
        1,
      ),
    ).toBe(false);
  });

  it('writes numbered batches sent without waiting in their order, on a server that has never run its scripts', async () => {
    // A fresh server knows no script: sent by SHA, the first batch's NOSCRIPT and its EVAL would
    // let a later batch that found the script cached run ahead of it (and the first be skipped
    // as already written). The turn stream's scripts are sent whole for that reason.
    const fresh = await PrivateRedis.start();
    const client = createCommandConnection(fresh.url, 'test-fresh-scripts');
    try {
      const own = new TurnStreamPublisher(client, prefix);
      await own.publish('o1', 'player', { action: null });
      await own.claim('o1', 'attempt-a', false);
      const sent: Promise<boolean>[] = [];
      for (let batch = 1; batch <= 30; batch++) {
        sent.push(
          own.publishFenced(
            'o1',
            'attempt-a',
            [{ event: 'chunk', data: { text: `${batch} ` } }],
            batch,
          ),
        );
        // one batch a turn of the event loop, as a narration's chunks arrive
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(await Promise.all(sent)).toEqual(sent.map(() => true));
      const text = (await own.entries('o1'))
        .filter((entry) => entry.event === 'chunk')
        .map((entry) => (entry.data as { text: string }).text)
        .join('');
      expect(text).toBe(Array.from({ length: 30 }, (_, i) => `${i + 1} `).join(''));
    } finally {
      client.disconnect();
      await fresh.destroy();
    }
  });

  it('writes a numbered batch sent twice (a client resending what Redis already ran) once', async () => {
    await publisher.publish('r1', 'player', { action: null });
    await publisher.claim('r1', 'attempt-a', false);
    const first = [{ event: 'chunk', data: { text: 'and a bell a' } }] as const;
    const second = [{ event: 'chunk', data: { text: 'nswered' } }] as const;
    expect(await publisher.publishFenced('r1', 'attempt-a', first, 1)).toBe(true);
    // the connection closed before the answer came: ioredis sends the same script again
    expect(await publisher.publishFenced('r1', 'attempt-a', first, 1)).toBe(true);
    expect(await publisher.publishFenced('r1', 'attempt-a', second, 2)).toBe(true);
    // two in flight at the close, both sent again in order, the first of them already run
    expect(await publisher.publishFenced('r1', 'attempt-a', second, 2)).toBe(true);
    const third = [{ event: 'chunk', data: { text: '.' } }] as const;
    expect(await publisher.publishFenced('r1', 'attempt-a', third, 3)).toBe(true);
    const done = { turnId: 'r1', version: 2 };
    expect(await publisher.publishDone('r1', 'attempt-a', 'x', done)).toBe(false);
    expect(await publisher.publishDone('r1', 'attempt-a', 'x', done)).toBe(false);
    expect((await publisher.entries('r1')).map((e) => [e.event, e.data])).toEqual([
      ['player', { action: null }],
      ['chunk', { text: 'and a bell a' }],
      ['chunk', { text: 'nswered' }],
      ['chunk', { text: '.' }],
      ['done', done],
    ]);
  });

  it('still fences numbered batches: a new attempt numbers from 1, a late or resent batch of the old one is refused', async () => {
    await publisher.publish('r2', 'player', { action: null });
    await publisher.claim('r2', 'attempt-a', false);
    const a = (text: string) => [{ event: 'chunk' as const, data: { text } }];
    expect(await publisher.publishFenced('r2', 'attempt-a', a('A1'), 1)).toBe(true);
    expect(await publisher.publishFenced('r2', 'attempt-a', a('A2'), 2)).toBe(true);
    await publisher.claim('r2', 'attempt-b', true);
    // B's first batch is its 1, though A wrote a 1 and a 2
    expect(await publisher.publishFenced('r2', 'attempt-b', a('B1'), 1)).toBe(true);
    // A's resent 2 and its next batch, arriving after B's claim: refused, not skipped as written
    expect(await publisher.publishFenced('r2', 'attempt-a', a('A2'), 2)).toBe(false);
    expect(await publisher.publishFenced('r2', 'attempt-a', a('A3'), 3)).toBe(false);
    expect(await publisher.publishFenced('r2', 'attempt-b', a('B1'), 1)).toBe(true);
    expect(await publisher.publishFenced('r2', 'attempt-b', a('B2'), 2)).toBe(true);
    // a lock token that comes back on a later run claims again and numbers from 1 again
    await publisher.claim('r2', 'attempt-b', true);
    expect(await publisher.publishFenced('r2', 'attempt-b', a('C1'), 1)).toBe(true);
    expect((await publisher.entries('r2')).map((e) => [e.event, e.data])).toEqual([
      ['player', { action: null }],
      ['chunk', { text: 'A1' }],
      ['chunk', { text: 'A2' }],
      ['reset', {}],
      ['chunk', { text: 'B1' }],
      ['chunk', { text: 'B2' }],
      ['reset', {}],
      ['chunk', { text: 'C1' }],
    ]);
  });

  it("writes a fenced-out winner's done once when it is sent again, and answers as the first time", async () => {
    await publisher.claim('r3', 'attempt-a', false);
    await publisher.claim('r3', 'attempt-b', true);
    expect(
      await publisher.publishFenced(
        'r3',
        'attempt-b',
        [{ event: 'chunk', data: { text: 'B' } }],
        1,
      ),
    ).toBe(true);
    const done = { turnId: 'r3', version: 2 };
    expect(await publisher.publishDone('r3', 'attempt-a', 'A take', done)).toBe(true);
    expect(await publisher.publishDone('r3', 'attempt-a', 'A take', done)).toBe(true);
    const events = (await publisher.entries('r3')).map((e) => [e.event, e.data]);
    expect(events.slice(events.map(([event]) => event).lastIndexOf('reset'))).toEqual([
      ['reset', {}],
      ['chunk', { text: 'A take' }],
      ['done', done],
    ]);
  });
});
