import { randomUUID } from 'node:crypto';
import {
  adventureStreamId,
  decide,
  TurnInFlightError,
  type AdventureCommand,
  type AdventureState,
} from '@chronicle/adventure';
import { createAdventureCommand, narrationCommand } from '@chronicle/adventure/testing';
import { EventStoreRepository, SnapshotRepository, type StoredEvent } from '@chronicle/event-store';
import { createTestDatabase, type TestDatabase } from '@chronicle/testing';
import { sql } from 'kysely';
import { AdventureCommandHandler } from './adventure.command-handler';
import { countTokens } from './adventure.decide';

// The handler's shortcuts past the database: a load with nothing new shares the cached state,
// and a decision on a state the caller already holds is proven current by the append at its
// version, or made again on the head.

/** The event store, counting the reads of a stream (each load of a state reads one). */
class CountingEventStore extends EventStoreRepository {
  reads = 0;
  override readStream(
    ...args: Parameters<EventStoreRepository['readStream']>
  ): Promise<StoredEvent[]> {
    this.reads++;
    return super.readStream(...args);
  }
}

const meta = { actor: 'test' };
let database: TestDatabase;
let events: EventStoreRepository;
let snapshots: SnapshotRepository;

beforeAll(async () => {
  database = await createTestDatabase();
  events = new EventStoreRepository(database.db);
  snapshots = new SnapshotRepository(database.db);
});
afterAll(() => database.drop());

const repository = () => new AdventureCommandHandler(events, snapshots, { snapshotEvery: 50 });

function act(turnId = randomUUID()): AdventureCommand {
  return {
    type: 'SubmitAction',
    data: { turnId, inputType: 'do', text: 'look around', actionId: randomUUID() },
  };
}

async function created(repo: AdventureCommandHandler): Promise<string> {
  const adventureId = randomUUID();
  await repo.handle(adventureId, createAdventureCommand({ adventureId }), meta);
  return adventureId;
}

describe('AdventureCommandHandler', () => {
  it('given nothing new in the log, when loaded again, then the cached state itself is returned', async () => {
    const repo = repository();
    const adventureId = await created(repo);
    const first = await repo.get(adventureId);
    expect(await repo.get(adventureId)).toBe(first);
    await repo.handle(adventureId, act(), meta);
    const after = await repo.get(adventureId);
    expect(after).not.toBe(first);
    expect(after.version).toBe(first.version + 1);
  });

  it('given the head as the known state, when handled, then it is decided on that state without a load', async () => {
    const counting = new CountingEventStore(database.db);
    const repo = new AdventureCommandHandler(counting, snapshots, { snapshotEvery: 50 });
    const adventureId = await created(repo);
    const head = await repo.get(adventureId);
    counting.reads = 0;
    const handled = await repo.handle(adventureId, act(), meta, { state: head });
    expect(counting.reads).toBe(0);
    expect(handled.state.version).toBe(head.version + 1);
  });

  it('given a known state another process has moved past, when handled, then it is decided again on the head', async () => {
    const mine = repository();
    const theirs = repository(); // another process
    const adventureId = await created(mine);
    const turnId = randomUUID();
    await mine.handle(adventureId, act(turnId), meta);
    const stale: AdventureState = await mine.get(adventureId); // the turn in flight
    await theirs.handle(adventureId, narrationCommand(turnId, randomUUID()), meta);

    // a refusal of the stale state (a turn in flight) is not the answer
    expect(() => decide(act(), stale, { countTokens })).toThrow(TurnInFlightError);
    const handled = await mine.handle(adventureId, act(), meta, { state: stale });
    expect(handled.events.map((event) => event.version)).toEqual([stale.version + 2]);

    // a decision the stale state accepts, but the append at its version refuses: decided again
    // on the head, which refuses it, and nothing is appended
    const next = await theirs.get(adventureId);
    const narrating = (next.inFlight as { turnId: string }).turnId;
    await theirs.handle(adventureId, { type: 'CancelTurn', data: { turnId: narrating } }, meta);
    await expect(
      mine.handle(adventureId, narrationCommand(narrating, randomUUID()), meta, { state: next }),
    ).rejects.toThrow(/not in flight|no turn in flight/i);
    expect((await theirs.get(adventureId)).version).toBe(next.version + 1);
  });

  it("given the canon edited while the model wrote, when the worker's narration is handled on the state it loaded, then the reply is judged on the head's canon", async () => {
    const worker = repository();
    const player = repository(); // the API, another process
    const adventureId = await created(worker);
    const first = randomUUID();
    await worker.handle(adventureId, act(first), meta);
    const mira = { type: 'enter', id: 'mira', name: 'Mira', kind: 'character', status: 'alive' };
    await worker.handle(
      adventureId,
      narrationCommand(first, randomUUID(), { reported: [mira] }),
      meta,
    );
    const turnId = randomUUID();
    await worker.handle(adventureId, act(turnId), meta);
    const loaded = await worker.get(adventureId); // the narrate job's projection
    const asleep = { type: 'status', id: 'mira', to: 'asleep' };
    const command = narrationCommand(turnId, randomUUID(), { reported: [asleep] });
    expect(decide(command, loaded, { countTokens })[0]).toMatchObject({
      data: { accepted: [asleep] },
    });

    // The player forbids it while the model writes: the worker's append at its version loses.
    await player.handle(
      adventureId,
      {
        type: 'EditAdventure',
        data: { canon: { rules: [], forbiddenStatusChanges: [{ from: 'alive', to: 'asleep' }] } },
      },
      meta,
    );
    const handled = await worker.handle(adventureId, command, meta, { state: loaded });
    expect(handled.events[0]).toMatchObject({
      type: 'Narrated',
      version: loaded.version + 2,
      data: { accepted: [], rejected: [expect.objectContaining({ line: JSON.stringify(asleep) })] },
    });
    expect(handled.state.narrative.entities.mira?.status).toBe('alive');
  });

  it('given a command with a key, when it is handled twice, then it is appended once and the second answer is the duplicate', async () => {
    const repo = repository();
    const adventureId = await created(repo);
    const before = await repo.get(adventureId);
    const command = { ...act(), key: randomUUID() };
    const first = await repo.handle(adventureId, command, meta);
    // another process, deciding on the state before the first append, as a resend racing it does
    const again = await repository().handle(adventureId, command, meta, { state: before });
    expect(first.events).toHaveLength(1);
    expect(again).toMatchObject({ duplicate: true, events: [] });
    expect(again.state.version).toBe(first.state.version);
  });

  it('given texts this process appended or folded, when the window asks for them, then the log is not read again', async () => {
    const mine = repository();
    const theirs = repository(); // another process
    const adventureId = await created(mine);
    const turnId = randomUUID();
    const action = act(turnId);
    await mine.handle(adventureId, action, meta);
    await theirs.handle(adventureId, narrationCommand(turnId, randomUUID()), meta);
    const head = await mine.get(adventureId); // folds their narration onto the cached state
    const newest = head.path.slice(-2);
    const before = await theirs.readActionTexts(adventureId, newest);

    // The stored texts change behind the processes' backs (never in a real log: it is only how a
    // test can tell a read of the log from one of memory).
    await database.db
      .updateTable('events')
      .set({ data: sql`jsonb_set(data, '{action,text}', '"rewritten"')` })
      .where('stream_id', '=', adventureStreamId(adventureId))
      .where('type', 'in', ['PlayerActed', 'Narrated'])
      .execute();

    expect(await mine.readActionTexts(adventureId, newest)).toEqual(before);
    expect(await repository().readActionTexts(adventureId, newest)).toEqual([
      'rewritten',
      'rewritten',
    ]);
  });
});

