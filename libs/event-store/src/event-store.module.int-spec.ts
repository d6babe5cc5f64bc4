import { randomUUID } from 'node:crypto';
import { Test } from '@nestjs/testing';
import { sql, type Kysely } from 'kysely';
import {
  createTestDatabase,
  removeQueueKeys,
  TEST_REDIS_URL,
  testQueuePrefix,
  type TestDatabase,
} from '@chronicle/testing';
import { JobName, QueueModule, QueueName, QueueProducer, outboxRow } from '@chronicle/queue';
import {
  type Database,
  EVENT_STORE_DB,
  EventStoreModule,
  EventStoreRepository,
  OutboxRelay,
  SnapshotRepository,
} from '@chronicle/event-store';

describe('EventStoreModule (Postgres + Redis)', () => {
  let empty: TestDatabase;
  const prefix = testQueuePrefix();

  beforeAll(async () => {
    empty = await createTestDatabase(undefined, { empty: true });
  });

  afterAll(async () => {
    await removeQueueKeys(prefix);
    await empty.drop();
  });

  it('migrates at start-up, appends with the relay wired in, and closes its pool on shutdown', async () => {
    const app = await Test.createTestingModule({
      imports: [
        QueueModule.forRoot({ redisUrl: TEST_REDIS_URL, prefix }),
        // The app's wiring hands the store the queue producer as its relay's enqueuer.
        EventStoreModule.forRootAsync({
          inject: [QueueProducer],
          useFactory: (producer: QueueProducer) => ({
            connectionString: empty.connectionString,
            poolSize: 2,
            migrate: true,
            sweepOutbox: true,
            outboxEnqueuer: producer,
          }),
        }),
      ],
    }).compile();
    await app.init();
    const store = app.get(EventStoreRepository);
    const db = app.get<Kysely<Database>>(EVENT_STORE_DB);
    expect(app.get(SnapshotRepository)).toBeInstanceOf(SnapshotRepository);
    expect(app.get(OutboxRelay)).toBeInstanceOf(OutboxRelay);

    const adventureId = `adventure-${randomUUID()}`;
    const turnId = randomUUID();
    await store.appendToStream(
      adventureId,
      [{ id: randomUUID(), type: 'PlayerActed', schemaVersion: 1, data: { text: 'Look around.' } }],
      {
        expectedVersion: 'no_stream',
        outbox: [outboxRow({ jobName: JobName.NarrateTurn, payload: { adventureId, turnId } })],
      },
    );

    const job = await app.get(QueueProducer).queue(QueueName.Narrate).getJob(`narrate-${turnId}`);
    expect(job?.data).toEqual({ adventureId, turnId });

    await app.close();
    await expect(sql`SELECT 1`.execute(db)).rejects.toThrow();
  });
});
