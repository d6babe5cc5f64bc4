// Two attempts at one turn, as after a worker lost its job's lock (blocked event loop, SIGSTOP)
// and another took the job over: the client's stream shows `reset` and then one attempt's text,
// the attempt that lost the fence writes nothing more to it, and only one Narrated is recorded.
import type { NarratedData } from '@chronicle/adventure';
import { NarrateTurnUseCase, type NarrateTurnInput } from './narrate-turn.use-case';
import {
  actWithoutJob,
  createAdventure,
  readEvents,
  sleep,
  setUpNarrateSpec,
} from './testing/context-worker.harness';

const CHAT = '/v1/chat/completions';
const spec = setUpNarrateSpec({
  fake: { chunkDelayMs: 1 },
  // the reconciler stays out of these turns, which have no job on purpose
  env: { RECONCILE_INTERVAL_MS: '600000' },
});
let narrate: NarrateTurnUseCase;

beforeAll(() => {
  narrate = spec.harness.app.get(NarrateTurnUseCase);
});

function attempt(adventureId: string, turnId: string, fence: string, n: number): NarrateTurnInput {
  return { adventureId, turnId, jobId: `narrate-${turnId}`, attempt: n, maxAttempts: 3, fence };
}

describe('fencing two attempts at one turn', () => {
  it('keeps the attempt that lost the fence out of the stream; the first to finish wins the log', async () => {
    spec.fake.enqueue(
      { text: 'STALE take streaming slowly. '.repeat(4), chunks: 30, delayMs: 40, path: CHAT },
      { text: 'The fresh take, whole.', path: CHAT },
    );
    const adventureId = await createAdventure(spec.harness);
    const { turnId } = await actWithoutJob(spec.harness, adventureId, 'look out to sea');
    await spec.harness.stream.publish(turnId, 'player', { action: null });

    const stale = narrate.execute(attempt(adventureId, turnId, 'lock-token-a', 1));
    const [first] = await spec.fake.waitForRequests(1);
    await sleep(300); // the stale attempt has streamed some chunks
    const fresh = narrate.execute(attempt(adventureId, turnId, 'lock-token-b', 2));

    const [staleOutcome, freshOutcome] = await Promise.all([stale, fresh]);
    // the fresh take finished first; the stale one, still narrating quietly, found the turn done
    expect(freshOutcome).toMatchObject({ status: 'narrated' });
    // the stale one's append is a duplicate of the fresh one's event ids, or finds it done
    expect(['narrated', 'skipped']).toContain(staleOutcome.status);
    expect(first.endedAt).toBeDefined();

    const events = await readEvents(spec.harness, adventureId);
    expect(events.filter((e) => e.type === 'Narrated')).toHaveLength(1);
    const entries = await spec.harness.stream.entries(turnId);
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

  it("gives the stream the fenced-out attempt's whole text when its Narrated wins the log", async () => {
    spec.fake.enqueue(
      { text: 'The patient first take, told in full.', chunks: 10, delayMs: 60, path: CHAT },
      // the attempt that took over is stuck: its model has not answered when the first finishes
      { text: 'Never heard.', hangMs: 3_000, path: CHAT },
    );
    const adventureId = await createAdventure(spec.harness);
    const { turnId } = await actWithoutJob(spec.harness, adventureId, 'wait for the tide');
    await spec.harness.stream.publish(turnId, 'player', { action: null });

    const first = narrate.execute(attempt(adventureId, turnId, 'lock-token-c', 1));
    await spec.fake.waitForRequests(1);
    await sleep(200);
    const second = narrate.execute(attempt(adventureId, turnId, 'lock-token-d', 2));
    const [firstOutcome, secondOutcome] = await Promise.all([first, second]);
    expect(firstOutcome).toMatchObject({ status: 'narrated' });
    expect(['narrated', 'skipped']).toContain(secondOutcome.status);

    const events = await readEvents(spec.harness, adventureId);
    expect(events.filter((e) => e.type === 'Narrated')).toHaveLength(1);
    const entries = await spec.harness.stream.entries(turnId);
    const names = entries.map((e) => e.event);
    const reset = names.lastIndexOf('reset');
    const after = entries.slice(reset + 1);
    expect(after.map((e) => e.event)).toEqual(['chunk', 'done']);
    expect((after[0].data as { text: string }).text).toBe('The patient first take, told in full.');
  });

  it('records one Narrated when two attempts finish at once', async () => {
    spec.fake.enqueue({ text: 'Take one.', path: CHAT }, { text: 'Take two.', path: CHAT });
    const adventureId = await createAdventure(spec.harness);
    const { turnId } = await actWithoutJob(spec.harness, adventureId, 'wave');
    const outcomes = await Promise.all([
      narrate.execute(attempt(adventureId, turnId, 'token-1', 1)),
      narrate.execute(attempt(adventureId, turnId, 'token-2', 2)),
    ]);
    // both may report narrated (the second append is a duplicate of the first's event ids)
    expect(outcomes.every((o) => o.status === 'narrated' || o.status === 'skipped')).toBe(true);
    const events = await readEvents(spec.harness, adventureId);
    expect(events.filter((e) => e.type === 'Narrated')).toHaveLength(1);
    const entries = await spec.harness.stream.entries(turnId);
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
