// No turn stays in flight: the final failure of a turn whose database went away while the model
// answered is recorded once Postgres is back (tried again with backoff), and a turn whose
// database is away when its job starts waits without spending an attempt; a narration the model
// finished while the database was away is recorded after it without a second model call.
import type { NarratedData } from '@chronicle/adventure';
import { withAdminClient } from '@chronicle/testing';
import { FinishedNarrationStore } from './finished-narration.store';
import {
  act,
  createAdventure,
  finishedStream,
  readEvents,
  sleep,
  setUpNarrateSpec,
  waitForTurnEnd,
} from './testing/context-worker.harness';

const CHAT = '/v1/chat/completions';

/** The database refuses new connections and drops the open ones: to the worker it is gone. */
async function takeDatabaseAway(name: string): Promise<void> {
  await withAdminClient(async (client) => {
    await client.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
    await client.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [name],
    );
  });
}

async function bringDatabaseBack(name: string): Promise<void> {
  await withAdminClient((client) =>
    client.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`),
  );
}

// Declared before the set-up, so it runs before the worker closes: its pool must find the
// database again.
afterAll(async () => {
  await bringDatabaseBack(spec.harness.database.name).catch(() => undefined);
});

const spec = setUpNarrateSpec({
  fake: { chunkDelayMs: 1 },
  // The reconciler must not be what saves these turns: the worker itself has to.
  env: { RECONCILE_INTERVAL_MS: '600000' },
});

describe('a turn whose database goes away', () => {
  it('records the final failure once Postgres is back, with its code', async () => {
    // 401 is final at once; the answer comes while the database is away
    spec.fake.enqueue({ status: 401, hangMs: 800, path: CHAT });
    const adventureId = await createAdventure(spec.harness);
    const { turnId } = await act(spec.harness, adventureId, 'do', 'knock');
    await spec.fake.waitForRequests(1);
    await takeDatabaseAway(spec.harness.database.name);
    await sleep(2_500); // the model has answered; recording it has failed at least twice
    await bringDatabaseBack(spec.harness.database.name);

    await waitForTurnEnd(spec.harness, adventureId, turnId, 20_000);
    const events = await readEvents(spec.harness, adventureId);
    expect(events.map((e) => e.type)).toEqual([
      'AdventureCreated',
      'PlayerActed',
      'NarrationFailed',
    ]);
    expect(events[2].data).toMatchObject({ turnId, code: 'model_unauthorized', attempts: 1 });
    const entries = await finishedStream(spec.harness, turnId);
    expect(entries[entries.length - 1]).toMatchObject({
      event: 'error',
      data: { code: 'model_unauthorized' },
    });
    expect(spec.fake.requestsTo(CHAT)).toHaveLength(1);
  });

  it('waits while Postgres is away without spending an attempt, then records the narration the model had finished', async () => {
    // the first answer arrives while the database is away, so its Narrated cannot be appended
    spec.fake.enqueue({ text: 'Kept through the outage.', hangMs: 800, path: CHAT });
    spec.fake.setDefaultReply({ text: 'A second take nobody should pay for.' });
    const adventureId = await createAdventure(spec.harness);
    const { turnId } = await act(spec.harness, adventureId, 'do', 'knock again');
    await spec.fake.waitForRequests(1);
    await takeDatabaseAway(spec.harness.database.name);
    await sleep(5_000);
    await bringDatabaseBack(spec.harness.database.name);

    await waitForTurnEnd(spec.harness, adventureId, turnId, 20_000);
    const events = await readEvents(spec.harness, adventureId);
    const last = events[events.length - 1];
    expect(last.type).toBe('Narrated');
    // deferred, not failed: the run that narrated is still the job's first attempt
    expect(last.metadata).toMatchObject({ attempt: 1 });
    // the model was called once: the run after the outage recorded the finished reply
    expect((last.data as NarratedData).action.text).toBe('Kept through the outage.');
    expect(spec.fake.requestsTo(CHAT)).toHaveLength(1);
    // the screen: the first run's chunks, a reset, then the kept narration once, and `done`
    const entries = await finishedStream(spec.harness, turnId);
    const afterReset = entries.slice(entries.map((e) => e.event).lastIndexOf('reset') + 1);
    expect(
      afterReset
        .filter((e) => e.event === 'chunk')
        .map((e) => (e.data as { text: string }).text)
        .join(''),
    ).toBe('Kept through the outage.');
    expect(afterReset.at(-1)).toMatchObject({ event: 'done' });
    const kept = await spec.harness.stream
      .entries(turnId)
      .then(() => spec.harness.app.get(FinishedNarrationStore).find(turnId, 2));
    expect(kept).toBeNull();
  });
});
