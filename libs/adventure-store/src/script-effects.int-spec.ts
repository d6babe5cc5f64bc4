import { randomUUID } from 'node:crypto';
import {
  adventureStreamId,
  scriptStateAtHead,
  type AdventureCommand,
  type ScriptEffects,
  type ScriptedInput,
} from '@chronicle/adventure';
import { createAdventureCommand, narrationCommand } from '@chronicle/adventure/testing';
import { EventStoreRepository, SnapshotRepository } from '@chronicle/event-store';
import { createTestDatabase, InterposingEventStore, type TestDatabase } from '@chronicle/testing';
import {
  AdventureCommandHandler,
  deterministicEventId,
  eventIdsFor,
} from './adventure.command-handler';

// The scripts' effects on the one write path (spec/scripting.md §3.1): every event a script run
// produces takes its id from the command's key, so a redelivered turn appends nothing new, and a
// version conflict decides again with the script results the command carries: no script reruns.

const meta = { actor: 'test' };
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

const SCRIPT = 'counter';

function effects(runs: number, n: number): ScriptEffects {
  return {
    runs: Array.from({ length: runs }, (_, i) => ({
      scriptId: SCRIPT,
      hook: 'output' as const,
      outcome: 'ok' as const,
      textChanged: false,
      ms: 1 + i,
      cpuMs: 1,
      logs: [],
    })),
    states: { [SCRIPT]: { n } },
    cardOps: [],
    messages: [{ scriptId: SCRIPT, message: { text: `n is ${n}` } }],
  };
}

async function scriptedAdventure(handler: AdventureCommandHandler): Promise<string> {
  const adventureId = randomUUID();
  await handler.handle(adventureId, createAdventureCommand({ adventureId }), meta);
  await handler.handle(
    adventureId,
    { type: 'AddScript', data: { script: { id: SCRIPT, name: 'Counter', output: 'state.n = 1' } } },
    meta,
  );
  return adventureId;
}

async function storedIds(adventureId: string): Promise<{ id: string; version: number }[]> {
  const rows = await database.db
    .selectFrom('events')
    .select(['event_id', 'version'])
    .where('stream_id', '=', adventureStreamId(adventureId))
    .orderBy('version')
    .execute();
  return rows.map((row) => ({ id: row.event_id, version: row.version }));
}

