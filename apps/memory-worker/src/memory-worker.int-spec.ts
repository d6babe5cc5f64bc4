import { randomUUID } from 'node:crypto';
import type { INestMicroservice } from '@nestjs/common';
import { chaptersOnPath, memoriesOnPath } from '@chronicle/adventure';
import { narrationCommand } from '@chronicle/adventure/testing';
import { AdventureCommandHandler, buildTurnContext } from '@chronicle/adventure-store';
import { ControlPlane, JsonLogger, loadConfig } from '@chronicle/platform';
import { JobName, QueueName, QueueProducer } from '@chronicle/queue';
import {
  createTestDatabase,
  removeQueueKeys,
  testQueuePrefix,
  TEST_REDIS_URL,
  type TestDatabase,
} from '@chronicle/testing';
import {
  startFakeOpenAiServer,
  type FakeOpenAiServer,
} from '../../../test/support/fake-openai-server';
import { AdventureLock } from './adventure.lock';
import { startMemoryWorker } from './memory-worker.bootstrap';

const CHAT = '/v1/chat/completions';
const EMBED = '/v1/embeddings';

let database: TestDatabase;
let server: FakeOpenAiServer & { baseURL: string };
let prefix: string;
let app: INestMicroservice;
let adventures: AdventureCommandHandler;
let producer: QueueProducer;

beforeAll(async () => {
  database = await createTestDatabase();
  server = await startFakeOpenAiServer({
    instant: true,
    defaultReply: (request) => ({
      text: /(Updated|Chapter) summary:$/.test(request.body?.messages?.[1]?.content ?? '')
        ? 'Ash walked the shore and Mira kept the light.'
        : `Ash walked on to ${request.body?.messages?.[1]?.content?.match(/step \d+/g)?.pop()}.`,
    }),
  });
  prefix = testQueuePrefix();
  const config = loadConfig({
    DATABASE_URL: database.connectionString,
    DATABASE_POOL_SIZE: '4',
    REDIS_URL: TEST_REDIS_URL,
    QUEUE_PREFIX: prefix,
    LOG_LEVEL: 'error',
    MODEL_BASE_URL: server.baseURL,
    MODEL_API_KEY: 'test-key',
    MODEL_NAME: 'fake-model',
    EMBEDDING_MODEL: 'fake-embed',
    MEMORY_CONCURRENCY: '2',
    // its /metrics on any free loopback port: test files run side by side
    HOST: '127.0.0.1',
    METRICS_PORT: '0',
  });
  app = await startMemoryWorker(config, new JsonLogger('memory-worker', config.logLevel));
  adventures = app.get(AdventureCommandHandler);
  producer = app.get(QueueProducer);
});

afterAll(async () => {
  await app?.close();
  await server?.close();
  await database?.drop();
  await removeQueueKeys(prefix);
});

beforeEach(() => server.clear());

async function finished(jobId: string, timeoutMs = 10_000) {
  const queue = producer.queue(QueueName.Memory);
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const state = await queue.getJobState(jobId);
    if (state === 'completed' || state === 'failed') break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return queue.getJob(jobId);
}

/**
 * An adventure with memory on and `turns` turns: 1 + 2 × turns story actions. Memory is turned on
 * after the turns, so no narration has started a memory pass (each test enqueues its own).
 */
async function adventureWith(turns: number): Promise<string> {
  const adventureId = randomUUID();
  await adventures.handle(
    adventureId,
    {
      type: 'CreateAdventure',
      data: {
        adventureId,
        ownerId: 'owner-1',
        openingActionId: randomUUID(),
        title: 'Memory',
        opening: 'You wake on the shore below the lighthouse.',
        persona: { name: 'Ash', pronouns: 'they/them', description: 'A courier.' },
        settings: { autoSummarize: false, memoryBankEnabled: false },
      },
    },
    { actor: 'test' },
  );
  for (let step = 1; step <= turns; step++) {
    const turnId = randomUUID();
    await adventures.handle(
      adventureId,
      {
        type: 'SubmitAction',
        data: { turnId, inputType: 'do', text: `walk on, step ${step}`, actionId: randomUUID() },
      },
      { actor: 'test' },
    );
    await adventures.handle(
      adventureId,
      narrationCommand(turnId, randomUUID(), { text: `Mira watches step ${step}.` }),
      { actor: 'test' },
    );
  }
  await adventures.handle(
    adventureId,
    { type: 'EditAdventure', data: { settings: { autoSummarize: true, memoryBankEnabled: true } } },
    { actor: 'test' },
  );
  return adventureId;
}

