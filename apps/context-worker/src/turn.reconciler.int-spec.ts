// The reconciler against a Redis of the test's own: Redis loses everything (FLUSHALL, as a
// restart without persistence does) with one turn running and another waiting, restarts with
// its keys intact, and turns whose jobs keep vanishing or that run too long are ended; an active
// job that nobody holds (its lock gone on two passes in a row) is put back.
import type { NarratedData } from '@chronicle/adventure';
import { ChronicleMetrics } from '@chronicle/metrics';
import { queueKeyPrefix } from '@chronicle/platform';
import { JobName, QueueName } from '@chronicle/queue';
import { sql } from 'kysely';
import {
  act,
  actWithoutJob,
  createAdventure,
  finishedStream,
  readEvents,
  setUpNarrateSpec,
  sleep,
  startWorkerHarness,
  waitForTurnEnd,
  type WorkerHarness,
} from './testing/context-worker.harness';
import { PrivateRedis } from '@chronicle/testing';
import { TurnReconciler } from './turn.reconciler';
import { NarrateProcessor } from './narrate.processor';
import { Worker } from 'bullmq';
import Redis from 'ioredis';

const CHAT = '/v1/chat/completions';

/** What the harness's metrics counted for `labels` of a counter, once it is at least 1 (5 s). */
async function counted(harness: WorkerHarness, name: string, labels: Record<string, string>) {
  const metric = harness.app.get(ChronicleMetrics).registry.getSingleMetric(name);
  for (let waited = 0; ; waited += 50) {
    const { values } = await metric!.get();
    const value = values
      .filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))
      .reduce((sum, v) => sum + v.value, 0);
    if (value >= 1 || waited >= 5_000) return value;
    await sleep(50);
  }
}

function chunkTextAfterLastReset(entries: { event: string; data: unknown }[]): string {
  const reset = entries.map((e) => e.event).lastIndexOf('reset');
  return entries
    .slice(reset + 1)
    .filter((e) => e.event === 'chunk')
    .map((e) => (e.data as { text: string }).text)
    .join('');
}

