import { randomUUID } from 'node:crypto';
import type { INestMicroservice } from '@nestjs/common';
import { AdventureRepository } from '@chronicle/adventure-store';
import { ControlPlane, JsonLogger, loadConfig } from '@chronicle/platform';
import { JobName, QueueName, QueueProducer } from '@chronicle/queue';
import {
  createTestDatabase,
  removeQueueKeys,
  testQueuePrefix,
  TEST_REDIS_URL,
  type TestDatabase,
} from '@chronicle/testing';
import { startMemoryWorker } from './memory-worker.bootstrap';

let database: TestDatabase;
let prefix: string;
let app: INestMicroservice;

beforeAll(async () => {
  database = await createTestDatabase();
  prefix = testQueuePrefix();
  const config = loadConfig({
    DATABASE_URL: database.connectionString,
    DATABASE_POOL_SIZE: '2',
    REDIS_URL: TEST_REDIS_URL,
    QUEUE_PREFIX: prefix,
    LOG_LEVEL: 'error',
  });
  app = await startMemoryWorker(config, new JsonLogger('memory-worker', config.logLevel));
});

afterAll(async () => {
  await database?.drop();
  await removeQueueKeys(prefix);
});

async function finished(producer: QueueProducer, jobId: string) {
  const queue = producer.queue(QueueName.Memory);
  for (let i = 0; i < 200; i++) {
    const state = await queue.getJobState(jobId);
    if (state === 'completed' || state === 'failed') break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return queue.getJob(jobId);
}

describe('the memory worker skeleton', () => {
  it('takes a memory job, loads the adventure, answers the roll call and shuts down cleanly', async () => {
    const adventureId = randomUUID();
    await app.get(AdventureRepository).handle(
      adventureId,
      {
        type: 'CreateAdventure',
        data: {
          adventureId,
          ownerId: 'owner-1',
          openingActionId: randomUUID(),
          title: 'Memory',
          opening: 'You wake in a quiet room.',
        },
      },
      { actor: 'test' },
    );
    const producer = app.get(QueueProducer);

    const { jobId } = await producer.enqueue(JobName.UpdateMemory, { adventureId });
    const job = await finished(producer, jobId ?? '');
    expect(job?.returnvalue).toEqual({ status: 'done', version: 1 });

    const missing = await producer.enqueue(JobName.UpdateMemory, { adventureId: randomUUID() });
    expect((await finished(producer, missing.jobId ?? ''))?.returnvalue).toEqual({
      status: 'skipped',
      reason: 'not-found',
    });

    const workers = await app.get(ControlPlane).rollCall(300);
    expect(workers).toEqual([expect.objectContaining({ app: 'memory-worker', jobsInFlight: [] })]);

    const started = Date.now();
    await app.close();
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