describe('AdventureCommandHandler: a turn-starting key with its request fingerprint', () => {
  function keyed(key: string, text = 'look around'): AdventureCommand & { key: string } {
    return {
      type: 'SubmitAction',
      key,
      data: { turnId: randomUUID(), inputType: 'do', text, actionId: key },
    };
  }

  it('given a turn started under a key, when the same request comes again, in flight or finished, then the original event answers and nothing is appended', async () => {
    const repo = repository();
    const adventureId = await created(repo);
    const key = randomUUID();
    const first = await repo.handle(adventureId, keyed(key), meta, { fingerprint: 'fp' });
    expect(first.events.map((e) => e.type)).toEqual(['PlayerActed']);

    const again = await repo.handle(adventureId, keyed(key), meta, { fingerprint: 'fp' });
    expect(again).toMatchObject({ duplicate: true, events: [], original: first.events[0] });

    const turnId = (first.events[0].data as { turnId: string }).turnId;
    await repo.handle(adventureId, narrationCommand(turnId, randomUUID()), meta);
    const afterDone = await repo.handle(adventureId, keyed(key), meta, { fingerprint: 'fp' });
    expect(afterDone.original).toEqual(first.events[0]);
    const log = await events.readStream(adventureStreamId(adventureId));
    expect(log.filter((e) => e.type === 'PlayerActed')).toHaveLength(1);
    expect(log.find((e) => e.id === key)?.metadata).toMatchObject({ requestFingerprint: 'fp' });
  });

  it('given a turn started under a key, when another request comes under it, then it is a 422 naming the first', async () => {
    const repo = repository();
    const adventureId = await created(repo);
    const key = randomUUID();
    await repo.handle(adventureId, keyed(key), meta, { fingerprint: 'fp-1' });
    await expect(
      repo.handle(adventureId, keyed(key, 'run'), meta, { fingerprint: 'fp-2' }),
    ).rejects.toMatchObject({
      kind: 'unprocessable',
      message: expect.stringContaining(`id ${key} was already used for a different request`),
    });
  });

  it('given a copy of the request that won the race, when decided on the state before it, then the original answers', async () => {
    const repo = repository();
    const adventureId = await created(repo);
    const before = await repo.get(adventureId);
    const key = randomUUID();
    const command = keyed(key);
    const won = await repository().handle(adventureId, command, meta, { fingerprint: 'fp' });
    const lost = await repo.handle(adventureId, command, meta, {
      fingerprint: 'fp',
      state: before,
    });
    expect(lost).toMatchObject({ duplicate: true, original: won.events[0] });
  });
});