describe('the memory worker', () => {
  it('writes the memories and the chapter due, embeds them, and a second job finds nothing to do', async () => {
    // 1 + 2 × 12 = 25 story actions: four memory blocks (actions 0–5 … 18–23) and one chapter
    // (actions 0–23).
    const adventureId = await adventureWith(12);

    const { jobId } = await producer.enqueue(JobName.UpdateMemory, { adventureId });
    const job = await finished(jobId ?? '');
    expect(job?.returnvalue).toEqual({
      memoriesWritten: 4,
      chaptersWritten: 1,
      summaryWritten: false,
      embedded: 4,
      errors: [],
    });
    const state = await adventures.get(adventureId);
    expect(memoriesOnPath(state).map((m) => [m.sourceStart, m.sourceEnd])).toEqual([
      [0, 5],
      [6, 11],
      [12, 17],
      [18, 23],
    ]);
    expect(chaptersOnPath(state).map((c) => [c.sourceStart, c.sourceEnd, c.text])).toEqual([
      [0, 23, 'Ash walked the shore and Mira kept the light.'],
    ]);
    expect(server.requestsTo(CHAT)).toHaveLength(5);
    // The story's 25 actions and narrations for recall (story_passages), then the four memories.
    expect(server.requestsTo(EMBED).map((r) => r.body.input.length)).toEqual([25, 4]);
    expect(server.requestsTo(CHAT)[0].body.messages[1].content).toMatch(/Memory:$/);
    expect(server.requestsTo(CHAT)[4].body.messages[1].content).toMatch(/Chapter summary:$/);

    server.clear();
    const again = await producer.enqueue(JobName.UpdateMemory, { adventureId });
    expect((await finished(again.jobId ?? ''))?.returnvalue).toMatchObject({
      memoriesWritten: 0,
      summaryWritten: false,
      embedded: 0,
    });
    expect(server.requests).toHaveLength(0);
    expect((await adventures.get(adventureId)).memory.memories).toHaveLength(4);
  });

  it('fails the attempt when a model call fails, so BullMQ retries; the cursor stays put', async () => {
    const adventureId = await adventureWith(6);
    server.enqueue({ status: 500, errorMessage: 'upstream down', path: CHAT });

    const { jobId } = await producer.enqueue(JobName.UpdateMemory, { adventureId });
    const queue = producer.queue(QueueName.Memory);
    for (let i = 0; i < 400 && (await queue.getJob(jobId ?? ''))?.attemptsMade === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const job = await queue.getJob(jobId ?? '');
    expect(job?.attemptsMade).toBeGreaterThanOrEqual(1);
    expect(job?.failedReason).toMatch(/^memory: /);
    expect((await adventures.get(adventureId)).memory.memories).toHaveLength(0);
    await job?.remove().catch(() => undefined);
  });

  it('delays a job whose adventure is held by another pass, and runs it once the lock is free', async () => {
    const adventureId = await adventureWith(6);
    const lock = app.get(AdventureLock);
    expect(await lock.acquire(adventureId, 'another-job')).toBe(true);

    const { jobId } = await producer.enqueue(JobName.UpdateMemory, { adventureId });
    const queue = producer.queue(QueueName.Memory);
    for (let i = 0; i < 200 && (await queue.getJobState(jobId ?? '')) !== 'delayed'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(await queue.getJobState(jobId ?? '')).toBe('delayed');
    expect(server.requests).toHaveLength(0);

    await lock.release(adventureId, 'another-job');
    const job = await finished(jobId ?? '');
    expect(job?.returnvalue).toMatchObject({ memoriesWritten: 2, errors: [] });
    expect(job?.attemptsMade).toBe(1);
    expect(await app.get(AdventureLock).acquire(adventureId, 'later-job')).toBe(true);
  });

  it("keeps a stable window's dropped actions in a chapter, ahead of the chapter's size", async () => {
    // Given a stable adventure whose history holds only a few of its long actions
    const adventureId = randomUUID();
    await adventures.handle(
      adventureId,
      {
        type: 'CreateAdventure',
        data: {
          adventureId,
          ownerId: 'owner-1',
          openingActionId: randomUUID(),
          title: 'Small window',
          opening: 'You wake on the shore below the lighthouse.',
          // Summaries are turned on after the turns, so no narration starts a pass of its own.
          settings: { autoSummarize: false, historyMode: 'stable', contextTokenBudget: 256 },
        },
      },
      { actor: 'test' },
    );
    const long = 'The fog thickens over the harbour and the lamp gutters again. '.repeat(4);
    for (let step = 1; step <= 5; step++) {
      const turnId = randomUUID();
      await adventures.handle(
        adventureId,
        {
          type: 'SubmitAction',
          data: { turnId, inputType: 'do', text: `walk on, step ${step}`, actionId: randomUUID() },
        },
        { actor: 'test' },
      );
      await adventures.handle(
        adventureId,
        narrationCommand(turnId, randomUUID(), { text: `${long}Step ${step}.` }),
        { actor: 'test' },
      );
    }
    const before = await buildTurnContext(adventures, await adventures.get(adventureId), {
      defaultModel: 'm',
    });
    expect(before.report.history.included).toBeLessThan(before.report.history.total);
    await adventures.handle(
      adventureId,
      { type: 'EditAdventure', data: { settings: { autoSummarize: true } } },
      { actor: 'test' },
    );

    // When the memory worker runs on 11 actions (a chapter would wait for 24)
    const { jobId } = await producer.enqueue(JobName.UpdateMemory, { adventureId });
    expect((await finished(jobId ?? ''))?.returnvalue).toMatchObject({ chaptersWritten: 1 });

    // Then a chapter tells the story to its tip, so what the window dropped is in the prompt
    const state = await adventures.get(adventureId);
    expect(state.memory.chapters.at(-1)).toMatchObject({ sourceStart: 0, sourceEnd: 10 });
    const after = await buildTurnContext(adventures, state, { defaultModel: 'm' });
    expect(after.story).toContain('Story summary:\nAsh walked the shore and Mira kept the light.');
    expect(after.report.history.included).toBeLessThan(after.report.history.total);
  });

  it('answers the roll call and shuts down cleanly', async () => {
    const workers = await app.get(ControlPlane).rollCall(300);
    expect(workers).toEqual([expect.objectContaining({ app: 'memory-worker', jobsInFlight: [] })]);
  });
});
