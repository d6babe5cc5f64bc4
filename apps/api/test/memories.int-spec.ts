import { randomUUID } from 'node:crypto';
import { AccountsRepository } from '@chronicle/accounts';
import {
  adventureStreamId,
  EVENT_SCHEMA_VERSIONS,
  LIMITS,
  type MemoryEvent,
} from '@chronicle/adventure';
import { readModelsOf } from '@chronicle/adventure-store';
import { narrationCommand } from '@chronicle/adventure/testing';
import { EventStoreRepository } from '@chronicle/event-store';
import { memoryBlocks, SUMMARY_SYSTEM_PROMPT } from '@chronicle/memory';
import { JobName, QueueName, QueueProducer } from '@chronicle/queue';
import {
  startFakeOpenAiServer,
  type FakeOpenAiServer,
} from '../../../test/support/fake-openai-server';
import { aScenario, fakeModelConfig, startApiHarness, type ApiHarness } from './api.harness';

const CHAT = '/v1/chat/completions';

let api: ApiHarness;
let server: FakeOpenAiServer & { baseURL: string };

beforeAll(async () => {
  server = await startFakeOpenAiServer({
    instant: true,
    defaultReply: { text: 'Mira rang the drowned bell and Old Tom rowed her home.' },
  });
  api = await startApiHarness(fakeModelConfig(server));
});

afterAll(async () => {
  await api?.close();
  await server?.close();
});

beforeEach(() => server.clear());

async function adventure(settings: Record<string, unknown> = {}): Promise<string> {
  const created = await api.request('POST', '/v1/adventures', aScenario({ settings }));
  expect(created.status).toBe(201);
  return created.body.id as string;
}

/** Plays turns straight through the repository (no worker in this test). */
async function play(adventureId: string, turns: number): Promise<void> {
  for (let step = 1; step <= turns; step++) {
    const turnId = randomUUID();
    await api.adventures.handle(
      adventureId,
      {
        type: 'SubmitAction',
        data: { turnId, inputType: 'do', text: `ring step ${step}`, actionId: randomUUID() },
      },
      { actor: 'test' },
    );
    await api.adventures.handle(
      adventureId,
      narrationCommand(turnId, randomUUID(), { text: `The bell answers step ${step}.` }),
      { actor: 'test' },
    );
  }
}

