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

let fake: FakeOpenAiServer & { baseURL: string };
let first: WorkerHarness;
let second: WorkerHarness | undefined;

const env = () => ({ MODEL_BASE_URL: fake.baseURL, MODEL_API_KEY: 'sk-test-shutdown-key' });

beforeAll(async () => {
  fake = await startFakeOpenAiServer();
  first = await startWorkerHarness(env());
});

afterAll(async () => {
  await second?.close();
  await first?.close();
  await fake?.close();
});

describe('a context worker shutting down mid-turn', () => {
  it('stops within the bound, and the turn ends with exactly one narration', async () => {
    fake.enqueue({
      text: 'A slow story, told one word at a time. '.repeat(8),
      chunks: 40,
      delayMs: 100,
    });
    fake.setDefaultReply({ text: 'The story, told again in full.' });
    const adventureId = await createAdventure(first);
    const { turnId } = await act(first, adventureId, 'do', 'wait for the tide');
    await fake.waitForRequests(1);
    second = await startWorkerHarness(env(), { sharing: first });

    const started = Date.now();
    await first.app.close();
    expect(Date.now() - started).toBeLessThan(Number(first.config.shutdownTimeoutMs));

    await waitForTurnEnd(second, adventureId, turnId);
    const events = await readEvents(second, adventureId);
    expect(events.map((e) => e.type)).toEqual(['AdventureCreated', 'PlayerActed', 'Narrated']);
    const entries = await finishedStream(second, turnId);
    const done = entries[entries.length - 1];
    expect(done.event).toBe('done');
    expect(done.data).toMatchObject({
      action: { text: (events[2].data as NarratedData).action.text },
    });
    if (fake.requests.length > 1) {
      // Released rather than finished: the second worker started over, after a reset.
      expect(fake.requests[0].aborted).toBe(true);
      expect(entries.map((e) => e.event)).toContain('reset');
    }
  });
});
