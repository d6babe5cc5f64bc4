import { createCommandConnection, turnStreamShard, type RedisClient } from '@chronicle/platform';
import { PrivateRedisCluster, testQueuePrefix } from '@chronicle/testing';
import { TurnStreamPublisher } from './turn-stream';
import { TurnStreamHub } from './turn-stream.hub';

// The turn stream on a real Redis Cluster: the fenced scripts run (stream and fence share a
// slot), and the hub's subscribers, each on whichever node the cluster client gave it, get the
// entries the scripts PUBLISH on every master (a PUBLISH reaches the whole cluster).

jest.setTimeout(60_000);

let cluster: PrivateRedisCluster;
let redis: RedisClient;
let publisher: TurnStreamPublisher;
const prefix = testQueuePrefix('turn-stream-cluster');

beforeAll(async () => {
  cluster = await PrivateRedisCluster.start();
  redis = createCommandConnection(cluster.url, 'test-turn-stream');
  publisher = new TurnStreamPublisher(redis, prefix);
});

afterAll(async () => {
  redis?.disconnect();
  await cluster?.destroy();
});

/** `count` turn ids whose streams fall in one shard. */
function turnsOfOneShard(count: number, shard = 3): string[] {
  const ids: string[] = [];
  for (let i = 0; ids.length < count; i++) {
    if (turnStreamShard(`turn-${i}`) === shard) ids.push(`turn-${i}`);
  }
  return ids;
}

async function follow(hub: TurnStreamHub, turnId: string): Promise<string[]> {
  const seen: string[] = [];
  for await (const entry of hub.follow(turnId, { idleMs: 10_000 })) {
    seen.push(`${entry.event}:${JSON.stringify(entry.data)}`);
  }
  return seen;
}

const tick = (ms = 100) => new Promise((resolve) => setTimeout(resolve, ms));

describe('turn stream on a Redis Cluster', () => {
  it('claims, publishes fenced and finishes a turn (its scripts touch the stream and the fence)', async () => {
    await publisher.publish('c1', 'player', { action: null });
    expect(await publisher.claim('c1', 'attempt-a', false)).toBe(false);
    expect(
      await publisher.publishFenced(
        'c1',
        'attempt-a',
        [{ event: 'chunk', data: { text: 'A' } }],
        1,
      ),
    ).toBe(true);
    expect(await publisher.claim('c1', 'attempt-b', true)).toBe(true);
    expect(
      await publisher.publishFenced(
        'c1',
        'attempt-a',
        [{ event: 'chunk', data: { text: 'late' } }],
        2,
      ),
    ).toBe(false);
    expect(await publisher.publishDone('c1', 'attempt-b', 'B', { turnId: 'c1', version: 2 })).toBe(
      false,
    );
    expect((await publisher.entries('c1')).map((e) => e.event)).toEqual([
      'player',
      'chunk',
      'reset',
      'done',
    ]);
  });

  it('hands a follower the entries of streams on every master at once', async () => {
    const hub = new TurnStreamHub(redis, prefix, 2);
    try {
      const [first, second, third] = turnsOfOneShard(3);
      const watching = follow(hub, first);
      await tick(500); // subscribed: what comes now arrives as messages
      for (const turnId of [second, third]) {
        const started = Date.now();
        const other = follow(hub, turnId);
        await tick();
        await publisher.publish(turnId, 'done', { turnId, version: 2 });
        expect(await other).toEqual([`done:{"turnId":"${turnId}","version":2}`]);
        expect(Date.now() - started).toBeLessThan(1_500);
      }
      await publisher.publish(first, 'done', { turnId: first, version: 2 });
      expect(await watching).toEqual([`done:{"turnId":"${first}","version":2}`]);
      // streams of every shard, spread over the three masters
      const others = Array.from({ length: 16 }, (_, shard) => turnsOfOneShard(1, shard)[0]);
      const all = others.map((turnId) => follow(hub, turnId));
      await tick(300);
      for (const turnId of others) await publisher.publish(turnId, 'done', { turnId, version: 2 });
      expect(await Promise.all(all)).toEqual(
        others.map((turnId) => [`done:{"turnId":"${turnId}","version":2}`]),
      );
      expect(hub.connections).toBeLessThanOrEqual(2);
    } finally {
      hub.close();
    }
  });
});
