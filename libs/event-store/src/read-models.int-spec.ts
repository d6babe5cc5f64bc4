import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@chronicle/testing';
import {
  EventStoreRepository,
  StreamVersionConflictError,
  type NewEvent,
  type ReadModelWrites,
} from '@chronicle/event-store';

// The read models' rows are written by the append that carries them, in its statement, and only
// when its events are: through the one-event statement and through the function alike.

function anEvent(type: string, data: unknown = {}): NewEvent {
  return { id: randomUUID(), type, schemaVersion: 1, data, metadata: {} };
}

const call = (offset: number) => ({
  offset,
  userId: 'u-1',
  purpose: 'narration',
  model: 'm',
  promptTokens: 10,
  completionTokens: 5,
  cachedTokens: 2,
});

describe('read models written with the events', () => {
  let testDb: TestDatabase;
  let store: EventStoreRepository;

  beforeAll(async () => {
    testDb = await createTestDatabase();
    store = new EventStoreRepository(testDb.db);
  });
  afterAll(() => testDb.drop());

  const inFlight = (streamId: string) =>
    testDb.db
      .selectFrom('turns_in_flight')
      .select(['turn_id', 'requeues'])
      .where('stream_id', '=', streamId)
      .execute();
  const owner = async (streamId: string) =>
    (
      await testDb.db
        .selectFrom('adventure_owners')
        .select('owner_id')
        .where('stream_id', '=', streamId)
        .executeTakeFirst()
    )?.owner_id;
  const calls = (streamId: string) =>
    testDb.db
      .selectFrom('model_calls')
      .select(['version', 'user_id', 'prompt_tokens'])
      .where('stream_id', '=', streamId)
      .orderBy('version')
      .execute();

  // [label, how many events each append carries]: one takes the one-event statement, two the function.
  describe.each([
    ['the one-event statement', 1],
    ['the function (a batch)', 2],
  ])('through %s', (_path, size) => {
    const batch = (type: string, data?: unknown) =>
      Array.from({ length: size }, (_, i) => anEvent(i === 0 ? type : 'ScriptHookRan', data));

    async function append(streamId: string, version: number, type: string, reads: ReadModelWrites) {
      const result = await store.appendToStream(streamId, batch(type), {
        expectedVersion: version === 0 ? 'no_stream' : version,
        readModels: reads,
      });
      return result.nextVersion;
    }

    it('given a stream, when turns start and end, then its owner, its turn in flight and its model calls follow', async () => {
      const streamId = `adventure-${randomUUID()}`;
      // the first append creates the stream's row: always the function
      let version = await append(streamId, 0, 'AdventureCreated', { owner: 'u-1' });
      version = await append(streamId, version, 'PlayerActed', { turnInFlight: 't-1' });
      expect(await owner(streamId)).toBe('u-1');
      expect(await inFlight(streamId)).toEqual([{ turn_id: 't-1', requeues: 0 }]);
      const narratedAt = version;
      version = await append(streamId, version, 'Narrated', {
        turnInFlight: null,
        modelCalls: [call(1)],
      });
      expect(await inFlight(streamId)).toEqual([]);
      expect(await calls(streamId)).toEqual([
        { version: narratedAt + 1, user_id: 'u-1', prompt_tokens: '10' },
      ]);
      // nothing said about the turn: left as it was
      await append(streamId, version, 'PlayerActed', { turnInFlight: 't-2' });
      await append(streamId, version + size, 'ScriptHookRan', {});
      expect(await inFlight(streamId)).toEqual([{ turn_id: 't-2', requeues: 0 }]);
    });

    it('given an append that conflicts, then none of its rows is written', async () => {
      const streamId = `adventure-${randomUUID()}`;
      const stale = await append(streamId, 0, 'AdventureCreated', { owner: 'u-1' });
      await append(streamId, stale, 'ScriptHookRan', {});
      await expect(
        append(streamId, stale, 'PlayerActed', {
          turnInFlight: 't-9',
          modelCalls: [call(1)],
        }),
      ).rejects.toBeInstanceOf(StreamVersionConflictError);
      expect(await inFlight(streamId)).toEqual([]);
      expect(await calls(streamId)).toEqual([]);
    });
  });
});
