import type { NarratedData } from '@chronicle/adventure';
import {
  act,
  createAdventure,
  finishedStream,
  readEvents,
  setUpNarrateSpec,
  startWorkerHarness,
  waitForTurnEnd,
  type WorkerHarness,
} from './testing/context-worker.harness';

let second: WorkerHarness | undefined;

// Declared before the set-up, so the second worker closes before the first.
afterAll(async () => {
  await second?.close();
});

const spec = setUpNarrateSpec();

describe('a context worker shutting down mid-turn', () => {
  it('stops within the bound, and the turn ends with exactly one narration', async () => {
    spec.fake.enqueue({
      text: 'A slow story, told one word at a time. '.repeat(8),
      chunks: 40,
      delayMs: 100,
    });
    spec.fake.setDefaultReply({ text: 'The story, told again in full.' });
    const adventureId = await createAdventure(spec.harness);
    const { turnId } = await act(spec.harness, adventureId, 'do', 'wait for the tide');
    await spec.fake.waitForRequests(1);
    second = await startWorkerHarness(spec.env, { sharing: spec.harness });

    const started = Date.now();
    await spec.harness.app.close();
    expect(Date.now() - started).toBeLessThan(Number(spec.harness.config.shutdownTimeoutMs));

    await waitForTurnEnd(second, adventureId, turnId);
    const events = await readEvents(second, adventureId);
    expect(events.map((e) => e.type)).toEqual(['AdventureCreated', 'PlayerActed', 'Narrated']);
    const entries = await finishedStream(second, turnId);
    const done = entries[entries.length - 1];
    expect(done.event).toBe('done');
    expect(done.data).toMatchObject({
      action: { text: (events[2].data as NarratedData).action.text },
    });
    if (spec.fake.requests.length > 1) {
      // Released rather than finished: the second worker started over, after a reset.
      expect(spec.fake.requests[0].aborted).toBe(true);
      expect(entries.map((e) => e.event)).toContain('reset');
    }
  });
});
