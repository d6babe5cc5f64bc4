import { randomUUID } from 'node:crypto';
import { adventureStreamId } from '@chronicle/adventure';
import {
  createTestDatabase,
  testQueuePrefix,
  TEST_REDIS_URL,
  type TestDatabase,
} from '@chronicle/testing';
import Redis from 'ioredis';
import type { Kysely } from 'kysely';
import type { AccountsDatabase } from './accounts.database';
import { RateLimitedError } from './accounts.errors';
import { AccountsRepository } from './accounts.repository';
import { AdventureOwners } from './adventure-owners.repository';
import { RateLimiter } from './rate-limiter';
import { DailyTokenBudget, utcDay } from './token-budget';

let database: TestDatabase;
let db: Kysely<AccountsDatabase>;
let accounts: AccountsRepository;

beforeAll(async () => {
  database = await createTestDatabase();
  db = database.db as unknown as Kysely<AccountsDatabase>;
  accounts = new AccountsRepository(db);
});
afterAll(() => database.drop());

/** An adventure's first event, and narrations with usage, written straight into the log. */
async function adventure(
  ownerId: string,
  narrations: { tokens: [number, number]; at?: Date; narrator?: string }[] = [],
): Promise<string> {
  const id = randomUUID();
  const streamId = adventureStreamId(id);
  const events = [
    { type: 'AdventureCreated', data: { adventureId: id, ownerId }, at: new Date() },
    ...narrations.map((n) => ({
      type: 'Narrated',
      data: {
        usage: { promptTokens: n.tokens[0], completionTokens: n.tokens[1], cachedTokens: 0 },
        narrator: n.narrator ?? 'remote',
      },
      at: n.at ?? new Date(),
    })),
  ];
  await db.insertInto('streams').values({ stream_id: streamId, version: events.length }).execute();
  await db
    .insertInto('events')
    .values(
      events.map((event, i) => ({
        stream_id: streamId,
        version: i + 1,
        event_id: randomUUID(),
        type: event.type,
        schema_version: 1,
        data: JSON.stringify(event.data),
        recorded_at: event.at,
      })),
    )
    .execute();
  return id;
}

describe('AccountsRepository', () => {
  it('creates a user and a key that authenticates; the key is stored only as a hash', async () => {
    const user = await accounts.createUser({ name: 'ann', dailyTokenBudget: 500 });
    const created = await accounts.createKey(user.id, 'laptop');
    expect(created?.key).toMatch(/^chr_/);
    const found = await accounts.authenticate(created!.key);
    expect(found).toEqual({ user, keyId: created!.id });
    const rows = await db
      .selectFrom('api_keys')
      .selectAll()
      .where('user_id', '=', user.id)
      .execute();
    expect(JSON.stringify(rows)).not.toContain(created!.key.split('_')[2]);
    expect(rows[0].last_used_at).not.toBeNull();
  });

  it('refuses unknown, malformed and revoked keys; revoking is scoped to the owner', async () => {
    const user = await accounts.createUser({ name: 'bo' });
    const other = await accounts.createUser({ name: 'cy' });
    const created = (await accounts.createKey(user.id))!;
    expect(await accounts.authenticate('chr_aaaaaaaaaaaa_' + 'a'.repeat(43))).toBeNull();
    expect(await accounts.authenticate('nonsense')).toBeNull();
    const [, prefix] = created.key.split('_');
    expect(await accounts.authenticate(`chr_${prefix}_${'b'.repeat(43)}`)).toBeNull();
    expect(await accounts.revokeKey(other.id, created.id)).toBe(false);
    expect(await accounts.authenticate(created.key)).not.toBeNull();
    expect(await accounts.revokeKey(user.id, created.id)).toBe(true);
    expect(await accounts.authenticate(created.key)).toBeNull();
    expect(await accounts.revokeKey(user.id, created.id)).toBe(true);
    expect(await accounts.createKey(randomUUID())).toBeNull();
    expect(await accounts.getUser('not-a-uuid')).toBeNull();
  });

  it('creates the development key once, only while there are no users', async () => {
    const empty = await createTestDatabase();
    try {
      const fresh = new AccountsRepository(empty.db as unknown as Kysely<AccountsDatabase>);
      const [a, b] = await Promise.all([
        fresh.createDevelopmentKeyIfNoUsers(),
        fresh.createDevelopmentKeyIfNoUsers(),
      ]);
      const created = [a, b].filter((key) => key !== null);
      expect(created).toHaveLength(1);
      expect((await fresh.authenticate(created[0]!.key))?.user.name).toBe('dev');
      expect(await fresh.createDevelopmentKeyIfNoUsers()).toBeNull();
    } finally {
      await empty.drop();
    }
  });
});