describe('memories', () => {
  it('adds a memory at the head, then edits, pins, unpins, forgets and deletes it; the list follows', async () => {
    const id = await adventure();
    const head = (await api.request('GET', `/v1/adventures/${id}`)).body.head;
    expect((await api.request('GET', `/v1/adventures/${id}/memories`)).body).toEqual({
      memories: [],
      version: 1,
    });

    const added = await api.request('POST', `/v1/adventures/${id}/memories`, {
      text: '  Old Tom owes Mira a crossing.  ',
    });
    expect(added.status).toBe(201);
    const memoryId = added.body.memory.id;
    expect(added.body).toEqual({
      memory: {
        id: expect.any(String),
        text: 'Old Tom owes Mira a crossing.',
        pinned: false,
        forgotten: false,
        useCount: 0,
        createdBy: 'player',
        sourceStart: null,
        sourceEnd: null,
        anchorActionId: head,
        sourceActionIds: [],
        onPath: true,
      },
      version: 2,
    });

    const edited = await api.request('PATCH', `/v1/adventures/${id}/memories/${memoryId}`, {
      text: 'Old Tom owes Mira two crossings.',
    });
    expect(edited.status).toBe(200);
    expect(edited.body.memory.text).toBe('Old Tom owes Mira two crossings.');

    const pinned = await api.request('POST', `/v1/adventures/${id}/memories/${memoryId}/pin`);
    expect(pinned.status).toBe(200);
    expect(pinned.body.memory).toMatchObject({ pinned: true });
    const unpinned = await api.request('POST', `/v1/adventures/${id}/memories/${memoryId}/unpin`);
    expect(unpinned.body.memory).toMatchObject({ pinned: false });
    const forgotten = await api.request('POST', `/v1/adventures/${id}/memories/${memoryId}/forget`);
    expect(forgotten.body.memory).toMatchObject({ forgotten: true, pinned: false });

    const listed = await api.request('GET', `/v1/adventures/${id}/memories`);
    expect(listed.body.memories).toEqual([
      expect.objectContaining({ id: memoryId, forgotten: true, useCount: 0 }),
    ]);

    const deleted = await api.request('DELETE', `/v1/adventures/${id}/memories/${memoryId}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ memoryId, version: 7 });
    expect((await api.request('GET', `/v1/adventures/${id}/memories`)).body.memories).toEqual([]);
    expect(
      (await api.request('POST', `/v1/adventures/${id}/memories/${memoryId}/pin`)).status,
    ).toBe(404);
  });

  it('lists only the memories on the current path: an undo past the anchor withdraws one', async () => {
    const id = await adventure();
    await play(id, 1);
    const added = await api.request('POST', `/v1/adventures/${id}/memories`, {
      text: 'The bell cracked.',
    });
    expect((await api.request('GET', `/v1/adventures/${id}/memories`)).body.memories).toHaveLength(
      1,
    );

    expect((await api.request('POST', `/v1/adventures/${id}/undo`)).status).toBe(200);
    expect((await api.request('GET', `/v1/adventures/${id}/memories`)).body.memories).toEqual([]);

    expect((await api.request('POST', `/v1/adventures/${id}/redo`)).status).toBe(200);
    expect((await api.request('GET', `/v1/adventures/${id}/memories`)).body.memories).toEqual([
      expect.objectContaining({ id: added.body.memory.id }),
    ]);
  });

  it('answers the same client id with the memory already added', async () => {
    const id = await adventure();
    const clientId = randomUUID();
    const first = await api.request('POST', `/v1/adventures/${id}/memories`, {
      id: clientId,
      text: 'Once.',
    });
    const second = await api.request('POST', `/v1/adventures/${id}/memories`, {
      id: clientId,
      text: 'Once.',
    });
    expect(first.body.memory.id).toBe(clientId);
    expect(second.body).toEqual(first.body);
    expect((await api.request('GET', `/v1/adventures/${id}/memories`)).body.memories).toHaveLength(
      1,
    );
  });

  it('refuses empty and over-long text naming the limit, and unknown fields', async () => {
    const id = await adventure();
    const empty = await api.request('POST', `/v1/adventures/${id}/memories`, { text: '' });
    expect(empty.status).toBe(400);
    expect(empty.body.message).toEqual(['text is required: write what should be remembered']);

    const long = await api.request('POST', `/v1/adventures/${id}/memories`, {
      text: 'x'.repeat(LIMITS.memoryTextChars + 1),
    });
    expect(long.status).toBe(400);
    expect(long.body.message).toEqual([
      `text is too long; keep it to ${LIMITS.memoryTextChars} characters`,
    ]);

    const blank = await api.request('POST', `/v1/adventures/${id}/memories`, { text: '   ' });
    expect(blank.status).toBe(400);

    const extra = await api.request('POST', `/v1/adventures/${id}/memories`, {
      text: 'ok',
      pinned: true,
    });
    expect(extra.status).toBe(400);
    expect((await api.request('GET', `/v1/adventures/${id}/memories`)).body.memories).toEqual([]);
    expect((await api.request('GET', `/v1/adventures/${randomUUID()}/memories`)).status).toBe(404);
    // An id that cannot be an adventure's is a 400 naming the parameter.
    expect((await api.request('GET', `/v1/adventures/nope/memories`)).status).toBe(400);
  });

  it('refuses a memory past memoriesPerAdventure with 422 naming the limit', async () => {
    const id = await adventure();
    const head = (await api.adventures.get(id)).head ?? '';
    const events: MemoryEvent[] = Array.from({ length: LIMITS.memoriesPerAdventure }, (_, i) => ({
      type: 'MemoryWritten',
      data: {
        memoryId: `seeded-${i}`,
        text: `memory ${i}`,
        sourceStart: null,
        sourceEnd: null,
        anchorActionId: head,
        sourceActionIds: [],
        createdBy: 'player',
      },
    }));
    // Seeded straight into the log (a thousand appends through the API would only be slow).
    const before = await api.adventures.get(id);
    const version = before.version;
    await api.app.get(EventStoreRepository).appendToStream(
      adventureStreamId(id),
      events.map((event) => ({
        id: randomUUID(),
        type: event.type,
        schemaVersion: EVENT_SCHEMA_VERSIONS[event.type],
        data: event.data,
      })),
      { expectedVersion: version, readModels: readModelsOf(events, before) },
    );

    const refused = await api.request('POST', `/v1/adventures/${id}/memories`, {
      text: 'one more',
    });
    expect(refused.status).toBe(422);
    expect(refused.body.message).toContain('memoriesPerAdventure');
  });

  it('enqueues a memory job to embed a new memory when the bank is on', async () => {
    const id = await adventure({ memoryBankEnabled: true });
    const queue = api.app.get(QueueProducer).queue(QueueName.Memory);
    await api.request('POST', `/v1/adventures/${id}/memories`, { text: 'Embed me.' });
    let jobs = await queue.getJobs(['waiting', 'active', 'delayed', 'completed', 'failed']);
    for (let i = 0; i < 100 && !jobs.some((job) => job.data.adventureId === id); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      jobs = await queue.getJobs(['waiting', 'active', 'delayed', 'completed', 'failed']);
    }
    expect(jobs.filter((job) => job.data.adventureId === id)).toEqual([
      expect.objectContaining({ name: JobName.UpdateMemory }),
    ]);
  });
});

describe('a memory expanded to its sources', () => {
  /** The worker's memory of the oldest block due, sent as the worker sends it. */
  async function workerMemory(adventureId: string): Promise<string> {
    const [block] = memoryBlocks(await api.adventures.get(adventureId));
    const memoryId = randomUUID();
    const handled = await api.adventures.handle(
      adventureId,
      {
        type: 'WriteMemory',
        key: memoryId,
        data: {
          memoryId,
          text: 'Mira rang the bell six times.',
          block: {
            anchorActionId: block.anchorActionId,
            sourceStart: block.sourceStart,
            sourceEnd: block.sourceEnd,
          },
        },
      },
      { actor: 'test' },
    );
    expect(handled.events).toHaveLength(1);
    return memoryId;
  }

  it("given a worker's memory, then its sources are the story's own text of the block's actions, in order; the list cites them", async () => {
    const id = await adventure();
    await play(id, 6); // the opening and 12 actions: the first block (depths 0–5) is due
    const memoryId = await workerMemory(id);
    const expanded = await api.request('GET', `/v1/adventures/${id}/memories/${memoryId}/sources`);
    expect(expanded.status).toBe(200);
    const path = (await api.adventures.get(id)).path;
    expect(expanded.body).toEqual({
      memoryId,
      text: 'Mira rang the bell six times.',
      sources: path.slice(0, 6).map((entry, depth) => ({
        actionId: entry.id,
        depth,
        type: entry.type,
        text: expect.any(String),
      })),
      version: expect.any(Number),
    });
    expect(expanded.body.sources.slice(1).map((s: { text: string }) => s.text)).toEqual([
      '> You ring step 1.',
      'The bell answers step 1.',
      '> You ring step 2.',
      'The bell answers step 2.',
      '> You ring step 3.',
    ]);
    const listed = await api.request('GET', `/v1/adventures/${id}/memories`);
    expect(listed.body.memories[0].sourceActionIds).toEqual(
      expanded.body.sources.map((s: { actionId: string }) => s.actionId),
    );
  });

  it('fails closed: a memory off the current path, an unknown one, or another user’s adventure is 404; a hand-written one has no sources', async () => {
    const id = await adventure();
    await play(id, 6);
    const memoryId = await workerMemory(id);
    // Undo back past the block's last action (depth 5): the memory leaves the path.
    while ((await api.adventures.get(id)).path.length > 5) {
      expect((await api.request('POST', `/v1/adventures/${id}/undo`)).status).toBe(200);
    }
    const off = await api.request('GET', `/v1/adventures/${id}/memories/${memoryId}/sources`);
    expect(off.status).toBe(404);
    expect(off.body.message).toMatch(/not on the current path/);
    expect(
      (await api.request('GET', `/v1/adventures/${id}/memories/${randomUUID()}/sources`)).status,
    ).toBe(404);

    const mine = await api.request('POST', `/v1/adventures/${id}/memories`, { text: 'Mine.' });
    const own = await api.request(
      'GET',
      `/v1/adventures/${id}/memories/${mine.body.memory.id}/sources`,
    );
    expect(own.status).toBe(200);
    expect(own.body.sources).toEqual([]);

    const accounts = api.app.get(AccountsRepository);
    const other = await accounts.createUser({ name: 'someone else' });
    const otherKey = (await accounts.createKey(other.id))!.key;
    const theirs = await api.request(
      'GET',
      `/v1/adventures/${id}/memories/${mine.body.memory.id}/sources`,
      undefined,
      { authorization: `Bearer ${otherKey}` },
    );
    expect(theirs.status).toBe(404);
    const anonymous = await api.request(
      'GET',
      `/v1/adventures/${id}/memories/${mine.body.memory.id}/sources`,
      undefined,
      { authorization: '' },
    );
    expect(anonymous.status).toBe(401);
  });
});

describe('summary', () => {
  it("reads null, takes the player's edit, and GET /v1/adventures/:id carries it", async () => {
    const id = await adventure();
    expect((await api.request('GET', `/v1/adventures/${id}/summary`)).body).toEqual({
      summary: null,
      version: 1,
    });
    const edited = await api.request('PATCH', `/v1/adventures/${id}/summary`, {
      text: 'Mira rings the bell.',
    });
    expect(edited.status).toBe(200);
    expect(edited.body.summary).toMatchObject({ text: 'Mira rings the bell.', handEdited: true });
    expect((await api.request('GET', `/v1/adventures/${id}`)).body.storySummary).toBe(
      'Mira rings the bell.',
    );

    // A second edit at the same head rewrites that version in place.
    const again = await api.request('PATCH', `/v1/adventures/${id}/summary`, { text: 'Bell.' });
    expect(again.body.summary.id).toBe(edited.body.summary.id);
    expect(server.requests).toHaveLength(0);
  });

  it('regenerates the summary with the summarizer, from the memories and the story', async () => {
    const id = await adventure({ autoSummarize: true });
    await play(id, 3);
    const regenerated = await api.request('POST', `/v1/adventures/${id}/summary/regenerate`);
    expect(regenerated.status).toBe(200);
    expect(regenerated.body.summary).toMatchObject({
      text: 'Mira rang the drowned bell and Old Tom rowed her home.',
      handEdited: false,
      anchorActionId: (await api.adventures.get(id)).head,
    });
    const [request] = server.requestsTo(CHAT);
    expect(request.body.messages[0]).toEqual({ role: 'system', content: SUMMARY_SYSTEM_PROMPT });
    const user: string = request.body.messages[1].content;
    expect(user).toContain('Current story summary:\n(none yet)');
    expect(user).toContain('The bell answers step 3.');
    expect(user.endsWith('Updated summary:')).toBe(true);
    expect(request.body.max_tokens ?? request.body.max_completion_tokens).toBe(600);
    expect(request.body.temperature).toBe(0.3);
  });

  it('answers 502 with a clear message when the summarizer fails, and leaves the summary as it was', async () => {
    const id = await adventure({ autoSummarize: true });
    await api.request('PATCH', `/v1/adventures/${id}/summary`, { text: 'Kept.' });
    server.enqueue({ status: 500, errorMessage: 'the model is down', path: CHAT });
    const failed = await api.request('POST', `/v1/adventures/${id}/summary/regenerate`);
    expect(failed.status).toBe(502);
    expect(failed.body.message).toMatch(/^the summarizer failed: .*The summary was not changed/);
    expect(failed.body.message).not.toContain('test-key');
    expect((await api.request('GET', `/v1/adventures/${id}/summary`)).body.summary.text).toBe(
      'Kept.',
    );
  });
});
