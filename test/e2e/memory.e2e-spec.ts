// The memory bank and the chaptered summary through the real apps: the API, the context worker and the
// memory worker as processes, the fake OpenAI server (instant) as the model. What is asserted is
// what a provider would have received, and what a client reads back.
import {
  chaptersOnPath,
  project,
  memoriesOnPath,
  type ChapterWrittenData,
  type MemoryWrittenData,
  type RecordedAdventureEvent,
} from '@chronicle/adventure';
import { CHAPTER_SYSTEM_PROMPT, MEMORY_SYSTEM_PROMPT } from '@chronicle/memory';
import { AppSystem, isAppBuilt, type AppProcess } from '@chronicle/testing';
import type { RecordedRequest } from '../support/fake-openai-server';
import { ChronicleClient, ofType, type StoredEvent } from './support/chronicle.client';

jest.setTimeout(180_000);

const CHAT = '/v1/chat/completions';
const EMBEDDINGS = '/v1/embeddings';
const TURNS = 60;

const describeBuilt = isAppBuilt('memory-worker') ? describe : describe.skip;

let system: AppSystem;
let client: ChronicleClient;
let memoryWorker: AppProcess;
/** While set, the second memory request for the harbor adventure hangs (the worker is killed then). */
let hangHarbor = false;
let harborMemoryRequests = 0;
let chapters = 0;

function lastMatch(text: string, pattern: RegExp): string {
  const all = text.match(pattern);
  return all ? all[all.length - 1] : '';
}

function userText(request: RecordedRequest): string {
  const messages = request.body?.messages ?? [];
  return messages[messages.length - 1]?.content ?? '';
}

const systemText = (request: RecordedRequest): string => request.body?.messages?.[0]?.content ?? '';
const isMemoryRequest = (r: RecordedRequest) => systemText(r) === MEMORY_SYSTEM_PROMPT;
const isChapterRequest = (r: RecordedRequest) => systemText(r) === CHAPTER_SYSTEM_PROMPT;
const isNarration = (r: RecordedRequest) => r.path === CHAT && r.body?.stream === true;
const promptOf = (r: RecordedRequest): string =>
  (r.body?.messages ?? []).map((m: { content: string }) => m.content).join('\n');

beforeAll(async () => {
  system = await AppSystem.start({
    apps: ['api', 'context-worker'],
    fake: { instant: true },
  });
  memoryWorker = await system.startApp('memory-worker');
  system.fake.setDefaultReply((request) => {
    if (isMemoryRequest(request)) {
      const excerpt = userText(request).split('Story excerpt:')[1] ?? '';
      if (/buoy/.test(excerpt)) {
        harborMemoryRequests++;
        if (hangHarbor && harborMemoryRequests === 2) return { hangMs: 120_000, text: 'late' };
        return { text: `Ash rowed past ${lastMatch(excerpt, /buoy \d+/g)}.` };
      }
      return { text: `Ash walked past ${lastMatch(excerpt, /mark \d+/g)}.` };
    }
    if (isChapterRequest(request)) return { text: `Chapter number ${++chapters}.` };
    return { text: 'The wind rises over the water.' };
  });
  client = new ChronicleClient(system.apiUrl);
});

afterAll(async () => {
  await system?.close();
});

const scenario = (title: string) => ({
  title,
  opening: 'You stand on the shore below the lighthouse.',
  plotEssentials: 'The keeper vanished a week ago.',
  persona: { name: 'Ash', pronouns: 'they/them', description: 'A tired courier.' },
  storyCards: [{ name: 'Mira', keys: 'mira', entry: 'Mira keeps the light.', type: 'character' }],
  settings: { autoSummarize: true, memoryBankEnabled: true },
});

interface Expected {
  /** [sourceStart, sourceEnd] of every memory written so far, in order. */
  memories: Array<[number, number]>;
  /** Every chapter so far: the depths it covers. */
  chapters: Array<[number, number]>;
}

/**
 * The predecessor's memory cadence, replayed on depths when every memory job runs after its
 * turn: memories every 6 actions once the story holds 12 (at most 5 a run), then a chapter of
 * every 24 short actions.
 */
