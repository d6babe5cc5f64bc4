import { randomUUID } from 'node:crypto';
import { scriptStateAtHead } from '@chronicle/adventure';
import { createAdventureCommand } from '@chronicle/adventure/testing';
import { AdventureCommandHandler } from '@chronicle/adventure-store';
import {
  EventStoreRepository,
  SnapshotRepository,
  StreamVersionConflictError,
} from '@chronicle/event-store';
import { ScriptSandboxPool } from '@chronicle/script-sandbox';
import type { HookRunRequest } from '@chronicle/scripting';
import {
  createTestDatabase,
  InterposingEventStore,
  testQueuePrefix,
  TEST_REDIS_URL,
  type TestDatabase,
} from '@chronicle/testing';
import { TurnStreamPublisher } from '@chronicle/turn-stream';
import { withLogContext } from '@chronicle/platform';
import Redis from 'ioredis';
import { SubmitActionUseCase } from '../src/adventures/submit-action.use-case';

// onInput is not idempotent (Math.random, counters): a 409 after the handler's conflict retries
// ran out, and the client's resend with the same id, must not run the scripts a second time.
// Real Postgres, Redis and sandbox; another writer slips an edit in before each append.

/** The real pool, counting the hook runs it was asked for. */
class CountingPool extends ScriptSandboxPool {
  runs = 0;
  override run(request: HookRunRequest) {
    this.runs++;
    return super.run(request);
  }
}

const meta = { actor: 'test' };
let database: TestDatabase;
let redis: Redis;
let pool: CountingPool;

beforeAll(async () => {
  database = await createTestDatabase();
  redis = new Redis(TEST_REDIS_URL, { disconnectTimeout: 200 });
  pool = new CountingPool({ processes: 1 });
});
afterAll(async () => {
  await pool?.close();
  await redis?.quit();
  await database?.drop();
});

it('a resend after a 409 reuses the first onInput result: the script ran once, its state counts once', async () => {
  let adventureId = '';
  const snapshots = new SnapshotRepository(database.db);
  const writer = new AdventureCommandHandler(new EventStoreRepository(database.db), snapshots, {
    snapshotEvery: 1000,
  });
  const store = new InterposingEventStore(database.db, async () => {
    await writer.handle(
      adventureId,
      { type: 'EditAdventure', data: { authorsNote: randomUUID() } },
      meta,
    );
  });
  const adventures = new AdventureCommandHandler(store, snapshots, { snapshotEvery: 1000 });
  adventureId = randomUUID();
  await adventures.handle(adventureId, createAdventureCommand({ adventureId }), meta);
  await adventures.handle(
    adventureId,
    {
      type: 'AddScript',
      data: {
        script: {
          id: 'counter',
          name: 'Counter',
          input:
            'state.runs = (state.runs || 0) + 1; ({ text: text.trimEnd() + " (" + state.runs + ")\\n" })',
        },
      },
    },
    meta,
  );
  const useCase = new SubmitActionUseCase(
    adventures,
    new TurnStreamPublisher(redis, testQueuePrefix('submit-scripts')),
    pool,
    { hookTimeoutMs: 2_000, turnBudgetMs: 5_000, memoryLimitMb: 64 },
  );
  const id = randomUUID();
  // As the access guard leaves it for a request: the user the events are written for.
  const act = () =>
    withLogContext({ userId: 'player-1' }, () =>
      useCase.act(adventureId, { type: 'do', text: 'look', id }),
    );
  const runsBefore = pool.runs;
  // Every append of the first request loses to another writer: the handler gives up, a 409.
  store.interpose = 5;
  await expect(act()).rejects.toBeInstanceOf(StreamVersionConflictError);
  expect(pool.runs - runsBefore).toBe(1);

  const accepted = await act();
  expect(pool.runs - runsBefore).toBe(1);
  const state = await adventures.get(adventureId);
  expect(scriptStateAtHead(state, 'counter')).toEqual({ runs: 1 });
  expect(accepted.actionId).toBe(id);

  // A resend of the accepted turn runs nothing either: the log has it.
  await act();
  expect(pool.runs - runsBefore).toBe(1);
});
