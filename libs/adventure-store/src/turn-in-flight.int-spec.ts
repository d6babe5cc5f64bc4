import { randomUUID } from 'node:crypto';
import { adventureStreamId, type AdventureCommand, type ScriptEffects } from '@chronicle/adventure';
import { createAdventureCommand, narrationCommand } from '@chronicle/adventure/testing';
import { EventStoreRepository, SnapshotRepository } from '@chronicle/event-store';
import { createTestDatabase, type TestDatabase } from '@chronicle/testing';
import { AdventureCommandHandler } from './adventure.command-handler';

// The reconciler finds the turns whose jobs Redis lost in turns_in_flight: a turn is there from
// the event that starts it to the event that ends it, whichever event that is. A turn left
// behind is re-enqueued for ever and, once enough of them pile up, hides live turns.

const meta = { actor: 'test' };
let database: TestDatabase;
let handler: AdventureCommandHandler;

beforeAll(async () => {
  database = await createTestDatabase();
  handler = new AdventureCommandHandler(
    new EventStoreRepository(database.db),
    new SnapshotRepository(database.db),
    { snapshotEvery: 50 },
  );
});
afterAll(() => database.drop());

function act(turnId: string): AdventureCommand {
  return {
    type: 'SubmitAction',
    data: { turnId, inputType: 'do', text: 'look around', actionId: randomUUID() },
  };
}

const noEffects: ScriptEffects = { runs: [], states: {}, cardOps: [], messages: [] };

async function inFlight(adventureId: string): Promise<string[]> {
  const rows = await database.db
    .selectFrom('turns_in_flight')
    .select('turn_id')
    .where('stream_id', '=', adventureStreamId(adventureId))
    .execute();
  return rows.map((row) => row.turn_id);
}

async function created(): Promise<string> {
  const adventureId = randomUUID();
  await handler.handle(adventureId, createAdventureCommand({ adventureId }), meta);
  return adventureId;
}

describe('the turn in flight, as the reconciler reads it', () => {
  it('given a turn started, when it is narrated, then it is in flight until then and not after', async () => {
    const adventureId = await created();
    const turnId = randomUUID();
    await handler.handle(adventureId, act(turnId), meta);
    expect(await inFlight(adventureId)).toEqual([turnId]);
    await handler.handle(adventureId, narrationCommand(turnId, randomUUID()), meta);
    expect(await inFlight(adventureId)).toEqual([]);
  });

  it('given a turn started, when an onModelContext script stops it, then it is no longer in flight', async () => {
    const adventureId = await created();
    const turnId = randomUUID();
    await handler.handle(adventureId, act(turnId), meta);
    const stopped = await handler.handle(
      adventureId,
      {
        type: 'StopTurnByScript',
        data: { turnId, scriptId: 'stopper', message: 'stopped', effects: noEffects },
      },
      meta,
    );
    expect(stopped.events.map((e) => e.type)).toContain('TurnStoppedByScript');
    expect(stopped.state.inFlight).toBeNull();
    expect(await inFlight(adventureId)).toEqual([]);
  });

  it('given a turn started, when it is cancelled or fails, then it is no longer in flight', async () => {
    const adventureId = await created();
    const first = randomUUID();
    await handler.handle(adventureId, act(first), meta);
    await handler.handle(adventureId, { type: 'CancelTurn', data: { turnId: first } }, meta);
    expect(await inFlight(adventureId)).toEqual([]);
    const second = randomUUID();
    await handler.handle(adventureId, act(second), meta);
    await handler.handle(
      adventureId,
      { type: 'RecordNarrationFailure', data: { turnId: second, error: 'boom', attempts: 1 } },
      meta,
    );
    expect(await inFlight(adventureId)).toEqual([]);
  });
});