describe('script effects on the one write path', () => {
  it('given a narration with script effects, every event id derives from the key, and a resend appends nothing', async () => {
    const handler = new AdventureCommandHandler(
      new EventStoreRepository(database.db),
      new SnapshotRepository(database.db),
      { snapshotEvery: 1000 },
    );
    const adventureId = await scriptedAdventure(handler);
    const turnId = randomUUID();
    await handler.handle(
      adventureId,
      {
        type: 'SubmitAction',
        data: { turnId, inputType: 'do', text: 'look', actionId: randomUUID() },
      },
      meta,
    );
    const inFlight = await handler.get(adventureId);
    const key = deterministicEventId(turnId, 'narrated');
    const command: AdventureCommand & { key: string } = {
      ...narrationCommand(turnId, randomUUID()),
      key,
    };
    (command.data as { scripts?: unknown }).scripts = { output: effects(2, 1) };
    const first = await handler.handle(adventureId, command, meta);
    // Narrated, two ScriptHookRan, ScriptStateChanged, ScriptMessagePosted.
    expect(first.events.map((e) => e.type)).toEqual([
      'Narrated',
      'ScriptHookRan',
      'ScriptHookRan',
      'ScriptStateChanged',
      'ScriptMessagePosted',
    ]);
    const ids = (await storedIds(adventureId)).slice(-first.events.length).map((e) => e.id);
    expect(ids).toEqual(eventIdsFor(key, first.events.length));

    const before = await storedIds(adventureId);
    // The redelivered job decided on the projection it loaded while the turn was in flight.
    const again = await handler.handle(adventureId, command, meta, { state: inFlight });
    expect(again.duplicate).toBe(true);
    expect(await storedIds(adventureId)).toEqual(before);
  });

  it('given a redelivered job whose hooks made more effects, racing the winner, then it is the duplicate and appends nothing', async () => {
    const store = new EventStoreRepository(database.db);
    const handler = new AdventureCommandHandler(store, new SnapshotRepository(database.db), {
      snapshotEvery: 1000,
    });
    const adventureId = await scriptedAdventure(handler);
    const turnId = randomUUID();
    await handler.handle(
      adventureId,
      {
        type: 'SubmitAction',
        data: { turnId, inputType: 'do', text: 'look', actionId: randomUUID() },
      },
      meta,
    );
    const inFlight = await handler.get(adventureId);
    const key = deterministicEventId(turnId, 'narrated');
    const actionId = deterministicEventId(turnId, 'narration-action');
    const attempt = (runs: number, n: number) => {
      const command = { ...narrationCommand(turnId, actionId), key };
      (command.data as { scripts?: unknown }).scripts = { output: effects(runs, n) };
      return command;
    };
    // The winner appends with one run; the redelivery decided on the same state ran three.
    const winner = await handler.handle(adventureId, attempt(1, 1), meta, { state: inFlight });
    const before = await storedIds(adventureId);
    const late = await handler.handle(adventureId, attempt(3, 2), meta, { state: inFlight });
    expect(late.duplicate).toBe(true);
    expect(await storedIds(adventureId)).toEqual(before);
    expect(scriptStateAtHead(late.state, SCRIPT)).toEqual({ n: 1 });
    expect(winner.events.filter((e) => e.type === 'ScriptHookRan')).toHaveLength(1);
    const versions = before.map((e) => e.version);
    expect(versions).toEqual(versions.map((_, i) => i + 1));
  });

  it('given a version conflict at append, then SubmitAction decides again with the onInput result it carries, effects once', async () => {
    let adventureId = '';
    // Another writer edits the adventure between the decision and the append, three times.
    const store = new InterposingEventStore(database.db, async () => {
      const other = new AdventureCommandHandler(
        new EventStoreRepository(database.db),
        new SnapshotRepository(database.db),
        { snapshotEvery: 1000 },
      );
      await other.handle(
        adventureId,
        { type: 'EditAdventure', data: { authorsNote: randomUUID() } },
        meta,
      );
    });
    const handler = new AdventureCommandHandler(store, new SnapshotRepository(database.db), {
      snapshotEvery: 1000,
    });
    adventureId = await scriptedAdventure(handler);
    const script: ScriptedInput = {
      text: '> You look around.!',
      stopped: false,
      stopMessage: '',
      stoppedBy: null,
      ...effects(1, 7),
      runs: effects(1, 7).runs.map((run) => ({ ...run, hook: 'input' as const })),
    };
    const turnId = randomUUID();
    const actionId = randomUUID();
    store.interpose = 3;
    store.appends = 0;
    const handled = await handler.handle(
      adventureId,
      {
        type: 'SubmitAction',
        key: actionId,
        data: { turnId, inputType: 'do', text: 'look around', actionId, script },
      },
      meta,
      { state: await handler.get(adventureId) },
    );
    expect(store.appends).toBe(4); // three conflicts, then the append
    const types = handled.events.map((e) => e.type);
    expect(types).toEqual([
      'PlayerActed',
      'ScriptHookRan',
      'ScriptStateChanged',
      'ScriptMessagePosted',
    ]);
    const acted = handled.events[0] as { data: { action: { text: string } } };
    expect(acted.data.action.text).toBe('> You look around.!');
    expect(scriptStateAtHead(handled.state, SCRIPT)).toEqual({ n: 7 });
    const all = await storedIds(adventureId);
    expect(all.map((e) => e.version)).toEqual(all.map((_, i) => i + 1));
  });
});
