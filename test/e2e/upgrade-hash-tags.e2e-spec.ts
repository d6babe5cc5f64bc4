// Upgrading an installation from the untagged Redis key names (`chronicle:narrate:…`) to the
// hash-tagged ones (`{chronicle:narrate}:narrate:…`): the new processes read none of what the old
// ones left in Redis, and lose nothing, because Postgres holds every turn and its outbox row. The
// test leaves Redis as an old version would (its jobs and data-loss marker under the old names,
// nothing under the new), starts the new workers, and checks that the turn in flight is narrated
// (the reconciler re-enqueues it), that the memory work the log owes is done (the reconciler,
// finding no marker under its new name, re-enqueues it), and that the log is clean.
import { Queue } from 'bullmq';
import Redis from 'ioredis';
import { installationKeyPatterns, queueKeyPrefix } from '@chronicle/platform';
import { JobName, QueueName } from '@chronicle/queue';
import {
  AppSystem,
  checkHistory,
  expectCleanHistory,
  HistoryLedger,
  isAppBuilt,
} from '@chronicle/testing';
import { RecordingClient } from '../faults/support/recording.client';
import { ofType } from './support/chronicle.client';

jest.setTimeout(180_000);

const describeBuilt = isAppBuilt('memory-worker') ? describe : describe.skip;

let system: AppSystem;
let redis: Redis;
const ledger = new HistoryLedger();

const adventure = (title: string) => ({
  title,
  opening: 'The ferry waits at the slip with its lamps lit.',
  placeholders: {},
  storyCards: [],
  settings: { model: 'fake-model', memoryBankEnabled: true },
});

describeBuilt('upgrading to hash-tagged Redis keys', () => {
  beforeAll(async () => {
    system = await AppSystem.start({
      apps: ['api', 'context-worker'],
      fake: { instant: true },
      env: { RECONCILE_INTERVAL_MS: '500', NARRATE_LOCK_MS: '10000' },
    });
    redis = new Redis(system.redisUrl);
  });

  afterAll(async () => {
    await redis?.quit();
    await system?.close();
  });

  it('loses no turn and no memory work that the old names held', async () => {
    await system.explainFailure(async () => {
      const client = new RecordingClient(system.apiUrl, ledger);
      const installation = system.queuePrefix;
      // before the upgrade: one adventure narrated (memory work owed, the memory worker is off)…
      const narrated = await client.createAdventure(adventure('Before'));
      ledger.created(narrated);
      const first = await client.act(narrated, 'do', 'board the ferry');
      expect((await client.follow(first.body)).outcome).toBe('done');
      // …and one turn accepted while no context worker runs: in flight, its job queued
      await system.process('context-worker').stop();
      const pending = await client.createAdventure(adventure('Across'));
      ledger.created(pending);
      const accepted = await client.act(pending, 'do', 'cast off');
      expect(accepted.status).toBe(202);
      const jobId = `narrate-${accepted.body.turnId}`;
      const tagged = new Queue(QueueName.Narrate, {
        connection: redis,
        prefix: queueKeyPrefix(installation, QueueName.Narrate),
      });
      await waitFor(async () => (await tagged.getJob(jobId)) !== undefined);
      await tagged.close();

      // Redis as the old version leaves it: its jobs and marker under the old names, none new
      await deleteKeys(installationKeyPatterns(installation)[1]);
      const old = {
        narrate: new Queue(QueueName.Narrate, { connection: redis, prefix: installation }),
        memory: new Queue(QueueName.Memory, { connection: redis, prefix: installation }),
      };
      await old.narrate.add(
        JobName.NarrateTurn,
        { adventureId: pending, turnId: accepted.body.turnId },
        { jobId },
      );
      await old.memory.add(JobName.UpdateMemory, { adventureId: narrated });
      await redis.set(`${installation}:reconciler:epoch`, new Date().toISOString());

      // the new version starts
      await system.startApp('context-worker');
      await system.startApp('memory-worker');
      expect((await client.follow(accepted.body)).outcome).toBe('done');
      expect(ofType(await client.events(pending), 'Narrated')).toHaveLength(1);
      await waitFor(async () =>
        system
          .running('memory-worker')
          .some((p) => p.stdout.includes('memory pass done') && p.stdout.includes(narrated)),
      );
      const output = system.output(400);
      expect(output).toContain('narrate job re-enqueued');
      expect(output).toContain('Redis lost its data: memory jobs re-enqueued from the outbox');
      // the old names were only ever read by the old version: still there, never taken
      expect(await old.narrate.getJobCounts('waiting')).toEqual({ waiting: 1 });
      expect(await old.memory.getJobCounts('waiting')).toEqual({ waiting: 1 });
      await Promise.all([old.narrate.close(), old.memory.close()]);

      expectCleanHistory(
        await checkHistory(system.database.connectionString, ledger, {
          adventures: ledger.adventures,
        }),
      );
    });
  });
});

async function deleteKeys(pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}

async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out after ${timeoutMs} ms`);
}
