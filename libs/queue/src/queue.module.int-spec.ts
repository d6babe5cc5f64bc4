import { Test } from '@nestjs/testing';
import { Worker } from 'bullmq';
import { queueKeyPrefix } from '@chronicle/platform';
import { removeQueueKeys, TEST_REDIS_URL, testQueuePrefix } from '@chronicle/testing';
import {
  JobName,
  QUEUE_CONFIG,
  QueueModule,
  QueueName,
  QueueProducer,
  type NarrateJob,
  workerConnection,
} from '@chronicle/queue';

describe('QueueModule (Redis)', () => {
  const prefix = testQueuePrefix();

  afterAll(async () => {
    await removeQueueKeys(prefix);
  });

  it('provides a producer whose jobs a worker on the same prefix receives, and closes on shutdown', async () => {
    const app = await Test.createTestingModule({
      imports: [QueueModule.forRoot({ redisUrl: TEST_REDIS_URL, prefix })],
    }).compile();
    await app.init();
    const producer = app.get(QueueProducer);
    expect(app.get(QUEUE_CONFIG)).toEqual({ redisUrl: TEST_REDIS_URL, prefix });
    await producer.waitUntilReady();

    const received: NarrateJob[] = [];
    const worker = new Worker<NarrateJob>(
      QueueName.Narrate,
      async (job) => {
        received.push(job.data);
      },
      {
        connection: workerConnection(TEST_REDIS_URL),
        prefix: queueKeyPrefix(prefix, QueueName.Narrate),
      },
    );
    try {
      const { jobId } = await producer.enqueue(JobName.NarrateTurn, {
        adventureId: 'adv-1',
        turnId: 't1',
      });
      const again = await producer.enqueue(JobName.NarrateTurn, {
        adventureId: 'adv-1',
        turnId: 't1',
      });

      expect(jobId).toBe('narrate-t1');
      expect(again.jobId).toBe('narrate-t1');
      await waitFor(() => received.length > 0);
      expect(received).toEqual([{ adventureId: 'adv-1', turnId: 't1' }]);
    } finally {
      await worker.close();
    }

    expect(await producer.ping()).toBe(true);
    await app.close();
    expect(await producer.ping()).toBe(false);
  });

  it('a producer fails fast, naming Redis, when Redis does not answer', async () => {
    const producer = new QueueProducer({ redisUrl: 'redis://127.0.0.1:1', prefix }, 500);
    try {
      const started = Date.now();
      await expect(
        producer.enqueue(JobName.NarrateTurn, { adventureId: 'a', turnId: 'b' }),
      ).rejects.toThrow('is Redis at 127.0.0.1:1 up?');
      expect(Date.now() - started).toBeLessThan(3_000);
      await expect(producer.waitUntilReady(300)).rejects.toThrow('did not answer within 300 ms');
    } finally {
      await producer.close();
    }
  });

  it('takes the attempts per job from its configuration (NARRATE_ATTEMPTS)', async () => {
    const producer = new QueueProducer({
      redisUrl: TEST_REDIS_URL,
      prefix,
      attempts: { [JobName.NarrateTurn]: 7 },
    });
    try {
      const { jobId } = await producer.enqueue(JobName.NarrateTurn, {
        adventureId: 'a1',
        turnId: 't-attempts',
      });
      const job = await producer.queue(QueueName.Narrate).getJob(jobId as string);
      expect(job?.opts.attempts).toBe(7);
    } finally {
      await producer.close();
    }
  });

  it('refuses a prefix containing ":"', () => {
    expect(() => new QueueProducer({ redisUrl: TEST_REDIS_URL, prefix: 'a:b' })).toThrow(':');
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}