function cadenceAfter(turns: number): Expected {
  const expected: Expected = { memories: [], chapters: [] };
  let memoryCursor = -1;
  let chapterCursor = -1;
  for (let turn = 1; turn <= turns; turn++) {
    const tip = 2 * turn;
    for (let run = 0; tip + 1 >= 12 && tip - memoryCursor >= 6 && run < 5; run++) {
      expected.memories.push([memoryCursor + 1, memoryCursor + 6]);
      memoryCursor += 6;
    }
    if (tip - chapterCursor >= 24) {
      expected.chapters.push([chapterCursor + 1, chapterCursor + 24]);
      chapterCursor += 24;
    }
  }
  return expected;
}

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean) {
  const deadline = Date.now() + 20_000;
  let value = await read();
  while (!done(value)) {
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await read();
  }
  return value;
}

async function written(adventureId: string) {
  const events = await client.events(adventureId);
  return {
    events,
    memories: ofType(events, 'MemoryWritten').map((e) => e.data as MemoryWrittenData),
    chapters: ofType(events, 'ChapterWritten').map((e) => e.data as ChapterWrittenData),
  };
}

function asRecorded(events: StoredEvent[]): RecordedAdventureEvent[] {
  return events.map(
    (e) => ({ type: e.type, data: e.data, version: Number(e.version) }) as RecordedAdventureEvent,
  );
}

