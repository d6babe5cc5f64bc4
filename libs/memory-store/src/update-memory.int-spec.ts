import {
  activeMemories,
  chaptersOnPath,
  chaptersPastSummary,
  currentSummary,
  project,
  memoryCursorDepth,
  type AdventureCommand,
  type AdventureSettings,
  type ModelCallUsage,
} from '@chronicle/adventure';
import { sumUserUsage } from '@chronicle/accounts';
import { narrationCommand } from '@chronicle/adventure/testing';
import { AdventureCommandHandler, toRecorded } from '@chronicle/adventure-store';
import { EventStoreRepository, SnapshotRepository } from '@chronicle/event-store';
import { createEmbedder, createModelClient, type ModelConfig } from '@chronicle/llm';
import {
  CHAPTER_SYSTEM_PROMPT,
  MEMORY_SYSTEM_PROMPT,
  SUMMARY_SYSTEM_PROMPT,
} from '@chronicle/memory';
import { createTestDatabase, type TestDatabase } from '@chronicle/testing';
import { FakeOpenAiServer, type RecordedRequest } from '../../../test/support/fake-openai-server';
import { randomUUID } from 'node:crypto';
import {
  EmbeddingRepository,
  MemoryRetrievalService,
  UpdateMemoryUseCase,
  VectorCache,
} from './index';

const CHAT = '/v1/chat/completions';
const EMBED = '/v1/embeddings';

