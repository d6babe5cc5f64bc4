// The whole system on a real Redis Cluster it starts itself (three masters, no replicas): the
// built API, two context workers and the memory worker as processes, REDIS_URL in its
// redis-cluster:// form. Players create adventures, act and follow their turns over SSE on
// several adventures at once (turn streams of many shards, so the API's SSE readers block on
// every master), the memory worker writes memories, the control plane's roll call and cancel
// cross nodes, the reconciler puts back a job the cluster lost, and the history checker holds
// the log against what the players were told. The last test shows what the hash tags are for:
// the same operations with the old, untagged names are refused with CROSSSLOT.
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Cluster } from 'ioredis';
import {
  installationKeyPatterns,
  openRedis,
  queueKeyPrefix,
  redisKeys,
  redisKeySlot,
} from '@chronicle/platform';
import { JobName, QueueName } from '@chronicle/queue';
import {
  AppSystem,
  checkHistory,
  createTestDatabase,
  expectCleanHistory,
  HistoryLedger,
  isAppBuilt,
  PrivateRedisCluster,
  type TestDatabase,
} from '@chronicle/testing';
import { RecordingClient } from '../faults/support/recording.client';
import { ofType } from './support/chronicle.client';

jest.setTimeout(240_000);

const describeBuilt = isAppBuilt('memory-worker') ? describe : describe.skip;

let cluster: PrivateRedisCluster;
let database: TestDatabase;
let system: AppSystem;
let redis: Cluster;
const ledger = new HistoryLedger();
const HELD_ACTION = 'wait for the bell';
const client = () => new RecordingClient(system.apiUrl, ledger);

const adventure = (title: string) => ({
  title,
  opening: 'The lamps along the quay gutter out one by one.',
  placeholders: {},
  storyCards: [],
  settings: { model: 'fake-model', memoryBankEnabled: true },
});

