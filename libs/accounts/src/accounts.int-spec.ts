import { randomUUID } from 'node:crypto';
import { adventureStreamId, modelCallOf, type AdventureEvent } from '@chronicle/adventure';
import {
  createTestDatabase,
  testQueuePrefix,
  TEST_REDIS_URL,
  type TestDatabase,
} from '@chronicle/testing';
import Redis from 'ioredis';
import { sql, type Kysely } from 'kysely';
import type { Database } from '@chronicle/event-store';
import { RateLimitedError } from './accounts.errors';
import { AccountsRepository } from './accounts.repository';
import { AdventureOwners } from './adventure-owners.repository';
import { RateLimiter } from './rate-limiter';
import { DailyTokenBudget, utcDay } from './token-budget';

let database: TestDatabase;
let db: Kysely<Database>;
let accounts: AccountsRepository;

beforeAll(async () => {
  database = await createTestDatabase();
  db = database.db;
  accounts = new AccountsRepository(db);
});
afterAll(() => database.drop());

/**
 * An adventure's first event, and narrations with usage, written straight into the log with the
 * read models' rows an append writes beside them (its owner, the paid model calls), at `at`.
 */
async function adventure(
  ownerId: string,
  narrations: { tokens: [number, number]; at?: Date; narrator?: string }[] = [],
): Promise<string> {
  return adventureWithId(randomUUID(), ownerId, narrations);
}

