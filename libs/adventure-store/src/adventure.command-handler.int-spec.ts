import { randomUUID } from 'node:crypto';
import {
  adventureStreamId,
  createAdventureCommand,
  decide,
  narrationCommand,
  TurnInFlightError,
  type AdventureCommand,
  type AdventureState,
} from '@chronicle/adventure';
import { EventStoreRepository, SnapshotRepository } from '@chronicle/event-store';
import { createTestDatabase, type TestDatabase } from '@chronicle/testing';
import { sql } from 'kysely';
import { AdventureCommandHandler, countTokens } from './adventure.command-handler';

// The repository's shortcuts past the database: a load with nothing new shares the cached state,
// and a decision on a state the caller already holds is proven current by the append at its
// version, or made again on the head.

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

/** Decides `command` on the state it is given, and says which states it was given. */
function deciding(command: AdventureCommand, seen: AdventureState[]) {
  return (state: AdventureState) => {
    seen.push(state);
    return { events: decide(command, state, { countTokens }) };
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

  it('given the head as the known state, when handled, then it is decided once on that state', async () => {
    const repo = repository();
    const adventureId = await created(repo);
    const head = await repo.get(adventureId);
    const seen: AdventureState[] = [];
    const handled = await repo.handleWith(adventureId, meta, deciding(act(), seen), {
      state: head,
    });
    expect(seen).toEqual([head]);
    expect(seen[0]).toBe(head);
    expect(handled.state.version).toBe(head.version + 1);
  });

  it('given a known state another process has moved past, when handled, then it is decided again on the head', async () => {
    const mine = repository();
    const theirs = repository(); // another process
    const adventureId = await created(mine);
    const turnId = randomUUID();
    await mine.handle(adventureId, act(turnId), meta);
    const stale = await mine.get(adventureId); // the turn in flight
    await theirs.handle(adventureId, narrationCommand(turnId, randomUUID()), meta);

    // a refusal of the stale state (a turn in flight) is not the answer
    expect(() => decide(act(), stale, { countTokens })).toThrow(TurnInFlightError);
    const seen: AdventureState[] = [];
    const handled = await mine.handleWith(adventureId, meta, deciding(act(), seen), {
      state: stale,
    });
    expect(seen.map((state) => state.version)).toEqual([stale.version, stale.version + 1]);
    expect(handled.events.map((event) => event.version)).toEqual([stale.version + 2]);

    // a decision the stale state accepts, but the append at its version refuses
    const next = await theirs.get(adventureId);
    const narrating = (next.inFlight as { turnId: string }).turnId;
    await theirs.handle(adventureId, { type: 'CancelTurn', data: { turnId: narrating } }, meta);
    const retried: AdventureState[] = [];
    await expect(
      mine.handleWith(
        adventureId,
        meta,
        deciding(narrationCommand(narrating, randomUUID()), retried),
        {
          state: next,
        },
      ),
    ).rejects.toThrow(/not in flight|no turn in flight/i);
    expect(retried.map((state) => state.version)).toEqual([next.version, next.version + 1]);
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
