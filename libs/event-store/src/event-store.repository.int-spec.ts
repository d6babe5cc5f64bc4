import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@chronicle/testing';
import { JobName, QueueName, outboxRow } from '@chronicle/queue';
import { sql } from 'kysely';
import {
  EventIdReuseError,
  EventStoreRepository,
  type NewEvent,
  StreamVersionConflictError,
} from '@chronicle/event-store';

function anEvent(type = 'PlayerActed', data: unknown = { text: 'You open the door.' }): NewEvent {
  return { id: randomUUID(), type, schemaVersion: 1, data, metadata: { actor: 'player' } };
}

// The two append paths (the one-event statement, tried first when it applies, and the
// `append_to_stream` function) are one contract: every case runs against both.
describe.each([
  ['the one-event statement when it applies', true],
  ['append_to_stream only', false],
])('EventStoreRepository (Postgres), appending through %s', (_, oneEventStatement) => {
  let testDb: TestDatabase;
  let store: EventStoreRepository;

  beforeAll(async () => {
    testDb = await createTestDatabase();
    store = new EventStoreRepository(testDb.db, { oneEventStatement });
  });

  afterAll(async () => {
    await testDb.drop();
  });

  it('appends a new stream from version 1 and reads it back in order', async () => {
    const streamId = `adventure-${randomUUID()}`;
    const events = [anEvent('AdventureCreated', { title: 'The Keep' }), anEvent()];

    const result = await store.appendToStream(streamId, events, { expectedVersion: 'no_stream' });

    expect(result.nextVersion).toBe(2);
    expect(result.duplicate).toBe(false);
    expect(result.positions).toHaveLength(2);
    expect(result.positions[1]).toBeGreaterThan(result.positions[0]);
    const stored = await store.readStream(streamId);
    expect(stored.map((e) => [e.version, e.id, e.type, e.position])).toEqual([
      [1, events[0].id, 'AdventureCreated', result.positions[0]],
      [2, events[1].id, 'PlayerActed', result.positions[1]],
    ]);
    expect(stored[0].data).toEqual({ title: 'The Keep' });
    expect(stored[1].metadata).toEqual({ actor: 'player' });
    expect(stored[0].recordedAt).toBeInstanceOf(Date);
    expect(typeof stored[0].position).toBe('number');
    expect(await store.streamVersion(streamId)).toBe(2);
    expect(await store.streamVersion(`adventure-${randomUUID()}`)).toBe(0);
  });

  it('reads a version range, a limit and specific versions', async () => {
    const streamId = `adventure-${randomUUID()}`;
    const events = Array.from({ length: 6 }, (_, i) => anEvent('PlayerActed', { n: i + 1 }));
    await store.appendToStream(streamId, events, { expectedVersion: 'no_stream' });

    const range = await store.readStream(streamId, { from: 2, to: 4 });
    const limited = await store.readStream(streamId, { from: 3, limit: 2 });
    const picked = await store.readStreamVersions(streamId, [5, 1, 9]);

    expect(range.map((e) => e.version)).toEqual([2, 3, 4]);
    expect(limited.map((e) => e.version)).toEqual([3, 4]);
    expect(picked.map((e) => [e.version, e.data])).toEqual([
      [1, { n: 1 }],
      [5, { n: 5 }],
    ]);
  });

  it('rejects an append at a stale expected version with the actual version', async () => {
    const streamId = `adventure-${randomUUID()}`;
    await store.appendToStream(streamId, [anEvent(), anEvent()], { expectedVersion: 'no_stream' });

    const attempt = store.appendToStream(streamId, [anEvent()], { expectedVersion: 1 });

    await expect(attempt).rejects.toBeInstanceOf(StreamVersionConflictError);
    await expect(attempt).rejects.toMatchObject({ streamId, expectedVersion: 1, actualVersion: 2 });
    await expect(
      store.appendToStream(streamId, [anEvent()], { expectedVersion: 'no_stream' }),
    ).rejects.toMatchObject({ actualVersion: 2 });
    expect(await store.streamVersion(streamId)).toBe(2);
  });

  it("appends at 'any' version without a check", async () => {
    const streamId = `adventure-${randomUUID()}`;
    await store.appendToStream(streamId, [anEvent()], { expectedVersion: 'any' });
    const result = await store.appendToStream(streamId, [anEvent()], { expectedVersion: 'any' });
    expect(result.nextVersion).toBe(2);
  });

  it('8 concurrent appends at the same expected version: one wins, seven conflict, versions stay contiguous', async () => {
    const streamId = `adventure-${randomUUID()}`;
    await store.appendToStream(streamId, [anEvent('AdventureCreated')], {
      expectedVersion: 'no_stream',
    });

    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        store.appendToStream(
          streamId,
          [anEvent('PlayerActed', { client: i }), anEvent('Narrated')],
          {
            expectedVersion: 1,
          },
        ),
      ),
    );

    const won = outcomes.filter((o) => o.status === 'fulfilled');
    const lost = outcomes.filter((o) => o.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(7);
    for (const o of lost) {
      expect(o.reason).toBeInstanceOf(StreamVersionConflictError);
      expect(o.reason).toMatchObject({ expectedVersion: 1, actualVersion: 3 });
    }
    const stored = await store.readStream(streamId);
    expect(stored.map((e) => e.version)).toEqual([1, 2, 3]);
    expect(await store.streamVersion(streamId)).toBe(3);
  });

  it('8 concurrent first appends to a new stream: one creates it, seven conflict', async () => {
    const streamId = `adventure-${randomUUID()}`;

    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, () =>
        store.appendToStream(streamId, [anEvent('AdventureCreated')], {
          expectedVersion: 'no_stream',
        }),
      ),
    );

    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    expect(
      outcomes.filter(
        (o) => o.status === 'rejected' && o.reason instanceof StreamVersionConflictError,
      ),
    ).toHaveLength(7);
    expect((await store.readStream(streamId)).map((e) => e.version)).toEqual([1]);
  });

  it('the same events appended twice are stored once and return the original positions', async () => {
    const streamId = `adventure-${randomUUID()}`;
    await store.appendToStream(streamId, [anEvent('AdventureCreated')], {
      expectedVersion: 'no_stream',
    });
    const batch = [anEvent(), anEvent('Narrated')];

    const first = await store.appendToStream(streamId, batch, { expectedVersion: 1 });
    await store.appendToStream(streamId, [anEvent()], { expectedVersion: 3 });
    // The retry still carries the expected version it was decided at.
    const retry = await store.appendToStream(streamId, batch, { expectedVersion: 1 });

    expect(retry).toEqual({ ...first, duplicate: true, outbox: [] });
    expect(first.duplicate).toBe(false);
    const stored = await store.readStream(streamId);
    expect(stored).toHaveLength(4);
    expect(stored.filter((e) => e.id === batch[0].id)).toHaveLength(1);
  });

  it('concurrent retries of one batch store it once and all get the same positions', async () => {
    const streamId = `adventure-${randomUUID()}`;
    const batch = [anEvent('AdventureCreated'), anEvent()];

    const results = await Promise.all(
      Array.from({ length: 4 }, () =>
        store.appendToStream(streamId, batch, { expectedVersion: 'no_stream' }),
      ),
    );

    expect(new Set(results.map((r) => r.positions.join(','))).size).toBe(1);
    expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
    expect(await store.readStream(streamId)).toHaveLength(2);
  });

  it('refuses a batch that reuses some stored ids alongside new ones', async () => {
    const streamId = `adventure-${randomUUID()}`;
    const stored = anEvent();
    await store.appendToStream(streamId, [stored], { expectedVersion: 'no_stream' });

    // At a stale expected version (the slow path) and at the current one (the fast path).
    await expect(
      store.appendToStream(streamId, [stored, anEvent()], { expectedVersion: 0 }),
    ).rejects.toBeInstanceOf(EventIdReuseError);
    await expect(
      store.appendToStream(streamId, [stored, anEvent()], { expectedVersion: 1 }),
    ).rejects.toBeInstanceOf(EventIdReuseError);
    expect(await store.streamVersion(streamId)).toBe(1);
  });

  it('one event at a known version stores the same rows as a batch, outbox included', async () => {
    const streamId = `adventure-${randomUUID()}`;
    const turnId = randomUUID();
    await store.appendToStream(streamId, [anEvent('AdventureCreated')], {
      expectedVersion: 'no_stream',
    });
    const storedRow = (id: number) =>
      testDb.db
        .selectFrom('outbox')
        .select(['queue', 'job_name', 'job_id', 'payload'])
        .where('id', '=', String(id))
        .executeTakeFirstOrThrow();

    // A job with its own id, then a job whose id is derived from its row, then none.
    const narrated = anEvent('Narrated', { text: 'The door creaks.' });
    const first = await store.appendToStream(streamId, [narrated], {
      expectedVersion: 1,
      outbox: [
        outboxRow({ jobName: JobName.NarrateTurn, payload: { adventureId: streamId, turnId } }),
      ],
    });
    const second = await store.appendToStream(streamId, [anEvent()], {
      expectedVersion: 2,
      outbox: [outboxRow({ jobName: JobName.UpdateMemory, payload: { adventureId: streamId } })],
    });
    const third = await store.appendToStream(streamId, [anEvent()], { expectedVersion: 3 });

    expect(first).toEqual({
      positions: [expect.any(Number)],
      nextVersion: 2,
      duplicate: false,
      outbox: [
        {
          id: expect.any(Number),
          queue: QueueName.Narrate,
          jobName: JobName.NarrateTurn,
          jobId: `narrate-${turnId}`,
          payload: { adventureId: streamId, turnId },
        },
      ],
    });
    expect(await storedRow(first.outbox[0].id)).toEqual({
      queue: 'narrate',
      job_name: 'narrate-turn',
      job_id: `narrate-${turnId}`,
      payload: { adventureId: streamId, turnId },
    });
    const memoryJobId = `update-memory-outbox-${second.outbox[0].id}`;
    expect(second.outbox).toEqual([expect.objectContaining({ jobId: memoryJobId })]);
    expect((await storedRow(second.outbox[0].id)).job_id).toBe(memoryJobId);
    expect(third).toMatchObject({ nextVersion: 4, outbox: [] });

    const stored = await store.readStream(streamId);
    expect(stored.map((e) => [e.version, e.position])).toEqual([
      [1, expect.any(Number)],
      [2, first.positions[0]],
      [3, second.positions[0]],
      [4, third.positions[0]],
    ]);
    expect(stored[1]).toMatchObject({
      id: narrated.id,
      type: 'Narrated',
      schemaVersion: 1,
      data: { text: 'The door creaks.' },
      metadata: { actor: 'player' },
    });
    expect(await store.streamVersion(streamId)).toBe(4);
  });

  it('one event reusing a stored id at the current version is refused and writes nothing', async () => {
    const streamId = `adventure-${randomUUID()}`;
    const stored = anEvent();
    await store.appendToStream(streamId, [stored], { expectedVersion: 'no_stream' });

    await expect(
      store.appendToStream(streamId, [{ ...stored, type: 'Narrated' }], {
        expectedVersion: 1,
        outbox: [
          outboxRow({
            jobName: JobName.NarrateTurn,
            payload: { adventureId: streamId, turnId: stored.id },
          }),
        ],
      }),
    ).rejects.toBeInstanceOf(EventIdReuseError);
    expect(await store.streamVersion(streamId)).toBe(1);
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM outbox WHERE payload->>'adventureId' = ${streamId}
    `.execute(testDb.db);
    expect(rows[0].n).toBe(0);
  });

  it('a stream whose row a conflict left at version 0 takes its first append', async () => {
    const streamId = `adventure-${randomUUID()}`;
    await expect(
      store.appendToStream(streamId, [anEvent()], { expectedVersion: 3 }),
    ).rejects.toBeInstanceOf(StreamVersionConflictError);

    const result = await store.appendToStream(streamId, [anEvent(), anEvent()], {
      expectedVersion: 'no_stream',
    });

    expect(result.nextVersion).toBe(2);
    expect((await store.readStream(streamId)).map((e) => e.version)).toEqual([1, 2]);
  });

  it("appends inside a caller's transaction and rolls back with it", async () => {
    const streamId = `adventure-${randomUUID()}`;

    await expect(
      testDb.db.transaction().execute(async (trx) => {
        await store.appendToStream(streamId, [anEvent()], { expectedVersion: 'no_stream', trx });
        expect(await store.readStream(streamId, { trx })).toHaveLength(1);
        throw new Error('use case failed after the append');
      }),
    ).rejects.toThrow('use case failed');

    expect(await store.readStream(streamId)).toHaveLength(0);
    expect(await store.streamVersion(streamId)).toBe(0);
  });

  it('a conflict inside a transaction does not abort it', async () => {
    const streamId = `adventure-${randomUUID()}`;
    await store.appendToStream(streamId, [anEvent()], { expectedVersion: 'no_stream' });

    const version = await testDb.db.transaction().execute(async (trx) => {
      await expect(
        store.appendToStream(streamId, [anEvent()], { expectedVersion: 0, trx }),
      ).rejects.toBeInstanceOf(StreamVersionConflictError);
      await store.appendToStream(streamId, [anEvent()], { expectedVersion: 1, trx });
      return store.streamVersion(streamId, trx);
    });

    expect(version).toBe(2);
  });

  it('records the writing transaction id on every event', async () => {
    const streamId = `adventure-${randomUUID()}`;
    await store.appendToStream(streamId, [anEvent(), anEvent()], { expectedVersion: 'no_stream' });
    const { rows } = await sql<{ tx_ids: number }>`
      SELECT count(DISTINCT tx_id)::int AS tx_ids FROM events WHERE stream_id = ${streamId}
    `.execute(testDb.db);
    expect(rows[0].tx_ids).toBe(1);
  });
});