describeBuilt('memory bank and chaptered summary, end to end', () => {
  let adventureId: string;

  it('writes memories and chapters at exactly the cadence actions, with the prompts of the spec', async () => {
    await system.explainFailure(async () => {
      adventureId = await client.createAdventure(scenario('Shore'));
      for (let turn = 1; turn <= TURNS; turn++) {
        const played = await client.play(adventureId, 'do', `walk to mark ${turn}`);
        expect(played.stream.outcome).toBe('done');
        const expected = cadenceAfter(turn);
        // The memory job runs after the turn; wait for what it must have written by now.
        await until(
          `the memory work due after turn ${turn}`,
          () => written(adventureId),
          (now) =>
            now.memories.length >= expected.memories.length &&
            now.chapters.length >= expected.chapters.length,
        );
      }

      const expected = cadenceAfter(TURNS);
      expect(expected.memories).toHaveLength(20);
      expect(expected.chapters).toHaveLength(5);
      const { events, memories, chapters: told } = await written(adventureId);
      expect(memories.map((m) => [m.sourceStart, m.sourceEnd])).toEqual(expected.memories);
      expect(memories.every((m) => m.createdBy === 'worker')).toBe(true);
      expect(told.map((c) => [c.sourceStart, c.sourceEnd])).toEqual(expected.chapters);

      // Exactly one model call per memory and per chapter, no more.
      const chat = system.fake.requestsTo(CHAT);
      const memoryCalls = chat.filter(isMemoryRequest);
      const chapterCalls = chat.filter(isChapterRequest);
      expect(memoryCalls).toHaveLength(20);
      expect(chapterCalls).toHaveLength(told.length);
      memoryCalls.forEach((request, i) => {
        const [, end] = expected.memories[i];
        const user = userText(request);
        // The cast brief, then the block's excerpt, then the cue.
        expect(user.startsWith('Cast:\n')).toBe(true);
        expect(user).toContain('Ash (they/them) — the protagonist.');
        expect(user).toContain('Setting:');
        expect(user).toContain('Story excerpt:\n');
        expect(user.endsWith('Memory:')).toBe(true);
        // The block's last player action is in its excerpt, and nothing after the block.
        const lastPlayer = end % 2 === 1 ? (end + 1) / 2 : end / 2;
        expect(user).toContain(`walk to mark ${lastPlayer}`);
        expect(user).not.toMatch(new RegExp(`walk to mark ${lastPlayer + 1}\\b`));
        expect(request.body.temperature).toBe(0.3);
      });
      chapterCalls.forEach((request, i) => {
        // Written from the chapter's own story, which ends on its last player action.
        const user = userText(request);
        const lastPlayer = 12 * (i + 1);
        expect(user).toContain('Chapter:\n');
        expect(user).toContain(`walk to mark ${lastPlayer}`);
        expect(user).not.toMatch(new RegExp(`walk to mark ${lastPlayer + 1}\\b`));
        expect(user).not.toContain('Ash walked past mark');
        expect(user.endsWith('Chapter summary:')).toBe(true);
        expect(request.body.max_tokens ?? request.body.max_completion_tokens).toBe(300);
        expect(request.body.temperature).toBe(0.3);
      });

      // Every memory text was embedded once, in batches of at most 32.
      const embedded = system.fake
        .requestsTo(EMBEDDINGS)
        .flatMap((r) => (Array.isArray(r.body.input) ? r.body.input : [r.body.input]) as string[]);
      for (const memory of memories) {
        expect(embedded.filter((text) => text === memory.text)).toHaveLength(1);
      }
      for (const request of system.fake.requestsTo(EMBEDDINGS)) {
        expect([request.body.input].flat().length).toBeLessThanOrEqual(32);
      }

      // Later prompts carry the chapters and the retrieved memories; the turn records their use
      // in the same append as its narration.
      const narrations = chat.filter(isNarration);
      const last = promptOf(narrations[narrations.length - 1]);
      expect(last).toContain('Story summary:\nChapter number 1.\n\nChapter number 2.');
      expect(last).toMatch(/Memories:\n- Ash walked past mark \d+\./);
      const used = ofType(events, 'MemoriesUsed');
      expect(used.length).toBeGreaterThan(0);
      for (const event of used) {
        const before = events.find((e) => Number(e.version) === Number(event.version) - 1);
        expect(before?.type).toBe('Narrated');
        expect((before?.data as { turnId: string }).turnId).toBe(
          (event.data as { turnId: string }).turnId,
        );
      }
      const listed = await client.expect(200, 'GET', `/v1/adventures/${adventureId}/memories`);
      expect(listed.body.memories).toHaveLength(20);
      expect(listed.body.memories.some((m: { useCount: number }) => m.useCount > 0)).toBe(true);
    });
  });

  it("undo past a memory's source withdraws it from the next prompt, and it is written again later", async () => {
    await system.explainFailure(async () => {
      const listed = await client.expect(200, 'GET', `/v1/adventures/${adventureId}/memories`);
      const newest = listed.body.memories.at(-1);
      expect([newest.sourceStart, newest.sourceEnd]).toEqual([114, 119]);
      // Pinned, so it is in every prompt while it is on the path (retrieval could skip it).
      await client.expect(200, 'POST', `/v1/adventures/${adventureId}/memories/${newest.id}/pin`);

      system.fake.clear();
      await client.play(adventureId, 'do', 'walk to mark 61');
      expect(promptOf(system.fake.requestsTo(CHAT).filter(isNarration)[0])).toContain(
        `- ${newest.text}`,
      );
      const report = await client.expect(200, 'GET', `/v1/adventures/${adventureId}/context`);
      expect(report.body.manifest?.memories ?? report.body.memories).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ id: newest.id, pinned: true, sources: newest.sourceActionIds }),
        ]),
      );
      // The memory cites its block (depths 114–119), and expands to the story's own text of it.
      expect(newest.sourceActionIds).toHaveLength(6);
      const expanded = await client.expect(
        200,
        'GET',
        `/v1/adventures/${adventureId}/memories/${newest.id}/sources`,
      );
      expect(expanded.body.sources.map((s: { depth: number }) => s.depth)).toEqual([
        114, 115, 116, 117, 118, 119,
      ]);
      expect(expanded.body.sources.map((s: { text: string }) => s.text).join('\n')).toContain(
        'walk to mark 58',
      );

      // Undo turn 61 and turn 60: the head is at depth 118, before the memory's anchor (119).
      expect((await client.undo(adventureId)).status).toBe(200);
      expect((await client.undo(adventureId)).status).toBe(200);
      const after = await client.expect(200, 'GET', `/v1/adventures/${adventureId}/memories`);
      expect(after.body.memories.map((m: { id: string }) => m.id)).not.toContain(newest.id);
      await client.expect(
        404,
        'GET',
        `/v1/adventures/${adventureId}/memories/${newest.id}/sources`,
      );

      system.fake.clear();
      await client.play(adventureId, 'do', 'walk to the cliff instead');
      const prompt = promptOf(system.fake.requestsTo(CHAT).filter(isNarration)[0]);
      expect(prompt).not.toContain(newest.text);
      expect(prompt).toContain('Memories:');

      // The block 114–119 is on the path again (new actions): the worker writes it anew.
      const rewritten = await until(
        'the block 114–119 written again',
        () => client.expect(200, 'GET', `/v1/adventures/${adventureId}/memories`),
        (r) =>
          r.body.memories.some(
            (m: { id: string; sourceStart: number }) => m.sourceStart === 114 && m.id !== newest.id,
          ),
      );
      const again = rewritten.body.memories.find(
        (m: { sourceStart: number }) => m.sourceStart === 114,
      );
      // Its last action is now the new one; the newest mark in the block is 59.
      expect(again.text).toBe('Ash walked past mark 59.');
      expect(system.fake.requestsTo(CHAT).filter(isMemoryRequest)).toHaveLength(1);
      // The chapter of 96–119 left the path with the undo: it is told again from the new actions.
      const retold = await until(
        'the chapter 96–119 written again',
        () => written(adventureId),
        (now) => now.chapters.length >= 6,
      );
      expect(retold.chapters.map((c) => [c.sourceStart, c.sourceEnd]).at(-1)).toEqual([96, 119]);
    });
  });

  it('replaying the events reproduces the memories and the chapters without any model request', async () => {
    await system.explainFailure(async () => {
      const events = await client.events(adventureId);
      const requestsBefore = system.fake.requests.length;
      const replayed = project(asRecorded(events));
      const listed = await client.expect(200, 'GET', `/v1/adventures/${adventureId}/memories`);
      expect(
        memoriesOnPath(replayed).map(({ id, text, pinned, forgotten, useCount }) => ({
          id,
          text,
          pinned,
          forgotten,
          useCount,
        })),
      ).toEqual(
        listed.body.memories.map(
          ({ id, text, pinned, forgotten, useCount }: Record<string, unknown>) => ({
            id,
            text,
            pinned,
            forgotten,
            useCount,
          }),
        ),
      );
      // The fifth chapter left the path with the undo; the sixth tells its span again.
      expect(chaptersOnPath(replayed).map((c) => c.text)).toEqual([
        'Chapter number 1.',
        'Chapter number 2.',
        'Chapter number 3.',
        'Chapter number 4.',
        'Chapter number 6.',
      ]);
      expect(system.fake.requests.length).toBe(requestsBefore);
    });
  });

  it('a memory worker killed mid-job leaves no duplicate memory: the redelivered job finishes the rest', async () => {
    await system.explainFailure(async () => {
      const harbor = await client.createAdventure(scenario('Harbor'));
      hangHarbor = true;
      for (let turn = 1; turn <= 6; turn++) await client.play(harbor, 'do', `row to buoy ${turn}`);
      // After turn 6 two blocks are due: the first memory is written, the second call hangs.
      await until(
        'the second harbor memory call',
        async () => harborMemoryRequests,
        (n) => n >= 2,
      );
      expect(ofType(await client.events(harbor), 'MemoryWritten')).toHaveLength(1);
      memoryWorker.kill('SIGKILL');
      await memoryWorker.waitForExit(10_000);
      hangHarbor = false;
      memoryWorker = await system.startApp('memory-worker');

      const { memories } = await until(
        'the redelivered job to write the second memory',
        () => written(harbor),
        (now) => now.memories.length >= 2,
      );
      // Give a duplicate every chance to appear before asserting there is none.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const final = await written(harbor);
      expect(final.memories.map((m) => [m.sourceStart, m.sourceEnd])).toEqual([
        [0, 5],
        [6, 11],
      ]);
      expect(new Set(final.memories.map((m) => m.memoryId)).size).toBe(2);
      expect(memories[1].text).toBe('Ash rowed past buoy 6.');
      // The first block was not asked for again.
      expect(harborMemoryRequests).toBe(3);
    });
  });
});
