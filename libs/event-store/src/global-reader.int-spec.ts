import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@chronicle/testing';
import {
  type Checkpoint,
  EventStoreRepository,
  type NewEvent,
  type StoredEvent,
} from '@chronicle/event-store';

const anEvent = (n: number): NewEvent => ({
  id: randomUUID(),
  type: 'PlayerActed',
  schemaVersion: 1,
  data: { n },
});

describe('readAll, the global reader (Postgres)', () => {
  let testDb: TestDatabase;
  let store: EventStoreRepository;

  beforeAll(async () => {
    testDb = await createTestDatabase();
    store = new EventStoreRepository(testDb.db);
  });

  afterAll(async () => {
    await testDb.drop();
  });

  /** Reads every page after `from`; returns the events and the last checkpoint. */
  async function drain(from: Checkpoint | undefined, limit = 100) {
    const events: StoredEvent[] = [];
    let checkpoint = from;
    for (;;) {
      const page = await store.readAll({ after: checkpoint, limit });
      events.push(...page.events);
      checkpoint = page.checkpoint;
      if (page.events.length < limit) return { events, checkpoint };
    }
  }

  /**
   * Drains until `done` holds for everything delivered since `from`. The
   * horizon is cluster-wide: a transaction open in another test file's
   * database holds delivery back for a moment (never loses anything), so the
   * wait is bounded rather than a single read.
   */
  async function drainUntil(
    from: Checkpoint | undefined,
    done: (events: StoredEvent[]) => boolean,
    limit = 100,
  ) {
    const events: StoredEvent[] = [];
    let checkpoint = from;
    const deadline = Date.now() + 15_000;
    for (;;) {
      const page = await drain(checkpoint, limit);
      events.push(...page.events);
      checkpoint = page.checkpoint;
      if (done(events)) return { events, checkpoint };
      if (Date.now() > deadline) throw new Error(`reader stalled after ${events.length} events`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('delivers an event whose transaction took the lower position but committed later, and nothing twice', async () => {
    const { checkpoint: start } = await drain(undefined);
    const early = `adventure-${randomUUID()}`;
    const late = `adventure-${randomUUID()}`;

    // Given: transaction A appends first (lower position) and stays open,
    // transaction B appends after it (higher position) and commits.
    const slow = await testDb.db.startTransaction().execute();
    const a = await store.appendToStream(early, [anEvent(1)], {
      expectedVersion: 'no_stream',
      trx: slow,
    });
    const b = await store.appendToStream(late, [anEvent(2)], { expectedVersion: 'no_stream' });
    expect(a.positions[0]).toBeLessThan(b.positions[0]);

    // When the reader runs while A is still open, it holds B back instead of
    // passing B's position (which would skip A's forever).
    const whileOpen = await drain(start);
    expect(whileOpen.events.map((e) => e.streamId)).not.toContain(late);
    expect(whileOpen.events.map((e) => e.streamId)).not.toContain(early);

    await slow.commit().execute();

    // Then: resumed from its checkpoint, it delivers both, A's first.
    const afterCommit = await drainUntil(whileOpen.checkpoint, (events) =>
      events.some((e) => e.streamId === late),
    );
    expect(afterCommit.events.map((e) => e.streamId)).toEqual([early, late]);
    expect(afterCommit.events.map((e) => e.position)).toEqual([a.positions[0], b.positions[0]]);

    // And a reader resumed later delivers only what is new.
    const third = await store.appendToStream(early, [anEvent(3)], { expectedVersion: 1 });
    const resumed = await drainUntil(afterCommit.checkpoint, (events) => events.length > 0);
    expect(resumed.events.map((e) => e.position)).toEqual(third.positions);
    const idle = await drain(resumed.checkpoint);
    expect(idle.events).toEqual([]);
    expect(idle.checkpoint).toEqual(resumed.checkpoint);
  });

  it('pages through the whole log exactly once while appends run concurrently', async () => {
    const { checkpoint: start } = await drain(undefined);
    const streams = Array.from({ length: 8 }, () => `adventure-${randomUUID()}`);
    const appended: number[] = [];

    const writers = streams.map(async (streamId) => {
      for (let version = 0; version < 15; version++) {
        const r = await store.appendToStream(streamId, [anEvent(version)], {
          expectedVersion: version,
        });
        appended.push(...r.positions);
      }
    });
    const seen: number[] = [];
    let checkpoint = start;
    let writing = true;
    const all = Promise.all(writers).finally(() => (writing = false));
    while (writing) {
      const page = await store.readAll({ after: checkpoint, limit: 7 });
      seen.push(...page.events.map((e) => e.position));
      checkpoint = page.checkpoint;
    }
    await all;
    const rest = await drainUntil(checkpoint, (events) => seen.length + events.length >= 8 * 15, 7);
    seen.push(...rest.events.map((e) => e.position));

    expect(seen).toHaveLength(8 * 15);
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort((x, y) => x - y)).toEqual([...appended].sort((x, y) => x - y));
  });

  it('a rolled-back transaction leaves no gap that stalls the reader', async () => {
    const { checkpoint: start } = await drain(undefined);
    const doomed = await testDb.db.startTransaction().execute();
    await store.appendToStream(`adventure-${randomUUID()}`, [anEvent(1)], {
      expectedVersion: 'no_stream',
      trx: doomed,
    });
    await doomed.rollback().execute();
    const kept = await store.appendToStream(`adventure-${randomUUID()}`, [anEvent(2)], {
      expectedVersion: 'no_stream',
    });

    const { events } = await drainUntil(start, (delivered) => delivered.length > 0);

    expect(events.map((e) => e.position)).toEqual(kept.positions);
  });
});