describe('AdventureOwners', () => {
  it('reads owners, counts and lists from AdventureCreated', async () => {
    const owners = new AdventureOwners(db);
    const userId = randomUUID();
    const ids = [await adventure(userId), await adventure(userId), await adventure(userId)].sort();
    const foreign = await adventure(randomUUID());
    expect(await owners.ownerOf(ids[0])).toBe(userId);
    expect(await owners.isOwnedBy(foreign, userId)).toBe(false);
    expect(await owners.ownerOf(randomUUID())).toBeNull();
    expect(await owners.countOwnedBy(userId)).toBe(3);
    expect(await owners.listOwnedBy(userId, undefined, 2)).toEqual(ids.slice(0, 2));
    expect(await owners.listOwnedBy(userId, ids[1], 2)).toEqual([ids[2]]);
  });
});

describe('DailyTokenBudget', () => {
  it("sums today's remote narrations of the user's adventures", async () => {
    const budget = new DailyTokenBudget(db);
    const userId = randomUUID();
    const now = new Date();
    const yesterday = new Date(utcDay(now).start.getTime() - 1000);
    await adventure(userId, [{ tokens: [100, 20] }, { tokens: [1000, 1000], at: yesterday }]);
    await adventure(userId, [{ tokens: [50, 5] }, { tokens: [999, 999], narrator: 'offline' }]);
    await adventure(randomUUID(), [{ tokens: [7000, 7000] }]);
    expect(await budget.usedToday(userId, now)).toBe(175);
    await expect(budget.assertAvailable(userId, 176, now)).resolves.toBeUndefined();
    await expect(budget.assertAvailable(userId, 0, now)).resolves.toBeUndefined();
    const refused = await budget.assertAvailable(userId, 175, now).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect((refused as RateLimitedError).message).toMatch(
      /daily model-token budget of 175 tokens is spent \(175 used today\); it resets at \d{4}-\d\d-\d\dT00:00:00.000Z/,
    );
    expect((refused as RateLimitedError).retryAfterSeconds).toBeGreaterThan(0);
    expect((refused as RateLimitedError).retryAfterSeconds).toBeLessThanOrEqual(86400);
  });
});

describe('RateLimiter', () => {
  const redis = new Redis(TEST_REDIS_URL);
  const prefix = testQueuePrefix('ratelimit');
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('allows the limit, refuses the next with the time left, and resets after the window', async () => {
    const limiter = new RateLimiter(redis, prefix);
    const hits = [];
    for (let i = 0; i < 3; i++) hits.push(await limiter.hit('turns', 'key-1', 2, 1));
    expect(hits.map((hit) => hit.allowed)).toEqual([true, true, false]);
    expect(hits[2].retryAfterSeconds).toBe(1);
    expect((await limiter.hit('turns', 'key-2', 2, 1)).allowed).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await limiter.hit('turns', 'key-1', 2, 1)).allowed).toBe(true);
  });

  it('counts across limiter instances (several API processes)', async () => {
    const other = new Redis(TEST_REDIS_URL);
    try {
      const a = new RateLimiter(redis, prefix);
      const b = new RateLimiter(other, prefix);
      await a.hit('writes', 'shared', 2, 60);
      await b.hit('writes', 'shared', 2, 60);
      const third = await a.hit('writes', 'shared', 2, 60);
      expect(third.allowed).toBe(false);
      expect(third.retryAfterSeconds).toBeGreaterThan(55);
    } finally {
      await other.quit();
    }
  });
});
