// Two attempts at one turn, as after a worker lost its job's lock (blocked event loop, SIGSTOP)
// and another took the job over: the client's stream shows `reset` and then one attempt's text,
// the attempt that lost the fence stops its model call, and only one Narrated is recorded.
import type { NarratedData } from '@chronicle/adventure';
import {
  startFakeOpenAiServer,
  type FakeOpenAiServer,
} from '../../../test/support/fake-openai-server';
import { NarrateTurnUseCase, type NarrateTurnInput } from './narrate-turn.use-case';
import {
  actWithoutJob,
  createAdventure,
  readEvents,
  sleep,
  startWorkerHarness,
  type WorkerHarness,
} from './testing/context-worker.harness';

const CHAT = '/v1/chat/completions';
let fake: FakeOpenAiServer & { baseURL: string };
let harness: WorkerHarness;
let narrate: NarrateTurnUseCase;

beforeAll(async () => {
  fake = await startFakeOpenAiServer({ chunkDelayMs: 1 });
  harness = await startWorkerHarness({
    MODEL_BASE_URL: fake.baseURL,
    MODEL_API_KEY: 'sk-test-fencing-0123456789',
    // the reconciler stays out of these turns, which have no job on purpose
    RECONCILE_INTERVAL_MS: '600000',
  });
  narrate = harness.app.get(NarrateTurnUseCase);
});

afterAll(async () => {
  await harness?.close();
  await fake?.close();
});

beforeEach(() => fake.clear());

function attempt(adventureId: string, turnId: string, fence: string, n: number): NarrateTurnInput {
  return { adventureId, turnId, jobId: `narrate-${turnId}`, attempt: n, maxAttempts: 3, fence };
}

describe('fencing two attempts at one turn', () => {
  it('keeps the attempt that lost the fence out of the stream and stops its model call', async () => {
    fake.enqueue(
      { text: 'STALE take streaming slowly. '.repeat(4), chunks: 30, delayMs: 40, path: CHAT },
      { text: 'The fresh take, whole.', path: CHAT },
    );
    const adventureId = await createAdventure(harness);
    const { turnId } = await actWithoutJob(harness, adventureId, 'look out to sea');
    await harness.stream.publish(turnId, 'player', { action: null });

    const stale = narrate.execute(attempt(adventureId, turnId, 'lock-token-a', 1));
    const [first] = await fake.waitForRequests(1);
    await sleep(300); // the stale attempt has streamed some chunks
    const fresh = narrate.execute(attempt(adventureId, turnId, 'lock-token-b', 2));

    const [staleOutcome, freshOutcome] = await Promise.all([stale, fresh]);
    expect(staleOutcome).toEqual({ status: 'skipped', reason: 'fenced' });
    expect(freshOutcome).toMatchObject({ status: 'narrated' });
    for (let i = 0; i < 100 && first.endedAt === undefined; i++) await sleep(20);
    expect(first.aborted).toBe(true);

    const events = await readEvents(harness, adventureId);
    expect(events.filter((e) => e.type === 'Narrated')).toHaveLength(1);
    const entries = await harness.stream.entries(turnId);
    const names = entries.map((e) => e.event);
    const reset = names.lastIndexOf('reset');
    expect(names.slice(0, reset)).toContain('chunk'); // the stale take did stream before
    const after = entries.slice(reset + 1);
    const text = after
      .filter((e) => e.event === 'chunk')
      .map((e) => (e.data as { text: string }).text)
      .join('');
    expect(text).toBe('The fresh take, whole.');
    expect(text).not.toContain('STALE');
    expect(after[after.length - 1].event).toBe('done');
    expect((events[events.length - 1].data as NarratedData).action.text).toBe(text);
  });

  it('records one Narrated when two attempts finish at once', async () => {
    fake.enqueue({ text: 'Take one.', path: CHAT }, { text: 'Take two.', path: CHAT });
    const adventureId = await createAdventure(harness);
    const { turnId } = await actWithoutJob(harness, adventureId, 'wave');
    const outcomes = await Promise.all([
      narrate.execute(attempt(adventureId, turnId, 'token-1', 1)),
      narrate.execute(attempt(adventureId, turnId, 'token-2', 2)),
    ]);
    expect(outcomes.filter((o) => o.status === 'narrated')).toHaveLength(1);
    const events = await readEvents(harness, adventureId);
    expect(events.filter((e) => e.type === 'Narrated')).toHaveLength(1);
    const entries = await harness.stream.entries(turnId);
    const names = entries.map((e) => e.event);
    expect(names.filter((n) => n === 'done')).toHaveLength(1);
    const reset = names.lastIndexOf('reset');
    const text = entries
      .slice(reset + 1)
      .filter((e) => e.event === 'chunk')
      .map((e) => (e.data as { text: string }).text)
      .join('');
    expect(text).toBe((events[events.length - 1].data as NarratedData).action.text);
  });
});
