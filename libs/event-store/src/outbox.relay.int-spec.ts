import { randomUUID } from 'node:crypto';
import {
  createTestDatabase,
  removeQueueKeys,
  TEST_REDIS_URL,
  testQueuePrefix,
  type TestDatabase,
} from '@chronicle/testing';
import { JobName, QueueName, QueueProducer, outboxRow } from '@chronicle/queue';
import { EventStoreRepository, type NewEvent, OutboxRelay } from '@chronicle/event-store';

const anEvent = (type = 'PlayerActed'): NewEvent => ({
  id: randomUUID(),
  type,
  schemaVersion: 1,
  data: { text: 'You light the lantern.' },
});

describe('the outbox and its relay (Postgres + Redis)', () => {
  let testDb: TestDatabase;
  let producer: QueueProducer;
  const prefix = testQueuePrefix();

  beforeAll(async () => {
    testDb = await createTestDatabase();
    producer = new QueueProducer({ redisUrl: TEST_REDIS_URL, prefix });
    await producer.waitUntilReady();
  });

  afterAll(async () => {
    await producer.close();
    await removeQueueKeys(prefix);
    await testDb.drop();
  });

  const pendingRows = () =>
    testDb.db.selectFrom('outbox').selectAll().where('enqueued_at', 'is', null).execute();

  it('writes the outbox row with the events, in the same statement', async () => {
    // Given a store with no relay: the process "crashed" right after commit.
    const store = new EventStoreRepository(testDb.db);
    const turnId = randomUUID();
    const adventureId = `adventure-${randomUUID()}`;

    const result = await store.appendToStream(adventureId, [anEvent()], {
      expectedVersion: 'no_stream',
      outbox: [outboxRow({ jobName: JobName.NarrateTurn, payload: { adventureId, turnId } })],
    });

    expect(result.outbox).toEqual([
      {
        id: expect.any(Number),
        queue: QueueName.Narrate,
        jobName: JobName.NarrateTurn,
        jobId: `narrate-${turnId}`,
        payload: { adventureId, turnId },
      },
    ]);
    const row = await testDb.db
      .selectFrom('outbox')
      .selectAll()
      .where('id', '=', String(result.outbox[0].id))
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ queue: 'narrate', job_name: 'narrate-turn', enqueued_at: null });
    expect(await producer.queue(QueueName.Narrate).getJob(`narrate-${turnId}`)).toBeUndefined();
  });

  it('rows whose enqueue never happened are enqueued by the sweeper', async () => {
    const store = new EventStoreRepository(testDb.db);
    const adventureId = `adventure-${randomUUID()}`;
    const turnId = randomUUID();
    await store.appendToStream(adventureId, [anEvent()], {
      expectedVersion: 'no_stream',
      outbox: [outboxRow({ jobName: JobName.NarrateTurn, payload: { adventureId, turnId } })],
    });
    const relay = new OutboxRelay(testDb.db, producer, { staleAfterMs: 0, sweepIntervalMs: 50 });

    relay.start();
    try {
      await waitFor(async () => (await pendingRows()).length === 0);
    } finally {
      await relay.stop();
    }

    const job = await producer.queue(QueueName.Narrate).getJob(`narrate-${turnId}`);
    expect(job?.name).toBe(JobName.NarrateTurn);
    expect(job?.data).toEqual({ adventureId, turnId });
    expect(job?.opts.attempts).toBe(3);
    expect(await relay.sweepOnce()).toBe(0);
  });

  it('the sweeper leaves fresh rows to the fast path', async () => {
    const store = new EventStoreRepository(testDb.db);
    const adventureId = `adventure-${randomUUID()}`;
    await store.appendToStream(adventureId, [anEvent()], {
      expectedVersion: 'no_stream',
      outbox: [
        outboxRow({ jobName: JobName.NarrateTurn, payload: { adventureId, turnId: randomUUID() } }),
      ],
    });
    const relay = new OutboxRelay(testDb.db, producer, { staleAfterMs: 60_000 });

    expect(await relay.sweepOnce()).toBe(0);
    expect((await pendingRows()).length).toBeGreaterThan(0);
    await new OutboxRelay(testDb.db, producer, { staleAfterMs: 0 }).sweepOnce();
  });

  it('enqueuing the same row twice creates one job', async () => {
    const store = new EventStoreRepository(testDb.db);
    const adventureId = `adventure-${randomUUID()}`;
    const turnId = randomUUID();
    const { outbox } = await store.appendToStream(adventureId, [anEvent()], {
      expectedVersion: 'no_stream',
      outbox: [outboxRow({ jobName: JobName.NarrateTurn, payload: { adventureId, turnId } })],
    });
    const relay = new OutboxRelay(testDb.db, producer, { staleAfterMs: 0 });
    const narrate = producer.queue(QueueName.Narrate);
    const before = await narrate.getJobCountByTypes('waiting', 'delayed', 'active', 'completed');

    // The fast path publishes, then the sweeper re-enqueues the same row (as
    // when the process died between the enqueue and marking the row).
    await relay.publish(outbox);
    await testDb.db.updateTable('outbox').set({ enqueued_at: null }).execute();
    await relay.sweepOnce();
    await relay.publish(outbox);

    const after = await narrate.getJobCountByTypes('waiting', 'delayed', 'active', 'completed');
    expect(after - before).toBe(1);
    expect((await narrate.getJob(`narrate-${turnId}`))?.data).toEqual({ adventureId, turnId });
  });

  it('the fast path enqueues before the append resolves and marks the rows in one later write', async () => {
    // Given marks that gather for a minute
    const relay = new OutboxRelay(testDb.db, producer, { markEveryMs: 60_000 });
    const store = new EventStoreRepository(testDb.db, { publisher: relay });
    const adventureId = `adventure-${randomUUID()}`;
    const turnIds = [randomUUID(), randomUUID()];

    // When two turns are handed off
    const outboxIds: string[] = [];
    for (const [version, turnId] of turnIds.entries()) {
      const { outbox } = await store.appendToStream(adventureId, [anEvent()], {
        expectedVersion: version,
        outbox: [outboxRow({ jobName: JobName.NarrateTurn, payload: { adventureId, turnId } })],
      });
      outboxIds.push(String(outbox[0].id));
    }

    // Then both jobs are queued at once, and the rows are marked only when the marks are written
    for (const turnId of turnIds) {
      expect(await producer.queue(QueueName.Narrate).getJob(`narrate-${turnId}`)).toBeDefined();
    }
    const marks = () =>
      testDb.db
        .selectFrom('outbox')
        .select('enqueued_at')
        .where('id', 'in', outboxIds)
        .execute()
        .then((rows) => rows.map((row) => row.enqueued_at));
    expect(await marks()).toEqual([null, null]);
    await relay.stop();
    const [first, second] = await marks();
    expect(first).toBeInstanceOf(Date);
    // one UPDATE: one transaction, one now()
    expect(second).toEqual(first);
  });

  it('memory jobs for one adventure coalesce into one waiting job', async () => {
    const relay = new OutboxRelay(testDb.db, producer);
    const store = new EventStoreRepository(testDb.db, { publisher: relay });
    const adventureId = `adventure-${randomUUID()}`;
    const memory = producer.queue(QueueName.Memory);
    const before = await memory.getJobCountByTypes('waiting');

    for (let version = 0; version < 3; version++) {
      await store.appendToStream(adventureId, [anEvent('Narrated')], {
        expectedVersion: version,
        outbox: [outboxRow({ jobName: JobName.UpdateMemory, payload: { adventureId } })],
      });
    }

    expect((await memory.getJobCountByTypes('waiting')) - before).toBe(1);
    await relay.flushMarks();
    expect(await pendingRows()).toEqual([]);
  });

  it('when Redis is down the append still succeeds and the row waits for the sweeper', async () => {
    const deadRedis = new QueueProducer({ redisUrl: 'redis://127.0.0.1:1', prefix }, 300);
    try {
      const warnings: string[] = [];
      const relay = new OutboxRelay(testDb.db, deadRedis, {
        logger: { warn: (message) => warnings.push(message) },
      });
      const store = new EventStoreRepository(testDb.db, { publisher: relay });
      const adventureId = `adventure-${randomUUID()}`;

      const result = await store.appendToStream(adventureId, [anEvent()], {
        expectedVersion: 'no_stream',
        outbox: [
          outboxRow({
            jobName: JobName.NarrateTurn,
            payload: { adventureId, turnId: randomUUID() },
          }),
        ],
      });

      expect(result.nextVersion).toBe(1);
      expect((await pendingRows()).map((r) => r.job_id)).toEqual([result.outbox[0].jobId]);
      expect(warnings).toEqual([expect.stringContaining('stays pending for the sweeper')]);
    } finally {
      await deadRedis.close();
    }
    await new OutboxRelay(testDb.db, producer, { staleAfterMs: 0 }).sweepOnce();
    expect(await pendingRows()).toEqual([]);
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}
