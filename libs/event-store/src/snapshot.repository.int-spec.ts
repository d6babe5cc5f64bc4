import { createTestDatabase, type TestDatabase } from '@chronicle/testing';
import { SnapshotRepository } from '@chronicle/event-store';

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
    await snapshots.saveSnapshot('adventure-1', 3, 10, { turns: 10 });
    await snapshots.saveSnapshot('adventure-1', 3, 20, { turns: 20 });

    const current = await snapshots.loadSnapshot<{ turns: number }>('adventure-1', 3);
    const changedProjector = await snapshots.loadSnapshot('adventure-1', 4);

    expect(current).toMatchObject({
      streamId: 'adventure-1',
      projectorVersion: 3,
      version: 20,
      state: { turns: 20 },
    });
    expect(current?.createdAt).toBeInstanceOf(Date);
    expect(changedProjector).toBeUndefined();
  });

  it('never replaces a snapshot with an older one', async () => {
    await snapshots.saveSnapshot('adventure-2', 1, 30, { turns: 30 });
    await snapshots.saveSnapshot('adventure-2', 1, 25, { turns: 25 });

    expect(await snapshots.loadSnapshot('adventure-2', 1)).toMatchObject({ version: 30 });
  });
});
