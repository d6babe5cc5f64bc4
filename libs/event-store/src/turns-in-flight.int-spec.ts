import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@chronicle/testing';
import { EventStoreRepository, type NewEvent } from '@chronicle/event-store';

// turns_in_flight is kept from the log by a trigger in the appending transaction: a turn is in
// it from the event that starts it to the event that ends it, and nothing else enters it.

function anEvent(type: string, data: unknown): NewEvent {
  return { id: randomUUID(), type, schemaVersion: 1, data, metadata: {} };
}

describe('turns_in_flight (the trigger on events)', () => {
  let testDb: TestDatabase;
  let store: EventStoreRepository;

  beforeAll(async () => {
    testDb = await createTestDatabase();
    store = new EventStoreRepository(testDb.db);
  });

  afterAll(async () => {
    await testDb.drop();
  });

  const rows = (streamId: string) =>
    testDb.db
      .selectFrom('turns_in_flight')
      .select(['turn_id', 'requeues'])
      .where('stream_id', '=', streamId)
      .execute();

  it('holds a turn from the event that starts it to the one that ends it', async () => {
    const streamId = `adventure-${randomUUID()}`;
    await store.appendToStream(streamId, [anEvent('AdventureCreated', { title: 'x' })], {
      expectedVersion: 'no_stream',
    });
    expect(await rows(streamId)).toEqual([]);

    await store.appendToStream(streamId, [anEvent('PlayerActed', { turnId: 't-1' })], {
      expectedVersion: 1,
    });
    expect(await rows(streamId)).toEqual([{ turn_id: 't-1', requeues: 0 }]);
    // an end of another turn leaves it
    await store.appendToStream(streamId, [anEvent('NarrationFailed', { turnId: 't-0' })], {
      expectedVersion: 2,
    });
    expect(await rows(streamId)).toHaveLength(1);
    await store.appendToStream(streamId, [anEvent('Narrated', { turnId: 't-1' })], {
      expectedVersion: 3,
    });
    expect(await rows(streamId)).toEqual([]);

    await store.appendToStream(streamId, [anEvent('RetryRequested', { turnId: 't-2' })], {
      expectedVersion: 4,
    });
    expect(await rows(streamId)).toEqual([{ turn_id: 't-2', requeues: 0 }]);
    await store.appendToStream(streamId, [anEvent('NarrationCancelled', { turnId: 't-2' })], {
      expectedVersion: 5,
    });
    expect(await rows(streamId)).toEqual([]);
  });

  it('leaves out streams that are not adventures and events without a turn id', async () => {
    const other = `memory-${randomUUID()}`;
    await store.appendToStream(other, [anEvent('PlayerActed', { turnId: 't-9' })], {
      expectedVersion: 'no_stream',
    });
    expect(await rows(other)).toEqual([]);
    const adventure = `adventure-${randomUUID()}`;
    await store.appendToStream(adventure, [anEvent('PlayerActed', { text: 'no turn id' })], {
      expectedVersion: 'no_stream',
    });
    expect(await rows(adventure)).toEqual([]);
  });
});
