import { NarratedData } from '@chronicle/adventure';
import { buildTurnContext } from '@chronicle/adventure-store';
import { CONTINUE_INSTRUCTION } from '@chronicle/llm';
import { JobName, QueueName } from '@chronicle/queue';
import {
  act,
  cancel,
  createAdventure,
  finishedStream,
  readEvents,
  sleep,
  setUpNarrateSpec,
  waitForTurnEnd,
} from './testing/context-worker.harness';

const API_KEY = 'sk-test-abcdefghijklmnop-secret';
const REPLY =
  'Mira steps out of the shadow of the lamp room and looks at you.\n\n' +
  '```state\n{"type":"enter","id":"mira","name":"Mira","kind":"character","status":"alive"}\n```';

const spec = setUpNarrateSpec({
  fake: { chunkDelayMs: 1 },
  env: { MODEL_API_KEY: API_KEY, MODEL_NAME: 'default-model', MODEL_TIMEOUT_MS: '10000' },
});

function typesOf(events: { type: string }[]): string[] {
  return events.map((e) => e.type);
}

describe('the narrate job', () => {
  it('narrates a turn: Narrated with usage, the stream from chunks to done, the prompt in order', async () => {
    spec.fake.enqueue({
      text: REPLY,
      chunks: 6,
      usage: { promptTokens: 1500, completionTokens: 60, cachedTokens: 1024 },
    });
    const adventureId = await createAdventure(spec.harness);
    const { turnId, version } = await act(
      spec.harness,
      adventureId,
      'do',
      'climb the stairs to Mira',
    );
    const before = await spec.harness.adventures.loadAt(adventureId, version);

    await waitForTurnEnd(spec.harness, adventureId, turnId);
    const events = await readEvents(spec.harness, adventureId);
    expect(typesOf(events)).toEqual(['AdventureCreated', 'PlayerActed', 'Narrated']);
    const narrated = events[2];
    const data = narrated.data as NarratedData;
    expect(data.turnId).toBe(turnId);
    expect(data.action.text).toBe(
      'Mira steps out of the shadow of the lamp room and looks at you.',
    );
    expect(data.usage).toEqual({ promptTokens: 1500, completionTokens: 60, cachedTokens: 1024 });
    expect(data.model).toBe('fake-model');
    expect(data.narrator).toBe('remote');
    expect(data.finishReason).toBe('stop');
    expect(data.accepted).toEqual([
      expect.objectContaining({ type: 'enter', id: 'mira', status: 'alive' }),
    ]);
    expect(data.rejected).toEqual([]);
    expect(data.latencyMs).toBeGreaterThanOrEqual(0);
    expect(data.contextManifest).toMatchObject({
      sections: expect.arrayContaining([{ label: 'narrator', tokens: expect.any(Number) }]),
      sha256: { system: expect.stringMatching(/^[0-9a-f]{64}$/), story: expect.any(String) },
      history: { included: 2, total: 2, oldest_truncated: false },
    });
    expect(JSON.stringify(data.contextManifest)).not.toContain('harbor wall');
    expect(narrated.metadata).toMatchObject({ actor: 'worker:context', attempt: 1 });
    expect(JSON.stringify(events)).not.toContain(API_KEY);

    const entries = await finishedStream(spec.harness, turnId);
    const names = entries.map((e) => e.event);
    expect(names[0]).toBe('player');
    expect(names[names.length - 1]).toBe('done');
    expect(names.slice(1, -1).every((n) => n === 'chunk')).toBe(true);
    const streamed = entries
      .filter((e) => e.event === 'chunk')
      .map((e) => (e.data as { text: string }).text)
      .join('');
    // The player watches the prose; the state block never reaches the stream.
    expect(streamed.trim()).toBe(data.action.text);
    expect(entries[entries.length - 1].data).toMatchObject({
      action: { id: data.action.id, text: data.action.text, type: 'ai' },
      turnId,
      version: narrated.version,
    });

    const [request] = spec.fake.requestsTo('/v1/chat/completions');
    expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request.body.model).toBe('fake-model');
    const [system, user] = request.body.messages as { role: string; content: string }[];
    const expected = await buildTurnContext(spec.harness.adventures, before, {
      defaultModel: 'default-model',
    });
    expect(system).toEqual({ role: 'system', content: expected.system });
    expect(user).toEqual({ role: 'user', content: `${expected.story}\n\n${CONTINUE_INSTRUCTION}` });
    const story = user.content;
    expect(story.indexOf('You stand on the harbor wall')).toBeLessThan(
      story.indexOf('> You climb the stairs to Mira.'),
    );
    expect(story).toContain('World Lore: Mira keeps the light.');
  });

  it('waits out a 429 for its Retry-After without spending an attempt, then narrates', async () => {
    spec.fake.enqueue(
      { status: 429, retryAfter: 1, errorMessage: 'Rate limit reached' },
      { text: 'The wind rises.' },
    );
    const adventureId = await createAdventure(spec.harness);
    const { turnId } = await act(spec.harness, adventureId, 'do', 'wait');

    await waitForTurnEnd(spec.harness, adventureId, turnId);
    const requests = spec.fake.requestsTo('/v1/chat/completions');
    expect(requests).toHaveLength(2);
    expect(requests[1].receivedAt - requests[0].receivedAt).toBeGreaterThanOrEqual(950);
    const events = await readEvents(spec.harness, adventureId);
    expect(typesOf(events)).toEqual(['AdventureCreated', 'PlayerActed', 'Narrated']);
    // Waiting out a 429 (every worker pauses with it) spends no attempt.
    expect(events[2].metadata).toMatchObject({ attempt: 1 });
    const names = (await finishedStream(spec.harness, turnId)).map((e) => e.event);
    expect(names[0]).toBe('player');
    expect(names[names.length - 1]).toBe('done');
  });

  it('records NarrationFailed after three server errors, and the adventure accepts a new action', async () => {
    spec.fake.enqueue({ status: 500 }, { status: 500 }, { status: 500 });
    const adventureId = await createAdventure(spec.harness);
    const { turnId } = await act(spec.harness, adventureId, 'do', 'ring the bell');

    await waitForTurnEnd(spec.harness, adventureId, turnId);
    expect(spec.fake.requestsTo('/v1/chat/completions')).toHaveLength(3);
    const events = await readEvents(spec.harness, adventureId);
    expect(typesOf(events)).toEqual(['AdventureCreated', 'PlayerActed', 'NarrationFailed']);
    expect(events[2].data).toMatchObject({
      turnId,
      attempts: 3,
      message: expect.stringContaining('internal error'),
    });
    // The player's words: never the endpoint (MODEL_BASE_URL) or the provider's own message.
    expect(JSON.stringify(events[2].data)).not.toContain('127.0.0.1');
    const entries = await finishedStream(spec.harness, turnId);
    expect(entries[entries.length - 1]).toMatchObject({
      event: 'error',
      data: { message: expect.stringContaining('internal error') },
    });

    const next = await act(spec.harness, adventureId, 'do', 'ring it again');
    await waitForTurnEnd(spec.harness, adventureId, next.turnId);
    expect(typesOf(await readEvents(spec.harness, adventureId)).slice(-2)).toEqual([
      'PlayerActed',
      'Narrated',
    ]);
  });

  it('retries a reply that is only a state block, then fails the turn', async () => {
    const block = { text: '```state\n{"type":"fact","text":"The lamp is dark."}\n```' };
    spec.fake.enqueue(block, block, block);
    const adventureId = await createAdventure(spec.harness);
    const { turnId } = await act(spec.harness, adventureId, 'do', 'look up');

    await waitForTurnEnd(spec.harness, adventureId, turnId);
    expect(spec.fake.requestsTo('/v1/chat/completions')).toHaveLength(3);
    const events = await readEvents(spec.harness, adventureId);
    expect(events[events.length - 1]).toMatchObject({
      type: 'NarrationFailed',
      data: { message: expect.stringContaining('only a state block') },
    });
  });

  it('retries a stream cut mid-way, resets the stream, and records one narration', async () => {
    spec.fake.enqueue(
      {
        text: 'The first attempt breaks off in the middle of a sentence.',
        chunks: 5,
        cutAfterChunks: 2,
      },
      { text: 'The second attempt tells the whole story.' },
    );
    const adventureId = await createAdventure(spec.harness);
    const { turnId } = await act(spec.harness, adventureId, 'do', 'listen');

    await waitForTurnEnd(spec.harness, adventureId, turnId);
    const events = await readEvents(spec.harness, adventureId);
    expect(typesOf(events)).toEqual(['AdventureCreated', 'PlayerActed', 'Narrated']);
    expect((events[2].data as NarratedData).action.text).toBe(
      'The second attempt tells the whole story.',
    );
    const entries = await finishedStream(spec.harness, turnId);
    const reset = entries.findIndex((e) => e.event === 'reset');
    expect(reset).toBeGreaterThan(1);
    const afterReset = entries
      .slice(reset + 1)
      .filter((e) => e.event === 'chunk')
      .map((e) => (e.data as { text: string }).text)
      .join('');
    expect(afterReset).toBe('The second attempt tells the whole story.');
  });

  it('does nothing for a redelivered job whose turn has finished', async () => {
    const adventureId = await createAdventure(spec.harness);
    const { turnId } = await act(spec.harness, adventureId, 'do', 'sit down');
    await waitForTurnEnd(spec.harness, adventureId, turnId);
    const before = await readEvents(spec.harness, adventureId);
    const requests = spec.fake.requests.length;

    const { jobId } = await spec.harness.producer.enqueue(
      JobName.NarrateTurn,
      { adventureId, turnId },
      { jobId: `narrate-${turnId}-again` },
    );
    const queue = spec.harness.producer.queue(QueueName.Narrate);
    for (let i = 0; i < 200 && (await queue.getJobState(jobId ?? '')) !== 'completed'; i++) {
      await sleep(25);
    }
    const job = await queue.getJob(jobId ?? '');
    expect(job?.returnvalue).toEqual({ status: 'skipped', reason: 'not-in-flight' });
    expect(await readEvents(spec.harness, adventureId)).toHaveLength(before.length);
    expect(spec.fake.requests.length).toBe(requests);
  });

  it('aborts the model stream when the turn is cancelled, and records nothing more', async () => {
    spec.fake.enqueue({
      text: 'A very slow story unfolds word by word. '.repeat(10),
      chunks: 40,
      delayMs: 100,
    });
    const adventureId = await createAdventure(spec.harness);
    const { turnId } = await act(spec.harness, adventureId, 'do', 'hesitate');
    const [request] = await spec.fake.waitForRequests(1);
    await sleep(200);

    await cancel(spec.harness, adventureId, turnId);

    for (let i = 0; i < 100 && request.endedAt === undefined; i++) await sleep(20);
    expect(request.aborted).toBe(true);
    await sleep(300);
    const events = await readEvents(spec.harness, adventureId);
    expect(typesOf(events)).toEqual(['AdventureCreated', 'PlayerActed', 'NarrationCancelled']);
    const entries = await spec.harness.stream.entries(turnId);
    expect(entries.map((e) => e.event)).not.toContain('done');
    expect(spec.fake.requests).toHaveLength(1);
  });
});