async function adventureWithId(
  id: string,
  ownerId: string,
  narrations: { tokens: [number, number]; at?: Date; narrator?: string }[] = [],
): Promise<string> {
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
  await db
    .insertInto('adventure_owners')
    .values({ stream_id: streamId, owner_id: ownerId })
    .execute();
  const calls = events.flatMap((event, i) => {
    const call = modelCallOf(event as unknown as AdventureEvent);
    return call === null
      ? []
      : [
          {
            stream_id: streamId,
            version: i + 1,
            user_id: ownerId,
            recorded_at: event.at,
            purpose: call.purpose,
            model: call.model,
            prompt_tokens: call.promptTokens,
            completion_tokens: call.completionTokens,
            cached_tokens: call.cachedTokens,
          },
        ];
  });
  if (calls.length > 0) await db.insertInto('model_calls').values(calls).execute();
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
    // The secret is everything after `chr_<prefix>_`: it may hold `_` itself (base64url), so a
    // split on `_` could leave a single character that any row happens to contain.
    const secret = created!.key.split('_').slice(2).join('_');
    expect(secret.length).toBeGreaterThan(20);
    expect(JSON.stringify(rows)).not.toContain(secret);
    expect(rows[0].last_used_at).not.toBeNull();
  });

  it('records a key’s use at most once a minute, and a key used within it costs one statement', async () => {
    const user = await accounts.createUser({ name: 'dee' });
    const created = (await accounts.createKey(user.id))!;
    const statements: string[] = [];
    const counted = db.withPlugin({
      transformQuery: ({ node }) => {
        statements.push(node.kind);
        return node;
      },
      transformResult: async ({ result }) => result,
    });
    // No cache: every request asks the database, as one does after KEY_CACHE_TTL_MS.
    const uncached = new AccountsRepository(counted, { keyCacheTtlMs: 0 });
    const lastUsed = async () =>
      (
        await db
          .selectFrom('api_keys')
          .select('last_used_at')
          .where('id', '=', created.id)
          .executeTakeFirstOrThrow()
      ).last_used_at;
    const setLastUsed = (interval: string) =>
      db
        .updateTable('api_keys')
        .set({ last_used_at: sql<Date>`now() - ${interval}::interval` })
        .where('id', '=', created.id)
        .execute();

    await setLastUsed('30 seconds');
    const recent = await lastUsed();
    expect(await uncached.authenticate(created.key)).not.toBeNull();
    expect(statements).toEqual(['SelectQueryNode']);
    expect(await lastUsed()).toEqual(recent);

    await setLastUsed('2 minutes');
    const stale = await lastUsed();
    statements.length = 0;
    expect(await uncached.authenticate(created.key)).not.toBeNull();
    expect(statements).toEqual(['SelectQueryNode', 'UpdateQueryNode']);
    expect((await lastUsed())!.getTime()).toBeGreaterThan(stale!.getTime() + 60_000);
  });

  it('refuses unknown, malformed and revoked keys; revoking is scoped to the owner', async () => {
    const user = await accounts.createUser({ name: 'bo' });
    const other = await accounts.createUser({ name: 'cy' });
    const created = (await accounts.createKey(user.id))!;
    expect(await accounts.authenticate('chr_aaaaaaaaaaaa_' + 'a'.repeat(43))).toBeNull();
    expect(await accounts.authenticate('nonsense')).toBeNull();
    const [, prefix] = created.key.split('_');
    expect(await accounts.authenticate(`chr_${prefix}_${'b'.repeat(43)}`)).toBeNull();
    expect(await accounts.revokeKey(other.id, created.id)).toBeNull();
    expect(await accounts.authenticate(created.key)).not.toBeNull();
    expect(await accounts.revokeKey(user.id, created.id)).toEqual({ prefix: created.prefix });
    expect(await accounts.authenticate(created.key)).toBeNull();
    expect(await accounts.revokeKey(user.id, created.id)).toEqual({ prefix: created.prefix });
    expect(await accounts.createKey(randomUUID())).toBeNull();
    expect(await accounts.getUser('not-a-uuid')).toBeNull();
  });

  it('trusts a found key for the cache TTL: a revoke here or a forget drops it at once, an unannounced one elsewhere shows after the TTL', async () => {
    let clock = 1_000_000;
    const here = new AccountsRepository(db, { keyCacheTtlMs: 10_000, now: () => clock });
    const elsewhere = new AccountsRepository(db); // another API instance
    const user = await here.createUser({ name: 'di' });
    const first = (await here.createKey(user.id))!;
    const second = (await here.createKey(user.id))!;
    expect(await here.authenticate(first.key)).not.toBeNull();
    expect(await here.authenticate(second.key)).not.toBeNull();
    // a wrong secret under a cached prefix is still refused
    const [, prefix] = first.key.split('_');
    expect(await here.authenticate(`chr_${prefix}_${'c'.repeat(43)}`)).toBeNull();

    expect(await here.revokeKey(user.id, first.id)).toEqual({ prefix: first.prefix });
    expect(await here.authenticate(first.key)).toBeNull();

    expect(await elsewhere.revokeKey(user.id, second.id)).toEqual({ prefix: second.prefix });
    clock += 9_999;
    expect(await here.authenticate(second.key)).not.toBeNull();
    clock += 2;
    expect(await here.authenticate(second.key)).toBeNull();

    // a revoke elsewhere, announced: forgotten here at once
    const third = (await here.createKey(user.id))!;
    expect(await here.authenticate(third.key)).not.toBeNull();
    const revoked = await elsewhere.revokeKey(user.id, third.id);
    here.forgetKey(revoked!.prefix);
    expect(await here.authenticate(third.key)).toBeNull();
  });

  it("changes a user's name and budget, and a cached key answers with the change once its user is forgotten", async () => {
    const here = new AccountsRepository(db, { keyCacheTtlMs: 60_000 });
    const elsewhere = new AccountsRepository(db, { keyCacheTtlMs: 60_000 });
    const user = await here.createUser({ name: 'fay', dailyTokenBudget: 10 });
    const key = (await here.createKey(user.id))!;
    expect((await elsewhere.authenticate(key.key))?.user.dailyTokenBudget).toBe(10);

    expect(await here.updateUser(user.id, { dailyTokenBudget: 20 })).toEqual({
      ...user,
      dailyTokenBudget: 20,
    });
    expect((await here.authenticate(key.key))?.user.dailyTokenBudget).toBe(20);
    // the other instance answers from its cache until it is told
    expect((await elsewhere.authenticate(key.key))?.user.dailyTokenBudget).toBe(10);
    elsewhere.forgetUser(user.id);
    expect((await elsewhere.authenticate(key.key))?.user.dailyTokenBudget).toBe(20);

    expect(await here.updateUser(user.id, { name: 'faye', dailyTokenBudget: null })).toEqual({
      ...user,
      name: 'faye',
      dailyTokenBudget: null,
    });
    expect(await here.updateUser(user.id, {})).toMatchObject({ name: 'faye' });
    expect(await here.updateUser(randomUUID(), { name: 'x' })).toBeNull();
    expect(await here.updateUser('not-a-uuid', { name: 'x' })).toBeNull();
  });

  it('given a forget while a key is being looked up, when the lookup answers, then its row is not cached', async () => {
    const here = new AccountsRepository(db, { keyCacheTtlMs: 60_000 });
    const elsewhere = new AccountsRepository(db);
    const user = await here.createUser({ name: 'ed' });
    const key = (await here.createKey(user.id))!;
    // the lookup's SELECT is on its way when the announcement of a revoke arrives: the row it
    // reads may predate the revoke, so it answers for this request only
    const looking = here.authenticate(key.key);
    here.forgetKey(key.prefix);
    expect(await looking).not.toBeNull();
    await elsewhere.revokeKey(user.id, key.id);
    expect(await here.authenticate(key.key)).toBeNull();
  });

  it('creates the development key once, only while there are no users', async () => {
    const empty = await createTestDatabase();
    try {
      const fresh = new AccountsRepository(empty.db);
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

  it('reads owner and role afresh on every call: a hand-over or a kick holds at once, in every process', async () => {
    const owners = new AdventureOwners(db);
    const userId = randomUUID();
    const id = await adventure(userId);
    // The host's row, as the append of AdventureCreated writes it (this helper writes owners only).
    await db
      .insertInto('adventure_members')
      .values({ stream_id: adventureStreamId(id), user_id: userId, role: 'host' })
      .execute();
    expect(await owners.isOwnedBy(id, userId)).toBe(true);
    expect(await owners.roleOf(id, userId)).toBe('host');
    expect(await owners.listMemberOf(userId, undefined, 10)).toEqual([id]);
    // What the append writes for a hand-over and a kick (read-models.ts), done by hand here.
    const next = randomUUID();
    await db
      .updateTable('adventure_owners')
      .set({ owner_id: next })
      .where('stream_id', '=', adventureStreamId(id))
      .execute();
    await db
      .deleteFrom('adventure_members')
      .where('stream_id', '=', adventureStreamId(id))
      .execute();
    expect(await owners.ownerOf(id)).toBe(next);
    expect(await owners.roleOf(id, userId)).toBeNull();

    const later = randomUUID();
    expect(await owners.ownerOf(later)).toBeNull();
    await adventureWithId(later, userId);
    expect(await owners.ownerOf(later)).toBe(userId);
  });
});

describe('DailyTokenBudget', () => {
  const redis = new Redis(TEST_REDIS_URL);
  const prefix = testQueuePrefix('budget');
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it("sums today's remote narrations of the user's adventures", async () => {
    const budget = new DailyTokenBudget(db, redis, prefix);
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

  it('counts narrations on a counter seeded from the log, and rebuilds a lost counter from the log', async () => {
    const budget = new DailyTokenBudget(db, redis, prefix);
    const userId = randomUUID();
    const now = new Date();
    // no counter yet: the worker's count is left for the next check's sum of the log
    await budget.recordSpend(userId, { model: 'm', promptTokens: 40, completionTokens: 0 }, now);
    expect(await redis.keys(`${prefix}:token-budget:${userId}:*`)).toEqual([]);

    await adventure(userId, [{ tokens: [100, 20] }]);
    expect(await budget.usedToday(userId, now)).toBe(120);
    // a narration after the seed: counted, no sum of the log
    await adventure(userId, [{ tokens: [30, 3] }]);
    await budget.recordSpend(userId, { model: 'm', promptTokens: 33, completionTokens: 0 }, now);
    await budget.recordSpend(userId, { model: 'm', promptTokens: 0, completionTokens: 0 }, now);
    expect(await budget.usedToday(userId, now)).toBe(153);
    await expect(budget.assertAvailable(userId, 153, now)).rejects.toBeInstanceOf(RateLimitedError);

    // Redis lost the counter: the log has the truth
    await redis.del(...(await redis.keys(`${prefix}:token-budget:${userId}:*`)));
    await adventure(userId, [{ tokens: [5, 5] }]);
    expect(await budget.usedToday(userId, now)).toBe(163);
    expect(await budget.sumFromLog(userId, now)).toBe(163);
    // another day has its own counter
    const tomorrow = new Date(utcDay(now).resetsAt.getTime() + 1000);
    expect(await budget.usedToday(userId, tomorrow)).toBe(0);
  });

  it("remembers an owner's own budget until it is forgotten; a read under way when it is forgotten is not remembered", async () => {
    const budget = new DailyTokenBudget(db); // no counter: each check sums the log
    const owner = await accounts.createUser({ name: 'gus', dailyTokenBudget: 1_000 });
    await adventure(owner.id, [{ tokens: [400, 200] }]);
    const now = new Date();
    const setBudget = (dailyTokenBudget: number) =>
      db
        .updateTable('users')
        .set({ daily_token_budget: dailyTokenBudget })
        .where('id', '=', owner.id)
        .execute();

    expect(await budget.spentForOwner(owner.id, 0, now)).toBeNull();
    await setBudget(500); // written by another process, not announced yet
    expect(await budget.spentForOwner(owner.id, 0, now)).toBeNull();
    budget.forgetOwner(owner.id); // announced
    expect(await budget.spentForOwner(owner.id, 0, now)).toMatchObject({ budget: 500, used: 600 });

    await setBudget(1_000);
    budget.forgetOwner(owner.id);
    const reading = budget.spentForOwner(owner.id, 0, now);
    budget.forgetOwner(owner.id); // heard while that read was on its way
    expect(await reading).toBeNull();
    await setBudget(500);
    expect(await budget.spentForOwner(owner.id, 0, now)).toMatchObject({ budget: 500 });
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
