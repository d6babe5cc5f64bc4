// The daily token budget is asked again when the job runs, before the model is called: turns
// the API accepted while the budget still had room (side by side, on other adventures) end as
// `budget` once it is spent, with no model call and no retry. One already narrating finishes.
import Redis from 'ioredis';
import { AccountsRepository } from '@chronicle/accounts';
import { TEST_REDIS_URL } from '@chronicle/testing';
import {
  act,
  createAdventure,
  finishedStream,
  readEvents,
  setUpNarrateSpec,
  waitForTurnEnd,
} from './testing/context-worker.harness';

const CHAT = '/v1/chat/completions';
const spec = setUpNarrateSpec({
  fake: { chunkDelayMs: 1 },
  env: { DAILY_TOKEN_BUDGET: '500' },
});

/**
 * The worker counts a narration onto the day's counter just after its append; dropped, the next
 * check sums the log itself (as after a Redis restart), so a test does not race that increment.
 */
async function dropDayCounters(): Promise<void> {
  const redis = new Redis(TEST_REDIS_URL);
  try {
    const keys = await redis.keys(`${spec.harness.config.queuePrefix}:token-budget:*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

it('given the owner spent the day’s budget, when a turn the API accepted runs, then it fails as budget without a model call', async () => {
  // the first turn, under the budget, narrates and spends past it
  spec.fake.enqueue({
    text: 'The keeper’s log is long.',
    usage: { promptTokens: 400, completionTokens: 200 },
    path: CHAT,
  });
  const first = await createAdventure(spec.harness);
  const spending = await act(spec.harness, first, 'do', 'read the log');
  await waitForTurnEnd(spec.harness, first, spending.turnId);
  expect((await readEvents(spec.harness, first)).at(-1)?.type).toBe('Narrated');
  expect(spec.fake.requestsTo(CHAT)).toHaveLength(1);
  await dropDayCounters();

  // a turn on another adventure of the same owner, accepted meanwhile
  const second = await createAdventure(spec.harness);
  const { turnId } = await act(spec.harness, second, 'do', 'climb to the lamp');
  await waitForTurnEnd(spec.harness, second, turnId);

  const events = await readEvents(spec.harness, second);
  expect(events.map((e) => e.type)).toEqual(['AdventureCreated', 'PlayerActed', 'NarrationFailed']);
  expect(events[2].data).toMatchObject({ turnId, code: 'budget', attempts: 1 });
  const entries = await finishedStream(spec.harness, turnId);
  expect(entries.at(-1)).toMatchObject({ event: 'error', data: { code: 'budget' } });
  expect(spec.fake.requestsTo(CHAT)).toHaveLength(1);
});

it('given an owner whose own budget the worker remembers, when an admin lowers it on another process, then the worker’s next turn of theirs ends as budget', async () => {
  // an owner of their own with room to spare (the installation's default, 500, would be spent)
  const admin = new AccountsRepository(spec.harness.database.db as never); // another process's
  const owner = await admin.createUser({ name: 'lamplighter', dailyTokenBudget: 100_000 });
  spec.fake.enqueue({
    text: 'The lamp is trimmed.',
    usage: { promptTokens: 400, completionTokens: 200 },
    path: CHAT,
  });
  const adventureId = await createAdventure(spec.harness, { ownerId: owner.id });
  const narrated = await act(spec.harness, adventureId, 'do', 'trim the lamp');
  await waitForTurnEnd(spec.harness, adventureId, narrated.turnId);
  expect((await readEvents(spec.harness, adventureId)).at(-1)?.type).toBe('Narrated');
  await dropDayCounters();

  // lowered below the 600 spent, through a repository of its own, and announced as the API does
  await admin.updateUser(owner.id, { dailyTokenBudget: 600 });
  // the announcement is a pub/sub message: the worker hears it a moment later, and a listener
  // added now is called after the worker's own (AccountChanges registered first)
  const heard = new Promise<void>((resolve) =>
    spec.harness.controlPlane.whenUserChanged((userId) => {
      if (userId === owner.id) resolve();
    }),
  );
  await spec.harness.controlPlane.announceUserChanged(owner.id);
  await heard;

  const { turnId } = await act(spec.harness, adventureId, 'do', 'light it');
  await waitForTurnEnd(spec.harness, adventureId, turnId);
  expect((await readEvents(spec.harness, adventureId)).at(-1)).toMatchObject({
    type: 'NarrationFailed',
    data: { turnId, code: 'budget' },
  });
  expect(spec.fake.requestsTo(CHAT)).toHaveLength(1);
});
