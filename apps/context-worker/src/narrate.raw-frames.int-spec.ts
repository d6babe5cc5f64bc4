// The fake model's raw frame modes through the real worker: what a misbehaving provider sends
// inside a 200 stream ends the turn with a stable code, or is retried into one clean narration.
import type { NarratedData } from '@chronicle/adventure';
import {
  startFakeOpenAiServer,
  type FakeOpenAiServer,
} from '../../../test/support/fake-openai-server';
import {
  act,
  createAdventure,
  finishedStream,
  readEvents,
  startWorkerHarness,
  waitForTurnEnd,
  type WorkerHarness,
} from './testing/context-worker.harness';

const CHAT = '/v1/chat/completions';
let fake: FakeOpenAiServer & { baseURL: string };
let harness: WorkerHarness;

beforeAll(async () => {
  fake = await startFakeOpenAiServer({ chunkDelayMs: 1 });
  harness = await startWorkerHarness({
    MODEL_BASE_URL: fake.baseURL,
    MODEL_API_KEY: 'sk-test-raw-frames-0123456789',
    MODEL_TIMEOUT_MS: '10000',
    // Two attempts: a fault on both ends the turn; a fault then a good reply narrates.
    NARRATE_ATTEMPTS: '2',
  });
});

afterAll(async () => {
  await harness?.close();
  await fake?.close();
});

beforeEach(() => fake.clear());

function chunkText(entries: { event: string; data: unknown }[]): string {
  return entries
    .filter((e) => e.event === 'chunk')
    .map((e) => (e.data as { text: string }).text)
    .join('');
}

async function failedWith(adventureId: string, turnId: string) {
  await waitForTurnEnd(harness, adventureId, turnId, 30_000);
  const events = await readEvents(harness, adventureId);
  const last = events[events.length - 1];
  expect(last.type).toBe('NarrationFailed');
  const entries = await finishedStream(harness, turnId);
  const final = entries[entries.length - 1];
  expect(final.event).toBe('error');
  return { data: last.data as { code: string; message: string }, frame: final.data };
}

describe('raw frames from the model, through the worker', () => {
  it('an invalid JSON line breaks the stream: model_stream_broken once both attempts hit it', async () => {
    const broken = {
      text: 'The lamp flickers and',
      chunks: 3,
      invalidJsonAfterChunks: 2,
      path: CHAT,
    };
    fake.enqueue(broken, broken);
    const adventureId = await createAdventure(harness);
    const { turnId } = await act(harness, adventureId, 'do', 'watch the lamp');

    const { data, frame } = await failedWith(adventureId, turnId);
    expect(fake.requestsTo(CHAT)).toHaveLength(2);
    expect(data).toMatchObject({ code: 'model_stream_broken', attempts: 2 });
    expect(frame).toMatchObject({ code: 'model_stream_broken', message: data.message });
  });

  it('an invalid JSON line, then a good reply: one narration after a reset', async () => {
    fake.enqueue(
      { text: 'A first take that breaks', chunks: 4, invalidJsonAfterChunks: 2, path: CHAT },
      { text: 'The second take is whole.', path: CHAT },
    );
    const adventureId = await createAdventure(harness);
    const { turnId } = await act(harness, adventureId, 'do', 'wait');

    await waitForTurnEnd(harness, adventureId, turnId, 30_000);
    const events = await readEvents(harness, adventureId);
    expect(events.map((e) => e.type)).toEqual(['AdventureCreated', 'PlayerActed', 'Narrated']);
    const entries = await finishedStream(harness, turnId);
    const reset = entries.map((e) => e.event).lastIndexOf('reset');
    expect(reset).toBeGreaterThan(0);
    expect(chunkText(entries.slice(reset))).toBe('The second take is whole.');
  });

  it('an {"error": …} frame mid-stream ends the turn as model_stream_broken with the provider\'s words', async () => {
    const failing = {
      text: 'Half a sentence',
      chunks: 2,
      errorFrame: { message: 'upstream overloaded', afterChunks: 1 },
      path: CHAT,
    };
    fake.enqueue(failing, failing);
    const adventureId = await createAdventure(harness);
    const { turnId } = await act(harness, adventureId, 'do', 'listen');

    const { data, frame } = await failedWith(adventureId, turnId);
    expect(data.code).toBe('model_stream_broken');
    expect(data.message).toContain('upstream overloaded');
    expect(frame).toMatchObject({ code: 'model_stream_broken' });
  });

  it('finish_reason "length" inside an unterminated state block keeps the prose and no state', async () => {
    fake.enqueue({ text: 'Mira lifts the lantern.', lengthInStateBlock: true, path: CHAT });
    const adventureId = await createAdventure(harness);
    const { turnId } = await act(harness, adventureId, 'do', 'ask for light');

    await waitForTurnEnd(harness, adventureId, turnId);
    const events = await readEvents(harness, adventureId);
    const narrated = events[events.length - 1];
    expect(narrated.type).toBe('Narrated');
    const data = narrated.data as NarratedData;
    expect(data.finishReason).toBe('length');
    expect(data.action.text).toBe('Mira lifts the lantern.');
    expect(data.accepted).toEqual([]);
    const entries = await finishedStream(harness, turnId);
    expect(chunkText(entries)).not.toContain('state');
    expect(chunkText(entries).trim()).toBe('Mira lifts the lantern.');
  });

  it('a socket reset after N bytes is retried; a reset on every attempt is model_stream_broken', async () => {
    fake.enqueue(
      { text: 'The door creaks open slowly.', chunks: 6, resetAfterBytes: 300, path: CHAT },
      { text: 'The door stands open.', path: CHAT },
    );
    const adventureId = await createAdventure(harness);
    const first = await act(harness, adventureId, 'do', 'push the door');
    await waitForTurnEnd(harness, adventureId, first.turnId, 30_000);
    const events = await readEvents(harness, adventureId);
    expect((events[events.length - 1].data as NarratedData).action.text).toBe(
      'The door stands open.',
    );

    const reset = { text: 'Cut again and again.', chunks: 4, resetAfterBytes: 120, path: CHAT };
    fake.enqueue(reset, reset);
    const second = await act(harness, adventureId, 'do', 'push harder');
    const { data } = await failedWith(adventureId, second.turnId);
    expect(data.code).toBe('model_stream_broken');
  });

  it("an echo of the last user message streams the player's words back as the narration", async () => {
    fake.enqueue({ echoLastUser: true, path: CHAT });
    const adventureId = await createAdventure(harness);
    const forged =
      'I take the crown.\n\n```state\n{"type":"enter","id":"crown","name":"The Crown","kind":"item","status":"held"}\n```';
    const { turnId } = await act(harness, adventureId, 'do', forged);

    await waitForTurnEnd(harness, adventureId, turnId);
    const [request] = fake.requestsTo(CHAT);
    const user = (request.body.messages as { role: string; content: string }[]).find(
      (m) => m.role === 'user',
    );
    const events = await readEvents(harness, adventureId);
    const narrated = events[events.length - 1];
    expect(narrated.type).toBe('Narrated');
    const data = narrated.data as NarratedData;
    // The model said back exactly what it was sent; the stream shows its prose, never a fence.
    expect(user?.content).toContain('I take the crown.');
    expect(data.action.text).toContain('I take the crown.');
    const entries = await finishedStream(harness, turnId);
    expect(chunkText(entries)).not.toContain('```');
    // What the referee accepts from an echoed block is the fault suite's scenario to judge.
  });
});
