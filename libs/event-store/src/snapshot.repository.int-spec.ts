import { createTestDatabase, type TestDatabase } from '@chronicle/testing';
import { SnapshotRepository, type Snapshot } from '@chronicle/event-store';

// The repository keeps whatever bytes its caller encoded; JSON is enough to tell them apart here.
const bytesOf = (value: unknown): Uint8Array => Buffer.from(JSON.stringify(value));
const valueOf = (snapshot: Snapshot | undefined): unknown =>
  snapshot && JSON.parse(snapshot.bytes.toString('utf8'));

describe('SnapshotRepository (Postgres)', () => {
  let testDb: TestDatabase;
  let snapshots: SnapshotRepository;

  beforeAll(async () => {
    testDb = await createTestDatabase();
    snapshots = new SnapshotRepository(testDb.db);
  });

  afterAll(async () => {
    await testDb.drop();
  });

  it('loads the latest snapshot for a projector version and ignores other versions', async () => {
    await snapshots.saveSnapshot('adventure-1', 3, 10, bytesOf({ turns: 10 }));
    await snapshots.saveSnapshot('adventure-1', 3, 20, bytesOf({ turns: 20 }));

    const current = await snapshots.loadSnapshot('adventure-1', 3);
    const changedProjector = await snapshots.loadSnapshot('adventure-1', 4);

    expect(current).toMatchObject({
      streamId: 'adventure-1',
      projectorVersion: 3,
      version: 20,
    });
    expect(valueOf(current)).toEqual({ turns: 20 });
    expect(current?.createdAt).toBeInstanceOf(Date);
    expect(changedProjector).toBeUndefined();
  });

  it('never replaces a snapshot with an older one', async () => {
    await snapshots.saveSnapshot('adventure-2', 1, 30, bytesOf({ turns: 30 }));
    await snapshots.saveSnapshot('adventure-2', 1, 25, bytesOf({ turns: 25 }));

    expect(await snapshots.loadSnapshot('adventure-2', 1)).toMatchObject({ version: 30 });
  });

  it('keeps the latest and the oldest snapshot in each stretch of checkpointEvery versions, and reads the nearest at or below a version', async () => {
    const spaced = new SnapshotRepository(testDb.db, { checkpointEvery: 100 });
    for (let version = 50; version <= 500; version += 50) {
      await spaced.saveSnapshot('adventure-3', 1, version, bytesOf({ at: version }));
    }
    // 50 (stretch 0), 100, 200, 300, 400 (each stretch's oldest) and 500 (the latest).
    expect(await spaced.listVersions('adventure-3', 1)).toEqual([50, 100, 200, 300, 400, 500]);
    const checkpoint = await spaced.loadSnapshotAt('adventure-3', 1, 399);
    expect(checkpoint).toMatchObject({ version: 300 });
    expect(valueOf(checkpoint)).toEqual({ at: 300 });
    expect(await spaced.loadSnapshotAt('adventure-3', 1, 500)).toMatchObject({ version: 500 });
    expect(await spaced.loadSnapshotAt('adventure-3', 1, 49)).toBeUndefined();
    expect(await spaced.loadSnapshot('adventure-3', 1)).toMatchObject({ version: 500 });
  });

  it('replaces a snapshot saved again at the same version', async () => {
    await snapshots.saveSnapshot('adventure-4', 1, 10, bytesOf({ take: 1 }));
    await snapshots.saveSnapshot('adventure-4', 1, 10, bytesOf({ take: 2 }));
    expect(valueOf(await snapshots.loadSnapshot('adventure-4', 1))).toEqual({ take: 2 });
    expect(await snapshots.listVersions('adventure-4', 1)).toEqual([10]);
  });

  it('stores a snapshot compressed, and passes over a newer row the previous release wrote as text', async () => {
    const state = { ids: Array.from({ length: 500 }, (_, i) => `action-${i}`) };
    await snapshots.saveSnapshot('adventure-5', 1, 10, bytesOf(state));
    await testDb.db
      .insertInto('snapshots')
      .values({ stream_id: 'adventure-5', projector_version: 1, version: 20, state: '{"old":1}' })
      .execute();
    const row = await testDb.db
      .selectFrom('snapshots')
      .select('packed')
      .where('stream_id', '=', 'adventure-5')
      .where('version', '=', 10)
      .executeTakeFirstOrThrow();
    expect(row.packed?.length).toBeLessThan(JSON.stringify(state).length / 4);
    const latest = await snapshots.loadSnapshot('adventure-5', 1);
    expect(latest).toMatchObject({ version: 10 });
    expect(valueOf(latest)).toEqual(state);
    expect(await snapshots.loadSnapshotAt('adventure-5', 1, 15)).toMatchObject({ version: 10 });
  });
});