describeBuilt('Chronicle on a Redis Cluster', () => {
  beforeAll(async () => {
    cluster = await PrivateRedisCluster.start();
    database = await createTestDatabase();
    system = await AppSystem.create({
      services: { database, redisUrl: cluster.url },
      fake: { instant: true },
      env: {
        RECONCILE_INTERVAL_MS: '500',
        OUTBOX_SWEEP_INTERVAL_MS: '200',
        // the default test lock (2 s) expires under a loaded machine's first-turn stalls
        NARRATE_LOCK_MS: '10000',
        DATABASE_POOL_SIZE: '8',
      },
    });
    system.fake.setDefaultReply((request) => {
      const prompt = JSON.stringify(request.body?.messages ?? []);
      // the turn the control-plane test cancels: the model holds it until then
      if (request.body?.stream === true && prompt.includes(HELD_ACTION)) {
        return { hangMs: 60_000, text: 'never sent' };
      }
      return { text: 'The tide turns against the pier.' };
    });
    try {
      for (const app of ['api', 'context-worker', 'context-worker', 'memory-worker'] as const) {
        await system.startApp(app);
      }
    } catch (error) {
      throw new Error(`${String(error)}\n${system.output()}\n${cluster.logTail()}`);
    }
    redis = openRedis(cluster.url, { maxRetriesPerRequest: 2 }) as Cluster;
    redis.on('error', () => undefined);
  });

  afterAll(async () => {
    redis?.disconnect();
    await system?.close();
    await cluster?.destroy();
  });

  it('answers /health, having read maxmemory-policy and AOF on every master', async () => {
    await system.explainFailure(async () => {
      const health = await fetch(`${system.apiUrl}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({
        status: 'ok',
        redis: 'up',
        redisMaxmemoryPolicy: 'noeviction',
        redisAof: true,
      });

      // one master of three evicting is enough to lose jobs: /health names it
      const [, , third] = cluster.ports;
      await cluster.command(third, 'CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru');
      try {
        const unsafe = await fetch(`${system.apiUrl}/health`);
        expect(unsafe.status).toBe(503);
        expect(((await unsafe.json()) as { problem: string }).problem).toContain(
          `Redis master 127.0.0.1:${third} maxmemory-policy is allkeys-lru`,
        );
      } finally {
        await cluster.command(third, 'CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
      }
    });
  });

  it('plays turns on many adventures at once, each streamed over SSE to its end', async () => {
    await system.explainFailure(async () => {
      const players = client();
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) ids.push(await players.createAdventure(adventure(`Quay ${i}`)));
      for (const id of ids) ledger.created(id);
      for (let round = 0; round < 3; round++) {
        const turns = await Promise.all(
          ids.map(async (id) => {
            const accepted = await players.act(id, 'do', `walk to lamp ${round}`);
            expect(accepted.status).toBe(202);
            return players.follow(accepted.body);
          }),
        );
        for (const stream of turns) {
          expect(stream.outcome).toBe('done');
          expect(stream.text).toContain('The tide turns against the pier.');
        }
      }
      // the streams really are spread: their shards' slots are on more than one master
      const masters = new Set(
        await Promise.all(
          ledger.streams.map(async ({ turnId }) => {
            const key = redisKeys.turnStream(system.queuePrefix, turnId);
            const slot = Number(await redis.cluster('KEYSLOT', key));
            expect(slot).toBe(redisKeySlot(key));
            return redis.slots[slot][0];
          }),
        ),
      );
      expect(masters.size).toBeGreaterThan(1);
    });
  });

  it('writes memories through the memory worker', async () => {
    await system.explainFailure(async () => {
      const players = client();
      const id = await players.createAdventure(adventure('The long watch'));
      ledger.created(id);
      for (let turn = 0; turn < 9; turn++) {
        const accepted = await players.act(id, 'do', `keep watch, hour ${turn}`);
        expect(accepted.status).toBe(202);
        expect((await players.follow(accepted.body)).outcome).toBe('done');
      }
      await waitFor(async () => ofType(await players.events(id), 'MemoryWritten').length > 0);
    });
  });

  it('answers a roll call and delivers a cancel over the control plane (pub/sub on the cluster)', async () => {
    await system.explainFailure(async () => {
      const workers = await players().expect(200, 'GET', '/v1/admin/workers');
      const apps = (workers.body as { app: string }[]).map((w) => w.app).sort();
      expect({ apps, workers: workers.body }).toMatchObject({
        apps: ['context-worker', 'context-worker', 'memory-worker'],
      });

      // a turn the model holds: the cancel must reach whichever worker runs it
      const id = await players().createAdventure(adventure('The held breath'));
      ledger.created(id);
      const accepted = await players().act(id, 'do', HELD_ACTION);
      expect(accepted.status).toBe(202);
      await waitFor(async () => {
        const status = await players().request(
          'GET',
          `/v1/adventures/${id}/turns/${accepted.body.turnId}`,
        );
        return status.body.status === 'running';
      });
      await players().expect(
        200,
        'POST',
        `/v1/adventures/${id}/turns/${accepted.body.turnId}/cancel`,
        {},
      );
      const stream = await players().follow(accepted.body);
      expect(stream.outcome).toBe('error');
      // the worker's model call was aborted (no narration recorded after the cancel)
      await waitFor(
        async () => ofType(await players().events(id), 'NarrationCancelled').length === 1,
      );
      expect(ofType(await players().events(id), 'Narrated')).toHaveLength(0);
    });
  });

  it('puts back a narrate job the cluster lost (the reconciler, from Postgres)', async () => {
    await system.explainFailure(async () => {
      const players = client();
      const id = await players.createAdventure(adventure('The lost job'));
      ledger.created(id);
      for (const worker of system.running('context-worker')) await worker.stop();
      const accepted = await players.act(id, 'do', 'ring the harbour bell');
      expect(accepted.status).toBe(202);
      const turnId = accepted.body.turnId;
      // the relay enqueued it; the master holding the narrate queue then "loses" it
      const queue = new Queue(QueueName.Narrate, {
        connection: redis,
        prefix: queueKeyPrefix(system.queuePrefix, QueueName.Narrate),
      });
      try {
        await waitFor(async () => (await queue.getJob(`narrate-${turnId}`)) !== undefined);
        await (await queue.getJob(`narrate-${turnId}`))!.remove();
        expect(await queue.getJob(`narrate-${turnId}`)).toBeUndefined();
      } finally {
        await queue.close();
      }
      await system.startApp('context-worker');
      await system.startApp('context-worker');
      expect((await players.follow(accepted.body)).outcome).toBe('done');
      const narrated = ofType(await players.events(id), 'Narrated');
      expect(narrated).toHaveLength(1);
      expect(system.output(400)).toContain('narrate job re-enqueued');
    });
  });

  it('kept every acknowledged turn exactly once (history check over the whole log)', async () => {
    const report = await checkHistory(database.connectionString, ledger, {
      adventures: ledger.adventures,
    });
    expectCleanHistory(report);
    expect(report.problems).toEqual([]);
  });

  it('is why the keys are tagged: the old untagged names are refused with CROSSSLOT', async () => {
    const installation = system.queuePrefix;
    // a BullMQ queue whose prefix has no hash tag: its add script spans several slots
    const untagged = new Queue(QueueName.Narrate, { connection: redis, prefix: installation });
    try {
      await expect(
        untagged.add(JobName.NarrateTurn, { adventureId: 'a', turnId: 'b' }, { jobId: 'x' }),
      ).rejects.toThrow(/CROSSSLOT/);
    } finally {
      await untagged.close();
    }
    // a fenced publish over a stream and a fence named the old way
    const turnId = randomUUID();
    await expect(
      redis.eval(
        "redis.call('SET', KEYS[2], 'token'); return redis.call('XADD', KEYS[1], '*', 'e', 'x')",
        2,
        `${installation}:turn-stream:${turnId}`,
        `${installation}:turn-fence:${turnId}`,
      ),
    ).rejects.toThrow(/CROSSSLOT/);
    // …and the same script over today's names runs
    await expect(
      redis.eval(
        "redis.call('SET', KEYS[2], 'token'); return redis.call('XADD', KEYS[1], '*', 'e', 'x')",
        2,
        redisKeys.turnStream(installation, turnId),
        redisKeys.turnFence(installation, turnId),
      ),
    ).resolves.toMatch(/^\d+-\d+$/);
    // every key the system wrote belongs to the installation (so clean-up and tools find it)
    const written = await keysOf(installation);
    expect(written.length).toBeGreaterThan(0);
  });
});

function players(): RecordingClient {
  return client();
}

async function keysOf(installation: string): Promise<string[]> {
  const keys: string[] = [];
  for (const node of redis.nodes('master')) {
    for (const pattern of installationKeyPatterns(installation)) {
      let cursor = '0';
      do {
        const [next, found] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
        keys.push(...found);
        cursor = next;
      } while (cursor !== '0');
    }
  }
  return keys;
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out after ${timeoutMs} ms`);
}