describe('memory worker (Postgres + fake OpenAI server)', () => {
  let database: TestDatabase;
  let server: FakeOpenAiServer;
  let adventures: AdventureCommandHandler;
  let embeddings: EmbeddingRepository;
  let useCase: UpdateMemoryUseCase;
  let retrieval: MemoryRetrievalService;
  let config: ModelConfig;

  beforeAll(async () => {
    database = await createTestDatabase();
    server = new FakeOpenAiServer({
      instant: true,
      defaultReply: (request) => {
        const user: string = request.body?.messages?.[1]?.content ?? '';
        if (/Chapter summary:$/.test(user)) {
          // A chapter of "long" steps is told at length, so a few of them outgrow the budget.
          return {
            text: /long step/.test(user)
              ? 'Ash walked the long causeway past the drowned bell and the salt houses, counting every lamp. '.repeat(
                  4,
                )
              : 'Ash crossed the harbor and met Mira.',
          };
        }
        return {
          text: /Updated summary:$/.test(user)
            ? 'Ash and Mira kept the light together.'
            : `Ash did step ${user.match(/step (\d+)/g)?.pop() ?? ''}.`,
        };
      },
    });
    const { baseURL } = await server.start();
    config = {
      baseURL,
      apiKey: 'test-key',
      model: 'fake-model',
      embeddingModel: 'fake-embed',
      timeoutMs: 5_000,
    };
    adventures = new AdventureCommandHandler(
      new EventStoreRepository(database.db),
      new SnapshotRepository(database.db),
      { snapshotEvery: 25 },
    );
    embeddings = new EmbeddingRepository(database.db);
    const embedder = createEmbedder(config);
    const client = createModelClient(config);
    useCase = new UpdateMemoryUseCase(
      adventures,
      { memory: client, summary: client },
      embedder,
      embeddings,
      { defaultModel: 'fake-model' },
    );
    retrieval = new MemoryRetrievalService(adventures, embedder, new VectorCache(embeddings));
  });

  afterAll(async () => {
    await server.close();
    await database.drop();
  });

  beforeEach(() => server.clear());

  const meta = { actor: 'test' };

  async function create(
    settings: Partial<AdventureSettings> = {},
    ownerId: string = randomUUID(),
  ): Promise<string> {
    const adventureId = randomUUID();
    const command: AdventureCommand = {
      type: 'CreateAdventure',
      data: {
        adventureId,
        ownerId,
        openingActionId: randomUUID(),
        title: 'The Lighthouse',
        opening: 'You stand on the harbor wall at dusk.',
        plotEssentials: 'The keeper vanished a week ago.',
        persona: { name: 'Ash', pronouns: 'they/them', description: 'A tired courier.' },
        storyCards: [
          {
            id: 'mira',
            name: 'Mira',
            keys: 'mira',
            entry: 'Mira keeps the light.',
            type: 'character',
          },
        ],
        settings: { autoSummarize: true, memoryBankEnabled: true, ...settings },
      },
    };
    await adventures.handle(adventureId, command, meta);
    return adventureId;
  }

  async function turn(
    adventureId: string,
    step: number,
    memoriesUsed?: string[],
    kind = '',
  ): Promise<void> {
    const turnId = randomUUID();
    await adventures.handle(
      adventureId,
      {
        type: 'SubmitAction',
        data: {
          turnId,
          inputType: 'do',
          text: `take ${kind}step ${step}`,
          actionId: randomUUID(),
        },
      },
      meta,
    );
    await adventures.handle(
      adventureId,
      narrationCommand(turnId, randomUUID(), {
        text: `Mira watches you take ${kind}step ${step}.`,
        memoriesUsed,
      }),
      meta,
    );
  }

  const SYSTEM_PROMPTS = {
    memory: MEMORY_SYSTEM_PROMPT,
    summary: SUMMARY_SYSTEM_PROMPT,
    chapter: CHAPTER_SYSTEM_PROMPT,
  };
  const chats = (requests: RecordedRequest[], purpose: keyof typeof SYSTEM_PROMPTS) =>
    requests.filter(
      (r) => r.path === CHAT && r.body.messages[0].content === SYSTEM_PROMPTS[purpose],
    );

  it('over 60 turns, writes memories and chapters at exactly the cadence, with the prompts of the spec', async () => {
    const adventureId = await create();
    const memoryAt: number[] = [];
    const chapterAt: number[] = [];
    for (let step = 1; step <= 60; step++) {
      await turn(adventureId, step);
      server.clear();
      const outcome = await useCase.execute({ adventureId });
      expect(outcome.errors).toEqual([]);
      for (let i = 0; i < chats(server.requests, 'memory').length; i++) memoryAt.push(step);
      for (let i = 0; i < chats(server.requests, 'chapter').length; i++) chapterAt.push(step);
      expect(chats(server.requests, 'summary')).toHaveLength(0);
      if (step === 6) {
        const [first] = chats(server.requests, 'memory');
        expect(first.body).toMatchObject({ temperature: 0.3, max_tokens: 400 });
        const user: string = first.body.messages[1].content;
        expect(user).toMatch(
          /^Cast:\n- Ash \(they\/them\) — the protagonist\. A tired courier\.\n- Mira — Mira keeps the light\.\n\nSetting:\nThe keeper vanished a week ago\.\n\nStory excerpt:\nYou stand on the harbor wall at dusk\.[\s\S]*\n\nMemory:$/,
        );
      }
      if (step === 12) {
        // A chapter is written from its span's own story, not from the memories.
        const [chapter] = chats(server.requests, 'chapter');
        expect(chapter.body).toMatchObject({ temperature: 0.3, max_tokens: 300 });
        const user: string = chapter.body.messages[1].content;
        expect(user).toContain(
          'Chapter:\nYou stand on the harbor wall at dusk.\n\n> You take step 1.',
        );
        expect(user).toMatch(/> You take step 12\.\n\nChapter summary:$/);
        expect(user).not.toContain('Ash did step');
      }
    }
    // 1 + 2n actions after n turns: blocks of 6 complete at 12, 18, 24… (the first two at once),
    // a chapter every 24 short actions (25 after turn 12, 49 after turn 24…).
    const expectedMemories = [6, 6];
    for (let step = 9; step <= 60; step += 3) expectedMemories.push(step);
    expect(memoryAt).toEqual(expectedMemories);
    expect(chapterAt).toEqual([12, 24, 36, 48, 60]);
    const state = await adventures.get(adventureId);
    expect(activeMemories(state)).toHaveLength(20);
    expect(chaptersOnPath(state).map((c) => [c.sourceStart, c.sourceEnd])).toEqual([
      [0, 23],
      [24, 47],
      [48, 71],
      [72, 95],
      [96, 119],
    ]);
    expect(chaptersOnPath(state)[0].sourceActionIds).toEqual(
      state.path.slice(0, 24).map((entry) => entry.id),
    );
    expect(await embeddings.count('fake-embed')).toBeGreaterThan(0);

    // A replay of the log rebuilds the same memory bank without any model request.
    server.clear();
    const events = await new EventStoreRepository(database.db).readStream(
      `adventure-${adventureId}`,
    );
    const replayed = project(events.map(toRecorded));
    expect(replayed.memory).toEqual(state.memory);
    expect(server.requests).toHaveLength(0);
  });

  it('undo past a memory’s source withdraws it from the next prompt; it is rewritten later', async () => {
    const adventureId = await create({ autoSummarize: false });
    for (let step = 1; step <= 9; step++) await turn(adventureId, step); // 19 actions
    await useCase.execute({ adventureId });
    let state = await adventures.get(adventureId);
    expect(memoryCursorDepth(state)).toBe(17);
    const withdrawn = state.memory.memories[2].id;
    await adventures.handle(adventureId, { type: 'Undo', data: {} }, meta);
    state = await adventures.get(adventureId);
    const retrieved = await retrieval.retrieve(state);
    expect(retrieved?.used.map((m) => m.id)).not.toContain(withdrawn);
    expect(retrieved?.used).toHaveLength(2);
    await turn(adventureId, 10);
    server.clear();
    await useCase.execute({ adventureId });
    expect(chats(server.requests, 'memory')).toHaveLength(1);
    state = await adventures.get(adventureId);
    expect(activeMemories(state).map((m) => m.sourceStart)).toEqual([0, 6, 12]);
    expect(activeMemories(state)[2].id).not.toBe(withdrawn);
  });

  it('a job killed and redelivered (two runs racing) leaves no duplicate memory', async () => {
    const adventureId = await create({ autoSummarize: false });
    for (let step = 1; step <= 12; step++) await turn(adventureId, step); // 25 actions
    const runs = await Promise.all([
      useCase.execute({ adventureId, attempt: 1 }),
      useCase.execute({ adventureId, attempt: 2 }),
    ]);
    await useCase.execute({ adventureId, attempt: 3 });
    const state = await adventures.get(adventureId);
    const starts = state.memory.memories.map((m) => m.sourceStart);
    expect(starts).toEqual([0, 6, 12, 18]);
    expect(runs.every((run) => run.errors.length === 0)).toBe(true);
  });

  it('the summariser failing writes no chapter, and the next run writes it', async () => {
    const adventureId = await create({ memoryBankEnabled: false });
    for (let step = 1; step <= 12; step++) await turn(adventureId, step); // 25 actions
    // Four memories succeed, then the chapter call fails.
    server.enqueue(
      { text: 'Ash began.' },
      { text: 'Ash went on.' },
      { text: 'Ash went further.' },
      { text: 'Ash kept going.' },
      { status: 500, errorMessage: 'boom' },
    );
    const failed = await useCase.execute({ adventureId });
    expect(failed.memoriesWritten).toBe(4);
    expect(failed.chaptersWritten).toBe(0);
    expect(failed.errors.join()).toMatch(/summary/);
    let state = await adventures.get(adventureId);
    expect(chaptersOnPath(state)).toEqual([]);
    server.clear();
    const retried = await useCase.execute({ adventureId });
    expect(retried.chaptersWritten).toBe(1);
    state = await adventures.get(adventureId);
    expect(chaptersOnPath(state).map((c) => c.sourceEnd)).toEqual([23]);
  });

  it('given chapters that outgrow the summary budget, the oldest are folded into the summary from their own text', async () => {
    const adventureId = await create({ memoryBankEnabled: false, contextTokenBudget: 2048 });
    for (let step = 1; step <= 48; step++) await turn(adventureId, step, undefined, 'long ');
    server.clear();
    const outcome = await useCase.execute({ adventureId });
    expect(outcome.errors).toEqual([]);
    expect(outcome.chaptersWritten).toBe(4);
    expect(outcome.summaryWritten).toBe(true);
    const [fold] = chats(server.requests, 'summary');
    expect(fold.body.messages[1].content).toContain(
      'Current story summary:\n(none yet)\n\nNew events since the last update:\nAsh walked the long causeway',
    );
    const state = await adventures.get(adventureId);
    const summary = currentSummary(state)!;
    expect(summary.text).toBe('Ash and Mira kept the light together.');
    expect(summary.chapterIds.length).toBeGreaterThan(0);
    expect(summary.chapterIds).toEqual(
      chaptersOnPath(state)
        .slice(0, summary.chapterIds.length)
        .map((c) => c.id),
    );
    // The chapters left past the summary are the newest, and the newest is always among them.
    const past = chaptersPastSummary(state);
    expect(past.at(-1)?.sourceEnd).toBe(95);
    expect(past[0].sourceStart).toBe(summary.sourceEnd! + 1);
  });

  it('retrieval ranks by cosine with pinned memories first; nothing is evicted, however many memories the path holds', async () => {
    // memoryCapacity no longer evicts: an adventure created with the old setting keeps them all.
    const adventureId = await create({ autoSummarize: false, memoryTopK: 2, memoryCapacity: 3 });
    for (let step = 1; step <= 12; step++) await turn(adventureId, step); // 4 blocks
    await useCase.execute({ adventureId });
    let state = await adventures.get(adventureId);
    expect(state.memory.memories.map((m) => m.forgotten)).toEqual([false, false, false, false]);
    const [first, second] = state.memory.memories;
    await adventures.handle(
      adventureId,
      { type: 'PinMemory', data: { memoryId: second.id } },
      meta,
    );
    state = await adventures.get(adventureId);
    const result = await retrieval.retrieve(state);
    expect(result?.used[0]).toMatchObject({ id: second.id, pinned: true });
    expect(result?.used).toHaveLength(2);
    const similarity = result?.used[1].similarity ?? 0;
    expect(Math.round(similarity * 10_000) / 10_000).toBe(similarity);
    // More story, more memories: the oldest, never used, is still a candidate.
    for (let step = 13; step <= 15; step++) await turn(adventureId, step);
    await useCase.execute({ adventureId });
    state = await adventures.get(adventureId);
    const active = activeMemories(state).map((m) => m.id);
    expect(active).toContain(first.id);
    expect(active).toHaveLength(5);
    expect(server.requestsTo(EMBED).length).toBeGreaterThan(0);
  });

  it('records what every model call cost in the log, and sumUserUsage adds it up per purpose', async () => {
    const ownerId = randomUUID();
    const counted: ModelCallUsage[] = [];
    const metered = new UpdateMemoryUseCase(
      adventures,
      { memory: createModelClient(config), summary: createModelClient(config) },
      createEmbedder(config),
      embeddings,
      {
        defaultModel: 'fake-model',
        countSpend: async (owner, usage) => {
          expect(owner).toBe(ownerId);
          counted.push(usage);
        },
      },
    );
    const adventureId = await create({}, ownerId);
    for (let step = 1; step <= 12; step++) await turn(adventureId, step);
    server.clear();
    const outcome = await metered.execute({ adventureId });
    expect(outcome.errors).toEqual([]);
    expect(outcome.memoriesWritten).toBeGreaterThan(0);
    expect(outcome.chaptersWritten).toBe(1);

    const stored = await new EventStoreRepository(database.db).readStream(
      `adventure-${adventureId}`,
    );
    const usageOf = (type: string, purpose?: string) =>
      stored
        .filter(
          (e) =>
            e.type === type &&
            (purpose === undefined || (e.data as { purpose?: string }).purpose === purpose),
        )
        .map((e) => (e.data as { usage?: ModelCallUsage }).usage);
    const memories = usageOf('MemoryWritten');
    const summaries = usageOf('ChapterWritten');
    const embedded = usageOf('ModelUsageRecorded', 'embedding');
    // Every call the fake provider answered is in the log, with the model that answered it.
    expect(memories).toHaveLength(chats(server.requests, 'memory').length);
    expect(summaries).toHaveLength(chats(server.requests, 'chapter').length);
    for (const usage of [...memories, ...summaries]) {
      expect(usage).toMatchObject({ model: 'fake-model' });
      expect(usage!.promptTokens).toBeGreaterThan(0);
      expect(usage!.completionTokens).toBeGreaterThan(0);
    }
    // The fake server charges one prompt token per embedded text.
    const embeddedTexts = server.requestsTo(EMBED).flatMap((r) => r.body.input as string[]);
    expect(embedded.reduce((sum, usage) => sum + usage!.promptTokens, 0)).toBe(
      embeddedTexts.length,
    );

    const total = (usages: (ModelCallUsage | undefined)[]) =>
      usages.reduce((sum, usage) => sum + usage!.promptTokens + usage!.completionTokens, 0);
    const summed = await sumUserUsage(database.db as never, ownerId, {
      from: new Date(Date.now() - 60_000),
    });
    const line = (purpose: string) =>
      summed.lines
        .filter((l) => l.purpose === purpose)
        .reduce((sum, l) => sum + l.promptTokens + l.completionTokens, 0);
    expect(line('memory')).toBe(total(memories));
    expect(line('summary')).toBe(total(summaries));
    expect(line('embedding')).toBe(total(embedded));
    // ...and each was counted toward the daily budget once.
    expect(total(counted)).toBe(total(memories) + total(summaries) + total(embedded));
  });
});
