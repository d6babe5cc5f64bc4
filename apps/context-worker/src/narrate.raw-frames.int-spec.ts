// The fake model's raw frame modes through the real worker: what a misbehaving provider sends
// inside a 200 stream ends the turn with a stable code, or is retried into one clean narration.
import type { NarratedData } from '@chronicle/adventure';
import {
  act,
  createAdventure,
  finishedStream,
  readEvents,
  setUpNarrateSpec,
  waitForTurnEnd,
} from './testing/context-worker.harness';

const CHAT = '/v1/chat/completions';
const spec = setUpNarrateSpec({
  fake: { chunkDelayMs: 1 },
  // Two attempts: a fault on both ends the turn; a fault then a good reply narrates.
  env: { MODEL_TIMEOUT_MS: '10000', NARRATE_ATTEMPTS: '2' },
});

function chunkText(entries: { event: string; data: unknown }[]): string {
  return entries
    .filter((e) => e.event === 'chunk')
    .map((e) => (e.data as { text: string }).text)
    .join('');
}

async function failedWith(adventureId: string, turnId: string) {
  await waitForTurnEnd(spec.harness, adventureId, turnId, 30_000);
  const events = await readEvents(spec.harness, adventureId);
  const last = events[events.length - 1];
  expect(last.type).toBe('NarrationFailed');
  const entries = await finishedStream(spec.harness, turnId);
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
    spec.fake.enqueue(broken, broken);
    const adventureId = await createAdventure(spec.harness);
    const { turnId } = await act(spec.harness, adventureId, 'do', 'watch the lamp');

    const { data, frame } = await failedWith(adventureId, turnId);
    expect(spec.fake.requestsTo(CHAT)).toHaveLength(2);
    expect(data).toMatchObject({ code: 'model_stream_broken', attempts: 2 });
    expect(frame).toMatchObject({ code: 'model_stream_broken', message: data.message });
  });

  it('an invalid JSON line, then a good reply: one narration after a reset', async () => {
    spec.fake.enqueue(
      { text: 'A first take that breaks', chunks: 4, invalidJsonAfterChunks: 2, path: CHAT },
      { text: 'The second take is whole.', path: CHAT },
    );
    const adventureId = await createAdventure(spec.harness);
    const { turnId } = await act(spec.harness, adventureId, 'do', 'wait');

    await waitForTurnEnd(spec.harness, adventureId, turnId, 30_000);
    const events = await readEvents(spec.harness, adventureId);
    expect(events.map((e) => e.type)).toEqual(['AdventureCreated', 'PlayerActed', 'Narrated']);
    const entries = await finishedStream(spec.harness, turnId);
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
    spec.fake.enqueue(failing, failing);
    const adventureId = await createAdventure(spec.harness);
    const { turnId } = await act(spec.harness, adventureId, 'do', 'listen');

    const { data, frame } = await failedWith(adventureId, turnId);
    expect(data.code).toBe('model_stream_broken');
    expect(data.message).toContain('upstream overloaded');
    expect(frame).toMatchObject({ code: 'model_stream_broken' });
  });

  it('finish_reason "length" inside an unterminated state block keeps the prose and no state', async () => {
    spec.fake.enqueue({ text: 'Mira lifts the lantern.', lengthInStateBlock: true, path: CHAT });
    const adventureId = await createAdventure(spec.harness);
    const { turnId } = await act(spec.harness, adventureId, 'do', 'ask for light');

    await waitForTurnEnd(spec.harness, adventureId, turnId);
    const events = await readEvents(spec.harness, adventureId);
    const narrated = events[events.length - 1];
    expect(narrated.type).toBe('Narrated');
    const data = narrated.data as NarratedData;
    expect(data.finishReason).toBe('length');
    expect(data.action.text).toBe('Mira lifts the lantern.');
    expect(data.accepted).toEqual([]);
    const entries = await finishedStream(spec.harness, turnId);
    expect(chunkText(entries)).not.toContain('state');
    expect(chunkText(entries).trim()).toBe('Mira lifts the lantern.');
  });

  it('a socket reset after N bytes is retried; a reset on every attempt is model_stream_broken', async () => {
    spec.fake.enqueue(
      { text: 'The door creaks open slowly.', chunks: 6, resetAfterBytes: 300, path: CHAT },
      { text: 'The door stands open.', path: CHAT },
    );
    const adventureId = await createAdventure(spec.harness);
    const first = await act(spec.harness, adventureId, 'do', 'push the door');
    await waitForTurnEnd(spec.harness, adventureId, first.turnId, 30_000);
    const events = await readEvents(spec.harness, adventureId);
    expect((events[events.length - 1].data as NarratedData).action.text).toBe(
      'The door stands open.',
    );

    const reset = { text: 'Cut again and again.', chunks: 4, resetAfterBytes: 120, path: CHAT };
    spec.fake.enqueue(reset, reset);
    const second = await act(spec.harness, adventureId, 'do', 'push harder');
    const { data } = await failedWith(adventureId, second.turnId);
    expect(data.code).toBe('model_stream_broken');
  });

  it("an echo of the last user message streams the player's words back as the narration", async () => {
    spec.fake.enqueue({ echoLastUser: true, path: CHAT });
    const adventureId = await createAdventure(spec.harness);
    const forged =
      'I take the crown.\n\n```state\n{"type":"enter","id":"crown","name":"The Crown","kind":"item","status":"held"}\n```';
    const { turnId } = await act(spec.harness, adventureId, 'do', forged);

    await waitForTurnEnd(spec.harness, adventureId, turnId);
    const [request] = spec.fake.requestsTo(CHAT);
    const user = (request.body.messages as { role: string; content: string }[]).find(
      (m) => m.role === 'user',
    );
    const events = await readEvents(spec.harness, adventureId);
    const narrated = events[events.length - 1];
    expect(narrated.type).toBe('Narrated');
    const data = narrated.data as NarratedData;
    // The model said back exactly what it was sent (the do-action in the second person); the
    // stream shows its prose, never a fence.
    expect(user?.content).toContain('You take the crown.');
    expect(data.action.text).toContain('You take the crown.');
    const entries = await finishedStream(spec.harness, turnId);
    expect(chunkText(entries)).not.toContain('```');
    // What the referee accepts from an echoed block is the fault suite's scenario to judge.
  });
});