describe('the reconciler, when Redis loses its data or keeps its keys', () => {
  let redis: PrivateRedis;

  // Redis first: the worker's settings name it.
  beforeAll(async () => {
    redis = await PrivateRedis.start({ appendOnly: true });
  });

  const spec = setUpNarrateSpec({
    fake: { chunkDelayMs: 1 },
    env: () => ({
      REDIS_URL: redis.url,
      MODEL_TIMEOUT_MS: '20000',
      // One slot: the second adventure's turn waits in the queue while the first runs.
      NARRATE_CONCURRENCY: '1',
      RECONCILE_INTERVAL_MS: '500',
    }),
  });

  // Declared after the set-up, so it runs once the worker has closed.
  afterAll(async () => {
    await redis?.destroy();
  });

  it('recovers a running and a waiting turn after FLUSHALL: both narrated, each stream one take after its reset', async () => {
    spec.fake.enqueue(
      // the running turn's first take: slow, so the flush lands mid-stream
      {
        text: 'The first take of the running turn '.repeat(4),
        chunks: 40,
        delayMs: 50,
        path: CHAT,
      },
    );
    spec.fake.setDefaultReply({ text: 'A clean take after the flush.' });
    const running = await createAdventure(spec.harness);
    const waiting = await createAdventure(spec.harness);
    const a = await act(spec.harness, running, 'do', 'light the lamp');
    await spec.fake.waitForRequests(1);
    await sleep(300);
    const b = await act(spec.harness, waiting, 'do', 'wait below');
    await sleep(200);
    const queue = spec.harness.producer.queue(QueueName.Narrate);
    expect(await queue.getJobState(`narrate-${b.turnId}`)).toBe('waiting');

    await redis.call('FLUSHALL');

    const [endA, endB] = await Promise.all([
      waitForTurnEnd(spec.harness, running, a.turnId, 20_000),
      waitForTurnEnd(spec.harness, waiting, b.turnId, 20_000),
    ]);
    expect(endA.inFlight).toBeNull();
    expect(endB.inFlight).toBeNull();
    for (const [adventureId, turnId] of [
      [running, a.turnId],
      [waiting, b.turnId],
    ]) {
      const events = await readEvents(spec.harness, adventureId);
      expect(events.map((e) => e.type)).toEqual(['AdventureCreated', 'PlayerActed', 'Narrated']);
      const entries = await finishedStream(spec.harness, turnId);
      expect(chunkTextAfterLastReset(entries).trim()).toBe(
        (events[2].data as NarratedData).action.text,
      );
    }
    const rows = await spec.harness.database.db.selectFrom('turns_in_flight').selectAll().execute();
    expect(rows).toEqual([]);
  });

  it('keeps recovering across a Redis restart with its keys intact, no process restarted', async () => {
    spec.fake.setDefaultReply({
      text: 'The story goes on after the restart.',
      chunks: 10,
      delayMs: 30,
    });
    const adventureId = await createAdventure(spec.harness);
    const before = await act(spec.harness, adventureId, 'do', 'before the restart');
    await waitForTurnEnd(spec.harness, adventureId, before.turnId, 20_000);

    await redis.stopServer();
    await sleep(1_000);
    await redis.startServer();

    const started = Date.now();
    const after = await act(spec.harness, adventureId, 'do', 'after the restart');
    await waitForTurnEnd(spec.harness, adventureId, after.turnId, 20_000);
    expect(Date.now() - started).toBeLessThan(15_000);
    const events = await readEvents(spec.harness, adventureId);
    expect(events.map((e) => e.type).slice(-2)).toEqual(['PlayerActed', 'Narrated']);
  });

  it('re-enqueues a turn whose job never reached Redis, within two intervals', async () => {
    spec.fake.setDefaultReply({ text: 'Found again.' });
    const adventureId = await createAdventure(spec.harness);
    const started = Date.now();
    const { turnId } = await actWithoutJob(spec.harness, adventureId, 'call out');
    await waitForTurnEnd(spec.harness, adventureId, turnId, 10_000);
    expect(Date.now() - started).toBeLessThan(2 * 500 + 1_500);
    const events = await readEvents(spec.harness, adventureId);
    expect(events[events.length - 1].type).toBe('Narrated');
    const row = await spec.harness.producer.queue(QueueName.Narrate).getJob(`narrate-${turnId}`);
    expect(row?.name).toBe(JobName.NarrateTurn);
    // the requeued job carries the turn's start, so POST → model request counts the loss
    expect(row?.data.requestedAt).toBeLessThanOrEqual(Date.now());
    expect(row?.data.requestedAt).toBeGreaterThan(started - 5_000);
    expect(
      await counted(spec.harness, 'chronicle_reconciler_actions_total', { action: 'requeued' }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('re-enqueues the memory work the outbox asked for once Redis has lost its data', async () => {
    spec.fake.setDefaultReply({ text: 'A memorable turn.' });
    const adventureId = await createAdventure(spec.harness, {
      settings: { memoryBankEnabled: true } as never,
    });
    const { turnId } = await act(spec.harness, adventureId, 'do', 'remember this');
    await waitForTurnEnd(spec.harness, adventureId, turnId, 10_000);
    const memory = spec.harness.producer.queue(QueueName.Memory);
    const owed = async () =>
      (await memory.getJobs(['waiting', 'delayed', 'prioritized'])).filter(
        (job) => job.data.adventureId === adventureId,
      );
    for (let i = 0; i < 50 && (await owed()).length === 0; i++) await sleep(100);
    expect(await owed()).toHaveLength(1);

    await redis.call('FLUSHALL');
    expect(await owed()).toHaveLength(0);
    for (let i = 0; i < 50 && (await owed()).length === 0; i++) await sleep(100);
    expect(await owed()).toHaveLength(1);
  });

  it('runs one pass at a time per installation: none while another process holds the lock', async () => {
    const reconciler = spec.harness.app.get(TurnReconciler);
    const key = `chronicle-reconciler:${spec.harness.config.queuePrefix}`;
    // another process's pass, as Postgres sees it: a transaction holding the lock
    await spec.harness.database.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(hashtext(${key}))`.execute(trx);
      expect(await reconciler.reconcileOnce()).toMatchObject({ ran: false, requeued: 0 });
    });
    expect(await reconciler.reconcileOnce()).toMatchObject({ ran: true });
  });
});

describe('the reconciler ending turns', () => {
  const spec = setUpNarrateSpec({
    fake: { chunkDelayMs: 1 },
    env: {
      MODEL_TIMEOUT_MS: '60000',
      RECONCILE_INTERVAL_MS: '300',
      RECONCILE_MAX_REQUEUES: '0',
      NARRATE_TURN_DEADLINE_MS: '3000',
    },
  });

  it('ends a turn whose job is missing more often than allowed as lost', async () => {
    const adventureId = await createAdventure(spec.harness);
    const { turnId } = await actWithoutJob(spec.harness, adventureId, 'vanish');
    await waitForTurnEnd(spec.harness, adventureId, turnId, 10_000);
    const events = await readEvents(spec.harness, adventureId);
    expect(events[events.length - 1]).toMatchObject({
      type: 'NarrationFailed',
      data: { turnId, code: 'lost' },
    });
    const entries = await finishedStream(spec.harness, turnId);
    expect(entries[entries.length - 1]).toMatchObject({ event: 'error', data: { code: 'lost' } });
    expect(
      await counted(spec.harness, 'chronicle_reconciler_actions_total', { action: 'lost' }),
    ).toBe(1);
    expect(await counted(spec.harness, 'chronicle_narrations_failed_total', { code: 'lost' })).toBe(
      1,
    );
  });

  it('ends a turn in flight past NARRATE_TURN_DEADLINE_MS as deadline, and stops its model call', async () => {
    spec.fake.enqueue({ hangMs: 30_000, path: CHAT });
    const adventureId = await createAdventure(spec.harness);
    const { turnId } = await act(spec.harness, adventureId, 'do', 'wait forever');
    const [request] = await spec.fake.waitForRequests(1);
    await waitForTurnEnd(spec.harness, adventureId, turnId, 10_000);
    const events = await readEvents(spec.harness, adventureId);
    expect(events[events.length - 1]).toMatchObject({
      type: 'NarrationFailed',
      data: { turnId, code: 'deadline' },
    });
    for (let i = 0; i < 100 && request.endedAt === undefined; i++) await sleep(20);
    expect(request.aborted).toBe(true);
  });
});

describe('the reconciler and an active job nobody holds', () => {
  const spec = setUpNarrateSpec({
    fake: { chunkDelayMs: 1 },
    env: {
      // The passes are this test's to run, and BullMQ's own stalled check (every lock duration)
      // must not take the job back first: what is tested is the reconciler's repair.
      RECONCILE_INTERVAL_MS: '300000',
      NARRATE_LOCK_MS: '600000',
      NARRATE_TURN_DEADLINE_MS: '3600000',
    },
  });

  beforeAll(async () => {
    // This process's own worker is closed: the job's only taker is the test's frozen one (a
    // paused worker may still take a job its blocking wait had already been woken for).
    await spec.harness.app.get(NarrateProcessor).worker.close();
  });

  it('re-enqueues an active job whose lock is gone only when it is still so on the next pass', async () => {
    spec.fake.setDefaultReply({ text: 'Taken up again.' });
    const reconciler = spec.harness.app.get(TurnReconciler);
    const queue = spec.harness.producer.queue(QueueName.Narrate);
    const adventureId = await createAdventure(spec.harness);

    // A worker took the job and froze, and its lock lapsed: the job is active, nobody holds it.
    const { turnId } = await actWithoutJob(spec.harness, adventureId, 'hold the rope');
    const jobId = `narrate-${turnId}`;
    await spec.harness.producer.enqueue(JobName.NarrateTurn, { adventureId, turnId });
    const taker = new Worker(QueueName.Narrate, null, {
      connection: { url: spec.harness.config.redisUrl },
      prefix: queueKeyPrefix(spec.harness.config.queuePrefix, QueueName.Narrate),
    });
    try {
      const taken = await taker.getNextJob('frozen-worker-token');
      expect(taken?.id).toBe(jobId);
    } finally {
      await taker.close();
    }
    const redis = new Redis(spec.harness.config.redisUrl);
    try {
      await redis.del(`${queue.toKey(jobId)}:lock`);
    } finally {
      redis.disconnect();
    }
    expect(await queue.getJobState(jobId)).toBe('active');
    // older than one interval, as the passes ask of a turn (and younger than the deadline)
    await spec.harness.database.db
      .updateTable('turns_in_flight')
      .set({ started_at: sql`now() - interval '7 minutes'` })
      .where('turn_id', '=', turnId)
      .execute();

    // the first pass only notes it (BullMQ's stalled check may yet take it back) …
    expect(await reconciler.reconcileOnce()).toMatchObject({ ran: true, requeued: 0 });
    expect(await queue.getJobState(jobId)).toBe('active');
    // … the second finds it still stuck and puts it back under its own id
    expect(await reconciler.reconcileOnce()).toMatchObject({ ran: true, requeued: 1 });
    expect(await queue.getJobState(jobId)).toBe('waiting');
    const row = await spec.harness.database.db
      .selectFrom('turns_in_flight')
      .select('requeues')
      .where('turn_id', '=', turnId)
      .executeTakeFirstOrThrow();
    expect(row.requeues).toBe(1);

    // a live worker of the installation takes it up
    const live = await startWorkerHarness(spec.env, { sharing: spec.harness });
    try {
      await waitForTurnEnd(spec.harness, adventureId, turnId, 20_000);
    } finally {
      await live.close();
    }
    const events = await readEvents(spec.harness, adventureId);
    expect(events.map((e) => e.type)).toEqual(['AdventureCreated', 'PlayerActed', 'Narrated']);
  });

  it('leaves an active job alone when its lock is back by the next pass', async () => {
    const reconciler = spec.harness.app.get(TurnReconciler);
    const queue = spec.harness.producer.queue(QueueName.Narrate);
    const adventureId = await createAdventure(spec.harness);
    const { turnId } = await actWithoutJob(spec.harness, adventureId, 'hold fast');
    const jobId = `narrate-${turnId}`;
    await spec.harness.producer.enqueue(JobName.NarrateTurn, { adventureId, turnId });
    const taker = new Worker(QueueName.Narrate, null, {
      connection: { url: spec.harness.config.redisUrl },
      prefix: queueKeyPrefix(spec.harness.config.queuePrefix, QueueName.Narrate),
    });
    const lockKey = `${queue.toKey(jobId)}:lock`;
    const redis = new Redis(spec.harness.config.redisUrl);
    try {
      await taker.getNextJob('slow-worker-token');
      await spec.harness.database.db
        .updateTable('turns_in_flight')
        .set({ started_at: sql`now() - interval '7 minutes'` })
        .where('turn_id', '=', turnId)
        .execute();
      // the lock lapsed for one pass (a long GC pause), then the holder renewed it
      const held = await redis.get(lockKey);
      await redis.del(lockKey);
      expect(await reconciler.reconcileOnce()).toMatchObject({ requeued: 0 });
      await redis.set(lockKey, held ?? 'slow-worker-token', 'PX', 600_000);
      expect(await reconciler.reconcileOnce()).toMatchObject({ requeued: 0 });
      expect(await queue.getJobState(jobId)).toBe('active');
    } finally {
      redis.disconnect();
      await taker.close();
    }
  });

  it('given 600 turns stopped by a script, when a live turn lost its job, then the reconciler still finds it', async () => {
    const reconciler = spec.harness.app.get(TurnReconciler);
    const queue = spec.harness.producer.queue(QueueName.Narrate);
    // Each turn ends as the stopped-turn leak's did (an onModelContext script), more than the
    // reconciler's batch of 500: left in turns_in_flight, they would fill its every pass.
    const finished = await createAdventure(spec.harness);
    for (let turn = 0; turn < 600; turn++) {
      const { turnId } = await actWithoutJob(spec.harness, finished, `turn ${turn}`);
      await spec.harness.adventures.handle(
        finished,
        {
          type: 'StopTurnByScript',
          data: {
            turnId,
            scriptId: 'stopper',
            message: 'stopped',
            effects: { runs: [], states: {}, cardOps: [], messages: [] },
          },
        },
        { actor: 'test' },
      );
    }
    const live = await createAdventure(spec.harness);
    const { turnId } = await actWithoutJob(spec.harness, live, 'the one that counts');
    // Any turn left behind is older than the live one: the reconciler reads the oldest first.
    await spec.harness.database.db
      .updateTable('turns_in_flight')
      .set({ started_at: sql`now() - interval '7 minutes'` })
      .where('turn_id', '<>', turnId)
      .execute();
    await spec.harness.database.db
      .updateTable('turns_in_flight')
      .set({ started_at: sql`now() - interval '6 minutes'` })
      .where('turn_id', '=', turnId)
      .execute();

    const report = await reconciler.reconcileOnce();
    expect(report.inFlight).toBeLessThan(500);
    expect(report.requeued).toBeGreaterThanOrEqual(1);
    expect(await queue.getJobState(`narrate-${turnId}`)).not.toBe('unknown');
  }, 120_000);
});
