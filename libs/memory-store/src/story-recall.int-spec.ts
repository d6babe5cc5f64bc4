import { randomUUID } from 'node:crypto';
import type { AdventureCommand, ModelCallUsage } from '@chronicle/adventure';
import { narrationCommand } from '@chronicle/adventure/testing';
import { AdventureCommandHandler } from '@chronicle/adventure-store';
import { EventStoreRepository, SnapshotRepository } from '@chronicle/event-store';
import { createEmbedder, OfflineEmbedder } from '@chronicle/llm';
import { matchingLexemes, queryWords } from '@chronicle/memory';
import { createTestDatabase, type TestDatabase } from '@chronicle/testing';
import { sql } from 'kysely';
import { FakeOpenAiServer } from '../../../test/support/fake-openai-server';
import {
  IndexStoryPassagesUseCase,
  type KnownTerms,
  PassageTermCache,
  PassageVectorCache,
  StoryPassageRepository,
  StoryRecallService,
} from './index';

const FACT = 'The keeper hid the silver key beneath the third stone of the chapel floor.';

describe('story passages (real Postgres)', () => {
  let database: TestDatabase;
  let adventures: AdventureCommandHandler;
  let passages: StoryPassageRepository;
  let recall: StoryRecallService;
  const meta = { actor: 'test' };

  beforeAll(async () => {
    database = await createTestDatabase();
    adventures = new AdventureCommandHandler(
      new EventStoreRepository(database.db),
      new SnapshotRepository(database.db),
      { snapshotEvery: 25 },
    );
    passages = new StoryPassageRepository(database.db);
    recall = new StoryRecallService(
      passages,
      adventures,
      new OfflineEmbedder(),
      new PassageVectorCache(passages),
    );
  });

  afterAll(async () => {
    await database.drop();
  });

  /** The query's lexemes with their passages counted in SQL now, every one matched. */
  async function countedInSql(adventureId: string, query: string): Promise<KnownTerms> {
    const lexemes = await new PassageTermCache(passages).lexemes(queryWords(query));
    const counted = await sql<{ passages: string }>`
      SELECT (SELECT count(*) FROM story_passages
              WHERE adventure_id = ${adventureId} AND tsv @@ quote_literal(l)::tsquery) AS passages
      FROM unnest(${lexemes}::text[]) WITH ORDINALITY AS u(l, n) ORDER BY n
    `.execute(database.db);
    return {
      terms: lexemes.map((lexeme, i) => ({ lexeme, passages: Number(counted.rows[i].passages) })),
      match: lexemes,
      passages: await passages.count(adventureId),
    };
  }

  async function create(): Promise<string> {
    const adventureId = randomUUID();
    const command: AdventureCommand = {
      type: 'CreateAdventure',
      data: {
        adventureId,
        ownerId: randomUUID(),
        openingActionId: randomUUID(),
        title: 'The Chapel',
        opening: 'You stand at the chapel door in the rain.',
        plotEssentials: '',
        persona: { name: 'Ash', pronouns: 'they/them', description: 'A tired courier.' },
        storyCards: [],
        settings: { memoryBankEnabled: true },
      },
    };
    await adventures.handle(adventureId, command, meta);
    return adventureId;
  }

  /** A turn: the player's action and its narration; returns both ids. */
  async function turn(adventureId: string, action: string, narration: string) {
    const turnId = randomUUID();
    const playerActionId = randomUUID();
    const aiActionId = randomUUID();
    await adventures.handle(
      adventureId,
      {
        type: 'SubmitAction',
        data: { turnId, inputType: 'do', text: action, actionId: playerActionId },
      },
      meta,
    );
    await adventures.handle(
      adventureId,
      narrationCommand(turnId, aiActionId, { text: narration }),
      meta,
    );
    return { playerActionId, aiActionId };
  }

  async function filler(adventureId: string, count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      await turn(
        adventureId,
        `walk along corridor ${i}`,
        `Rain drums on the roof as you pass door ${i}.`,
      );
    }
  }

  it('given a story, when the index catches up, then every action and narration is stored once, and a second catch-up indexes nothing', async () => {
    const adventureId = await create();
    await filler(adventureId, 5);
    const state = await adventures.get(adventureId);
    const first = await recall.catchUp(state);
    expect(first.indexed).toBe(11); // the opening and five turns of two
    expect(await passages.count(adventureId)).toBe(11);
    expect((await recall.catchUp(state)).indexed).toBe(0);
    // Another process (no cursor in memory) finds it indexed too.
    const other = new StoryRecallService(
      passages,
      adventures,
      new OfflineEmbedder(),
      new PassageVectorCache(passages),
    );
    expect((await other.catchUp(state)).indexed).toBe(0);
  });

  it('given an old fact, when the player asks about it, then the narration holding it ranks first by words and by meaning', async () => {
    const adventureId = await create();
    const fact = await turn(adventureId, 'Ask the sexton about the keeper', FACT);
    await filler(adventureId, 20);
    const state = await adventures.get(adventureId);
    await recall.catchUp(state);
    const vector = Float32Array.from(
      (await new OfflineEmbedder().embed(['Where is the silver key hidden?'])).vectors[0],
    );
    const found = await recall.search(state, 'Where is the silver key hidden?', vector);
    expect(found[0]).toEqual(
      expect.objectContaining({
        actionId: fact.aiActionId,
        text: FACT,
        type: 'ai',
        lexicalRank: 1,
        vectorRank: 1,
      }),
    );
    expect(found[0].fused).toBeCloseTo(2 / 61);
    expect(found[0].position).toBe(2);
  });

  it('given a rare word in one short turn and a common one in long narrations, when the player asks with both, then the short turn ranks first by words', async () => {
    const adventureId = await create();
    for (let i = 0; i < 6; i++) {
      await turn(
        adventureId,
        `go to work ${i}`,
        `Work, work and more work: the long day at the work bench wears on, shift ${i}, and the ` +
          'foreman talks of work until the lamps are lit over the yard and the rain comes in.',
      );
    }
    const commute = await turn(adventureId, 'My daily commute takes 45 minutes.', 'Noted.');
    await filler(adventureId, 4);
    const state = await adventures.get(adventureId);
    await recall.catchUp(state);
    const hits = await passages.searchWords(
      adventureId,
      await countedInSql(adventureId, 'How long is my daily commute to work?'),
      10,
    );
    expect(hits[0].actionId).toBe(commute.playerActionId);
  });

  it('given an undo past the fact, then it is not recalled; given a redo, it is again', async () => {
    const adventureId = await create();
    await filler(adventureId, 2);
    const fact = await turn(adventureId, 'Ask the sexton about the keeper', FACT);
    await recall.catchUp(await adventures.get(adventureId));
    await adventures.handle(adventureId, { type: 'Undo', data: {} }, meta);
    await adventures.handle(adventureId, { type: 'Undo', data: {} }, meta);
    const undone = await adventures.get(adventureId);
    await recall.catchUp(undone);
    const ids = (await recall.search(undone, 'silver key', null)).map((p) => p.actionId);
    expect(ids).not.toContain(fact.aiActionId);
    expect(ids).not.toContain(fact.playerActionId);
    await adventures.handle(adventureId, { type: 'Redo', data: {} }, meta);
    await adventures.handle(adventureId, { type: 'Redo', data: {} }, meta);
    const redone = await adventures.get(adventureId);
    expect((await recall.search(redone, 'silver key', null)).map((p) => p.actionId)).toContain(
      fact.aiActionId,
    );
  });

  it('given a retry in flight, then the take it replaces is not recalled; given an edit, the new text is searched and the old is not', async () => {
    const adventureId = await create();
    const fact = await turn(adventureId, 'Ask the sexton', FACT);
    await adventures.handle(
      adventureId,
      { type: 'RequestRetry', data: { turnId: randomUUID() } },
      meta,
    );
    const retrying = await adventures.get(adventureId);
    await recall.catchUp(retrying);
    expect(
      (await recall.search(retrying, 'silver key', null)).map((p) => p.actionId),
    ).not.toContain(fact.aiActionId);

    const other = await create();
    const edited = await turn(other, 'Ask the sexton', FACT);
    await adventures.handle(
      other,
      {
        type: 'EditAction',
        data: {
          actionId: edited.aiActionId,
          text: 'The sexton shrugs: a brass lantern, nothing more.',
        },
      },
      meta,
    );
    const state = await adventures.get(other);
    await recall.catchUp(state);
    expect(await recall.search(state, 'silver key', null)).toEqual([]);
    expect((await recall.search(state, 'brass lantern', null)).map((p) => p.actionId)).toEqual([
      edited.aiActionId,
    ]);
  });

  it('given another branch, then its passages never leak into this one', async () => {
    const adventureId = await create();
    const fork = await turn(adventureId, 'Reach the fork', 'Two roads part here.');
    const left = await turn(adventureId, 'Take the left road', FACT);
    await adventures.handle(
      adventureId,
      { type: 'MoveHead', data: { actionId: fork.aiActionId } },
      meta,
    );
    await turn(adventureId, 'Take the right road', 'The right road climbs to a windmill.');
    const state = await adventures.get(adventureId);
    await recall.catchUp(state);
    const ids = (await recall.search(state, 'silver key chapel', null)).map((p) => p.actionId);
    expect(ids).not.toContain(left.aiActionId);
    expect(await passages.count(adventureId)).toBe(7); // both branches are stored
  });

  it('given a story where one word of the query is common, when only the rarer lexemes are matched, then the passages holding them come back ranked by the whole query, with the counts the process keeps ranking as counts taken in SQL do, and the common word alone is not enough', async () => {
    const adventureId = randomUUID();
    const vector = new Float32Array(4);
    const row = (actionId: string, text: string) => ({
      actionId,
      textVersion: 1,
      type: 'ai',
      text,
      vector,
    });
    await passages.save(adventureId, 'm', [
      ...Array.from({ length: 30 }, (_, i) =>
        row(`lantern-${i}`, `A lantern swings. A lantern gutters. Lanterns ${i}.`),
      ),
      row('kestrel-alone', 'A kestrel hangs over the marsh.'),
      row('kestrel-lantern', 'A kestrel perches on the lantern.'),
    ]);
    const terms = new PassageTermCache(passages);
    const lexemes = await terms.lexemes(['the', 'kestrel', 'lanterns', 'kestrel']);
    expect(lexemes).toEqual(['kestrel', 'lantern']); // stemmed, stop word dropped, each once
    const { counts, passages: stored } = await terms.frequencies(adventureId);
    expect(counts.get('lantern')).toBe(31);
    expect(counts.get('kestrel')).toBe(2);
    expect(stored).toBe(32);
    const known = lexemes.map((lexeme) => ({ lexeme, passages: counts.get(lexeme) ?? 0 }));
    const match = matchingLexemes(known, 10);
    expect(match).toEqual(['kestrel']);
    const hits = await passages.searchWords(
      adventureId,
      { terms: known, match, passages: stored },
      10,
    );
    expect(hits.map((hit) => hit.actionId)).toEqual(['kestrel-lantern', 'kestrel-alone']);
    // With every lexeme matched, the counts the process keeps rank exactly as counts taken in SQL.
    const every = await passages.searchWords(
      adventureId,
      await countedInSql(adventureId, 'the kestrel lanterns'),
      40,
    );
    expect(every).toHaveLength(32);
    const known32 = await passages.searchWords(
      adventureId,
      { terms: known, match: matchingLexemes(known, Infinity), passages: stored },
      40,
    );
    expect(known32.map((hit) => hit.actionId)).toEqual(every.map((hit) => hit.actionId));
    known32.forEach((hit, i) => expect(hit.score).toBeCloseTo(every[i].score, 9));
    expect(
      await passages.searchWords(adventureId, { terms: known, match: [], passages: stored }, 10),
    ).toEqual([]);

    // New passages are counted on the next look, and only they are read.
    await passages.save(adventureId, 'm', [row('kestrel-3', 'Another kestrel.')]);
    expect((await terms.frequencies(adventureId)).counts.get('kestrel')).toBe(3);
    expect((await terms.frequencies(adventureId)).counts.get('lantern')).toBe(31);
    expect((await terms.frequencies(adventureId)).passages).toBe(33);
    // A new text version of a node replaces its row: counted once.
    await passages.save(adventureId, 'm', [
      { ...row('kestrel-3', 'Another kestrel, again.'), textVersion: 2 },
    ]);
    expect((await terms.frequencies(adventureId)).passages).toBe(33);
  });

  it('given a paid embedder, when the memory worker indexes, then the embedding is recorded in the log and counted toward the budget', async () => {
    const server = new FakeOpenAiServer({ instant: true });
    const { baseURL } = await server.start();
    try {
      const embedder = createEmbedder({
        baseURL,
        apiKey: 'k',
        model: 'm',
        embeddingModel: 'fake-embed',
        timeoutMs: 5_000,
      });
      const paid = new StoryRecallService(
        passages,
        adventures,
        embedder,
        new PassageVectorCache(passages),
      );
      const counted: ModelCallUsage[] = [];
      const useCase = new IndexStoryPassagesUseCase(adventures, paid, async (_owner, usage) => {
        counted.push(usage);
      });
      const adventureId = await create();
      await filler(adventureId, 2);
      expect(await useCase.execute({ adventureId })).toBe(5);
      const events = await new EventStoreRepository(database.db).readStream(
        `adventure-${adventureId}`,
      );
      const recorded = events
        .filter((e) => e.type === 'ModelUsageRecorded')
        .map((e) => e.data as { purpose: string; usage: ModelCallUsage });
      expect(recorded).toEqual([
        {
          purpose: 'embedding',
          usage: expect.objectContaining({ model: 'fake-embed', promptTokens: 5 }),
        },
      ]);
      expect(counted).toEqual([expect.objectContaining({ promptTokens: 5 })]);
    } finally {
      await server.close();
    }
  });
});
