import { randomUUID } from 'node:crypto';
import {
  adventureStreamId,
  scriptStateAtHead,
  type RecordedAdventureEvent,
} from '@chronicle/adventure';
import { createAdventureCommand } from '@chronicle/adventure/testing';
import { AdventureCommandHandler } from '@chronicle/adventure-store';
import { EventStoreRepository, SnapshotRepository } from '@chronicle/event-store';
import { ScriptSandboxPool } from '@chronicle/script-sandbox';
import {
  createTestDatabase,
  testQueuePrefix,
  TEST_REDIS_URL,
  type TestDatabase,
} from '@chronicle/testing';
import { TurnStreamPublisher } from '@chronicle/turn-stream';
import { withLogContext } from '@chronicle/platform';
import Redis from 'ioredis';
import { SubmitActionUseCase } from '../src/adventures/submit-action.use-case';

// docs/multiplayer.md §3.2, §3.6 at the API's use case, on the real Postgres, Redis and sandbox:
// a room player's action is stored about their character in the third person, and the onInput
// script sees that text, info.characters and info.actor, and may address a message to one of them.

const meta = { actor: 'test' };
const NOW = '2026-12-06T00:00:00.000Z';
let database: TestDatabase;
let redis: Redis;
let pool: ScriptSandboxPool;

beforeAll(async () => {
  database = await createTestDatabase();
  redis = new Redis(TEST_REDIS_URL, { disconnectTimeout: 200 });
  pool = new ScriptSandboxPool({ processes: 1 });
});
afterAll(async () => {
  await pool?.close();
  await redis?.quit();
  await database?.drop();
});

it('given a room of the host (persona Ash) and Mira with a script, when Mira does "I draw my sword", then the story reads "> Mira draws her sword." and the script saw Mira act among Ash and Mira', async () => {
  const adventures = new AdventureCommandHandler(
    new EventStoreRepository(database.db),
    new SnapshotRepository(database.db),
    { snapshotEvery: 1000 },
  );
  const adventureId = randomUUID();
  await adventures.handle(adventureId, createAdventureCommand({ adventureId }), meta);
  await adventures.handle(
    adventureId,
    {
      type: 'CreateInvite',
      data: { code: 'invite-1', role: 'player', maxUses: null, expiresInSeconds: null, now: NOW },
    },
    meta,
  );
  await adventures.handle(
    adventureId,
    {
      type: 'JoinRoom',
      data: {
        code: 'invite-1',
        userId: 'u-mira',
        character: { name: 'Mira', pronouns: 'she/her', description: 'A smith.' },
        now: NOW,
      },
    },
    meta,
  );
  await adventures.handle(
    adventureId,
    {
      type: 'AddScript',
      data: {
        script: {
          id: 'watch',
          name: 'Watch',
          input: [
            'state.saw = { text: text, actor: info.actor, characters: info.characters.map((c) => c.name) };',
            'state.message = { text: info.actor + " moved.", visibleTo: ["Ash"] };',
            '({ text })',
          ].join('\n'),
        },
      },
    },
    meta,
  );
  const useCase = new SubmitActionUseCase(
    adventures,
    new TurnStreamPublisher(redis, testQueuePrefix('submit-room')),
    pool,
    { hookTimeoutMs: 2_000, turnBudgetMs: 5_000, memoryLimitMb: 64 },
  );

  const id = randomUUID();
  await withLogContext({ userId: 'u-mira' }, () =>
    useCase.act(adventureId, { type: 'do', text: 'I draw my sword', id }, 'u-mira'),
  );

  const state = await adventures.get(adventureId);
  expect(scriptStateAtHead(state, 'watch').saw).toEqual({
    text: '\n> Mira draws her sword.\n',
    actor: 'Mira',
    characters: ['Ash', 'Mira'],
  });
  const events = (await new EventStoreRepository(database.db).readStream(
    adventureStreamId(adventureId),
  )) as RecordedAdventureEvent[];
  const acted = events.find((e) => e.type === 'PlayerActed');
  expect(acted?.data).toMatchObject({
    action: { id, text: '> Mira draws her sword.' },
    actorId: 'u-mira',
  });
  const posted = events.find((e) => e.type === 'ScriptMessagePosted');
  expect(posted?.data).toMatchObject({
    scriptId: 'watch',
    message: 'Mira moved.',
    visibleTo: ['Ash'],
  });
});
