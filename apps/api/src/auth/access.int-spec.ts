/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are asserted on, not typed */
import { randomUUID } from 'node:crypto';
import { adventureStreamId, LIMITS, type Usage } from '@chronicle/adventure';
import { narrationCommand } from '@chronicle/adventure/testing';
import { AccountsRepository, DailyTokenBudget } from '@chronicle/accounts';
import { startApiHarness, aScenario, type ApiHarness } from '../../test/api.harness';

// Issue 8 through the real API (in-process, real Postgres and Redis): every /v1 route without a
// key, with a revoked key and with another user's key; admin routes; rate limits and their
// reset; the daily token budget; every limit breached once; mass assignment.

const ADMIN = 'admin-key-for-access-spec-32-characters';

interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

function client(harness: ApiHarness) {
  return async (
    method: string,
    path: string,
    key: string | null,
    body?: unknown,
    raw?: string,
  ): Promise<Reply> => {
    const headers: Record<string, string> = {};
    if (key !== null) headers.authorization = `Bearer ${key}`;
    if (method === 'GET' || method === 'HEAD') body = undefined;
    if (body !== undefined || raw !== undefined) {
      // The import takes NDJSON only (anything else is a 415).
      headers['content-type'] =
        path === '/v1/adventures/import' ? 'application/x-ndjson' : 'application/json';
    }
    const response = await fetch(`${harness.baseUrl}${path}`, {
      method,
      headers,
      body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: response.status, headers: response.headers, body: parsed };
  };
}

async function userWithKey(harness: ApiHarness, name: string, dailyTokenBudget?: number) {
  const accounts = harness.app.get(AccountsRepository);
  const user = await accounts.createUser({ name, dailyTokenBudget });
  const key = (await accounts.createKey(user.id))!;
  return { user, key: key.key, keyId: key.id };
}

async function eventCount(harness: ApiHarness, adventureId: string): Promise<number> {
  const row = await harness.database.db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('stream_id', '=', adventureStreamId(adventureId))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('access to every /v1 route', () => {
  let harness: ApiHarness;
  let call: ReturnType<typeof client>;
  let owner: Awaited<ReturnType<typeof userWithKey>>;
  let stranger: Awaited<ReturnType<typeof userWithKey>>;
  let revokedKey: string;
  let adventureId: string;
  let routes: Array<{ method: string; path: string }>;

  beforeAll(async () => {
    harness = await startApiHarness({
      adminApiKey: ADMIN,
      rateLimitWritesPerMinute: 10_000,
      rateLimitTurnsPerMinute: 10_000,
      rateLimitAnonPerMinute: 10_000,
    });
    call = client(harness);
    owner = await userWithKey(harness, 'owner');
    stranger = await userWithKey(harness, 'stranger');
    const revoked = await userWithKey(harness, 'revoked');
    await harness.app.get(AccountsRepository).revokeKey(revoked.user.id, revoked.keyId);
    revokedKey = revoked.key;
    const created = await call('POST', '/v1/adventures', owner.key, aScenario());
    expect(created.status).toBe(201);
    adventureId = created.body.id;
    // The route list comes from the OpenAPI document Nest builds from the controllers, so a
    // route added later is covered without touching this test.
    const document = await call('GET', '/docs/json', null);
    expect(document.status).toBe(200);
    routes = Object.entries(document.body.paths as Record<string, Record<string, unknown>>)
      .filter(([path]) => path.startsWith('/v1'))
      .flatMap(([path, operations]) =>
        Object.keys(operations).map((method) => ({ method: method.toUpperCase(), path })),
      );
  });

  afterAll(() => harness?.close());

  const concrete = (path: string) =>
    path
      .replace('{id}', adventureId)
      .replace('{version}', '1')
      .replace(/\{[^}]+\}/g, () => randomUUID());

  it('finds the routes to check', () => {
    const listed = routes.map((r) => `${r.method} ${r.path}`);
    expect(listed).toEqual(
      expect.arrayContaining([
        'POST /v1/adventures',
        'GET /v1/adventures/{id}',
        'POST /v1/adventures/{id}/actions',
        'GET /v1/adventures/{id}/turns/{turnId}/stream',
        'GET /v1/adventures/{id}/events',
        'GET /v1/adventures/{id}/at/{version}',
        'POST /v1/admin/users',
      ]),
    );
  });

  it('answers 401 without a key and with a revoked key, saying what to send', async () => {
    for (const { method, path } of routes) {
      const url = concrete(path);
      const missing = await call(method, url, null, {});
      expect({ route: `${method} ${path}`, status: missing.status }).toEqual({
        route: `${method} ${path}`,
        status: 401,
      });
      expect(missing.body.message).toMatch(/Authorization: Bearer/);
      const revoked = await call(method, url, revokedKey, {});
      expect({ route: `${method} ${path}`, status: revoked.status }).toEqual({
        route: `${method} ${path}`,
        status: 401,
      });
    }
  });

  it("answers 404 for another user's adventure on every route, and appends nothing", async () => {
    const before = await eventCount(harness, adventureId);
    const missing = await call('GET', `/v1/adventures/${randomUUID()}`, stranger.key);
    for (const { method, path } of routes.filter((r) => r.path.includes('{id}'))) {
      if (path.startsWith('/v1/admin')) continue;
      const reply = await call(method, concrete(path), stranger.key, {});
      expect({ route: `${method} ${path}`, status: reply.status }).toEqual({
        route: `${method} ${path}`,
        status: 404,
      });
      // exactly what a missing adventure answers: nothing tells the two apart
      expect(reply.body.message).toBe(missing.body.message.replace(/[0-9a-f-]{36}/, adventureId));
      expect(JSON.stringify(reply.body)).not.toContain('Drowned Bell');
    }
    expect(await eventCount(harness, adventureId)).toBe(before);
    const list = await call('GET', '/v1/adventures', stranger.key);
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).not.toContain(adventureId);
    const own = await call('GET', '/v1/adventures', owner.key);
    expect(own.body.adventures.map((a: { id: string }) => a.id)).toEqual([adventureId]);
    expect((await call('GET', `/v1/adventures/${adventureId}`, owner.key)).status).toBe(200);
  });

  it('records the authenticated user as the owner and the actor', async () => {
    const view = await call('GET', `/v1/adventures/${adventureId}`, owner.key);
    expect(view.body.ownerId).toBe(owner.user.id);
    const events = await call('GET', `/v1/adventures/${adventureId}/events`, owner.key);
    expect(events.body.events[0].metadata.actor).toBe(`user:${owner.user.id}`);
  });

  it('lets only the admin key through /v1/admin, and admins create and revoke keys', async () => {
    for (const key of [owner.key, revokedKey, 'chr_nope', 'admin-key-for-access-spe']) {
      const reply = await call('POST', '/v1/admin/users', key, { name: 'x' });
      expect(reply.status).toBe(401);
      expect(reply.body.message).toMatch(/ADMIN_API_KEY/);
    }
    const user = await call('POST', '/v1/admin/users', ADMIN, { name: 'new', dailyTokenBudget: 5 });
    expect(user.status).toBe(201);
    expect(user.body).toMatchObject({ name: 'new', dailyTokenBudget: 5 });
    const key = await call('POST', `/v1/admin/users/${user.body.id}/keys`, ADMIN, { name: 'cli' });
    expect(key.status).toBe(201);
    expect(key.body.key).toMatch(/^chr_/);
    expect((await call('GET', '/v1/adventures', key.body.key)).status).toBe(200);
    const listed = await call('GET', `/v1/admin/users/${user.body.id}/keys`, ADMIN);
    expect(JSON.stringify(listed.body)).not.toContain(key.body.key);
    const revoke = await call(
      'DELETE',
      `/v1/admin/users/${user.body.id}/keys/${key.body.id}`,
      ADMIN,
    );
    expect(revoke.status).toBe(204);
    expect((await call('GET', '/v1/adventures', key.body.key)).status).toBe(401);
    expect((await call('POST', `/v1/admin/users/${randomUUID()}/keys`, ADMIN, {})).status).toBe(
      404,
    );
    expect(
      (await call('DELETE', `/v1/admin/users/${user.body.id}/keys/${randomUUID()}`, ADMIN)).status,
    ).toBe(404);
  });

  it('lets admins read and change a user; a bad change answers 400 saying what to send and changes nothing', async () => {
    const user = await call('POST', '/v1/admin/users', ADMIN, { name: 'fen', dailyTokenBudget: 5 });
    const path = `/v1/admin/users/${user.body.id}`;
    expect((await call('GET', path, ADMIN)).body).toEqual(user.body);
    for (const key of [owner.key, null]) {
      expect((await call('PATCH', path, key, { dailyTokenBudget: 9 })).status).toBe(401);
    }

    const bad: Array<[unknown, RegExp]> = [
      [{}, /send "name" or "dailyTokenBudget"/],
      [{ dailyTokenBudget: -1 }, /dailyTokenBudget must not be less than 0/],
      [{ dailyTokenBudget: 'lots' }, /dailyTokenBudget must be an integer/],
      [{ name: '' }, /name must be longer than or equal to 1/],
      [{ dailyTokenBudget: 9, isAdmin: true }, /isAdmin should not exist/],
    ];
    for (const [body, message] of bad) {
      const reply = await call('PATCH', path, ADMIN, body);
      expect({ body, status: reply.status }).toEqual({ body, status: 400 });
      const said = reply.body.message;
      expect(typeof said === 'string' ? said : JSON.stringify(said)).toMatch(message);
    }
    expect((await call('GET', path, ADMIN)).body).toEqual(user.body);

    const raised = await call('PATCH', path, ADMIN, { dailyTokenBudget: 500 });
    expect(raised.status).toBe(200);
    expect(raised.body).toEqual({ ...user.body, dailyTokenBudget: 500 });
    const renamed = await call('PATCH', path, ADMIN, { name: 'fenna', dailyTokenBudget: null });
    expect(renamed.body).toEqual({ ...user.body, name: 'fenna', dailyTokenBudget: null });
    expect((await call('GET', path, ADMIN)).body).toEqual(renamed.body);

    // an id that is not one is the path's mistake (400), an unknown one a 404
    for (const [id, status] of [
      [randomUUID(), 404],
      ['not-a-user', 400],
    ] as const) {
      expect((await call('GET', `/v1/admin/users/${id}`, ADMIN)).status).toBe(status);
      expect((await call('PATCH', `/v1/admin/users/${id}`, ADMIN, { name: 'x' })).status).toBe(
        status,
      );
    }
  });

  it('lets admins list the users page by page; a bad page answers 400 saying what to send', async () => {
    const everyone: string[] = [];
    let after: string | null = null;
    do {
      const query: string = after ? `?limit=2&after=${after}` : '?limit=2';
      const page = await call('GET', `/v1/admin/users${query}`, ADMIN);
      expect(page.status).toBe(200);
      expect(page.body.users.length).toBeLessThanOrEqual(2);
      everyone.push(...page.body.users.map((u: { id: string }) => u.id));
      after = page.body.next;
    } while (after);
    const all = await harness.database.db.selectFrom('users').select('id').orderBy('id').execute();
    expect(everyone).toEqual(all.map((u) => u.id));
    expect(everyone.length).toBeGreaterThan(2);

    for (const [query, message] of [
      ['?after=someone', /after must be a user id/],
      ['?limit=0', /limit must not be less than 1/],
      ['?limit=201', /limit must be at most 200/],
      ['?limit=two', /limit must be a whole number/],
    ] as const) {
      const reply = await call('GET', `/v1/admin/users${query}`, ADMIN);
      expect({ query, status: reply.status }).toEqual({ query, status: 400 });
      expect(JSON.stringify(reply.body.message)).toMatch(message);
    }
    expect((await call('GET', '/v1/admin/users', owner.key)).status).toBe(401);
  });

  it('keeps /health and /docs open', async () => {
    expect((await call('GET', '/health', null)).status).toBe(200);
    expect((await call('GET', '/docs/json', null)).status).toBe(200);
  });

  describe('mass assignment', () => {
    it('refuses __proto__, constructor and unknown fields', async () => {
      const proto = await call(
        'POST',
        '/v1/adventures',
        owner.key,
        undefined,
        JSON.stringify(aScenario()).replace('{', '{"__proto__":{"ownerId":"someone"},'),
      );
      expect(proto.status).toBe(400);
      expect(JSON.stringify(proto.body.message)).toMatch(/__proto__/);
      const ctor = await call('POST', '/v1/adventures', owner.key, {
        ...aScenario(),
        constructor: { ownerId: 'someone' },
      });
      expect(ctor.status).toBe(400);
      expect(JSON.stringify(ctor.body.message)).toMatch(/constructor/);
      const unknown = await call('POST', '/v1/adventures', owner.key, {
        ...aScenario(),
        ownerId: stranger.user.id,
      });
      expect(unknown.status).toBe(400);
      expect(JSON.stringify(unknown.body.message)).toMatch(/ownerId should not exist/);
      const admin = await call('POST', '/v1/admin/users', ADMIN, { name: 'x', isAdmin: true });
      expect(admin.status).toBe(400);
      expect(JSON.stringify(admin.body.message)).toMatch(/isAdmin should not exist/);
    });
  });

  describe('limits, each breached once', () => {
    it('request body over 2 MB: 413 naming the limit', async () => {
      const reply = await call('POST', '/v1/adventures', owner.key, {
        ...aScenario(),
        plotEssentials: 'x'.repeat(LIMITS.bodyBytes),
      });
      expect(reply.status).toBe(413);
      expect(reply.body.message).toMatch(/2 MB limit/);
    });

    it('import body over 20 MB: 413 naming the limit', async () => {
      const reply = await call(
        'POST',
        '/v1/adventures/import',
        owner.key,
        undefined,
        JSON.stringify({ events: 'x'.repeat(LIMITS.importBodyBytes) }),
      );
      expect(reply.status).toBe(413);
      expect(reply.body.message).toMatch(/20 MB limit/);
    });

    it('action text over 20,000 characters', async () => {
      const reply = await call('POST', `/v1/adventures/${adventureId}/actions`, owner.key, {
        type: 'story',
        text: 'x'.repeat(LIMITS.actionChars + 1),
      });
      expect(reply.status).toBe(400);
      expect(JSON.stringify(reply.body.message)).toMatch(/20000/);
    });

    it('card entry and plot fields over 50,000 characters; 50,000 is accepted', async () => {
      const card = (entry: string) => ({ name: 'Long', keys: 'long', entry });
      const ok = await call(
        'POST',
        `/v1/adventures/${adventureId}/story-cards`,
        owner.key,
        card('x'.repeat(LIMITS.proseChars)),
      );
      expect(ok.status).toBe(201);
      const long = await call(
        'POST',
        `/v1/adventures/${adventureId}/story-cards`,
        owner.key,
        card('x'.repeat(LIMITS.proseChars + 1)),
      );
      expect(long.status).toBe(400);
      expect(JSON.stringify(long.body.message)).toMatch(/50000/);
      const plot = await call('PATCH', `/v1/adventures/${adventureId}`, owner.key, {
        plotEssentials: 'x'.repeat(LIMITS.proseChars + 1),
      });
      expect(plot.status).toBe(400);
      expect(JSON.stringify(plot.body.message)).toMatch(/50000/);
    });

    it('story cards per adventure over 5,000: 422 naming the limit', async () => {
      const cards = Array.from({ length: LIMITS.storyCardsPerAdventure + 1 }, (_, i) => ({
        name: `Card ${i}`,
        keys: `k${i}`,
        entry: 'e',
      }));
      const reply = await call('POST', '/v1/adventures', owner.key, {
        ...aScenario(),
        storyCards: cards,
      });
      expect(reply.status).toBe(422);
      expect(reply.body.message).toMatch(/at most 5000 story cards/);
    });

    it('adventures per user over 100: 422 naming the limit', async () => {
      const { user, key } = await userWithKey(harness, 'prolific');
      for (let i = 0; i < LIMITS.adventuresPerUser; i++) {
        const created = await call('POST', '/v1/adventures', key, aScenario());
        expect(created.status).toBe(201);
      }
      const refused = await call('POST', '/v1/adventures', key, aScenario());
      expect(refused.status).toBe(422);
      expect(refused.body.message).toMatch(/at most 100 adventures/);
      expect(user.id).toBeDefined();
    });
  });
});

describe('rate limits and the daily budget', () => {
  let harness: ApiHarness;
  let call: ReturnType<typeof client>;

  beforeAll(async () => {
    harness = await startApiHarness({
      adminApiKey: ADMIN,
      rateLimitTurnsPerMinute: 2,
      rateLimitWritesPerMinute: 3,
      rateLimitAnonPerMinute: 3,
      rateLimitWindowSeconds: 2,
    });
    call = client(harness);
  });
  afterAll(() => harness?.close());

  const waitForWindow = () => new Promise((resolve) => setTimeout(resolve, 2_100));

  it('limits turns per key: 429 with Retry-After, then the window resets', async () => {
    const { key } = await userWithKey(harness, 'player');
    const { body } = await call('POST', '/v1/adventures', key, aScenario());
    await waitForWindow();
    const act = () =>
      call('POST', `/v1/adventures/${body.id}/actions`, key, { type: 'do', text: 'wait' });
    expect((await act()).status).toBe(202);
    expect((await act()).status).toBe(409); // a turn in flight, still counted
    const limited = await act();
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^[12]$/);
    expect(limited.body.message).toMatch(/rate limit reached: 2 turns per 2 s for this API key/);
    const other = await userWithKey(harness, 'other');
    expect((await call('POST', '/v1/adventures', other.key, aScenario())).status).toBe(201);
    await waitForWindow();
    expect((await act()).status).toBe(409);
  });

  it('limits other writes per key', async () => {
    const { key } = await userWithKey(harness, 'writer');
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await call('POST', '/v1/adventures', key, aScenario())).status);
    }
    expect(statuses).toEqual([201, 201, 201, 429]);
    expect((await call('GET', '/v1/adventures', key)).status).toBe(200); // reads are not writes
    await waitForWindow();
    expect((await call('POST', '/v1/adventures', key, aScenario())).status).toBe(201);
  });

  it('limits requests without a valid key per address', async () => {
    await waitForWindow();
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await call('GET', '/v1/adventures', null)).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    await waitForWindow();
    expect((await call('GET', '/v1/adventures', 'chr_wrong')).status).toBe(401);
  });

  it("refuses new turns once the day's model tokens are spent, naming the budget and the reset", async () => {
    const { key, user } = await userWithKey(harness, 'spender', 1000);
    const { body } = await call('POST', '/v1/adventures', key, aScenario());
    await waitForWindow();
    const turn = await call('POST', `/v1/adventures/${body.id}/actions`, key, {
      type: 'do',
      text: 'spend',
    });
    expect(turn.status).toBe(202);
    // the worker's record of the turn, as the context worker appends it (remote usage)
    const recorded = narrationCommand(turn.body.turnId, randomUUID());
    const narrated = await harness.adventures.handle(
      body.id,
      { ...recorded, data: { ...recorded.data, narrator: 'remote', model: 'paid-model' } },
      { actor: 'worker:context' },
    );
    // ...and its count of the tokens, which the budget check reads (seeded from the log by the
    // check of the first turn)
    const { usage } = (narrated.events[0] as { data: { usage: Usage } }).data;
    await harness.app
      .get(DailyTokenBudget)
      .recordSpend(user.id, { ...usage, model: 'paid-model' }, new Date());
    const refused = await call('POST', `/v1/adventures/${body.id}/actions`, key, {
      type: 'do',
      text: 'more',
    });
    expect(refused.status).toBe(429);
    expect(refused.body.message).toMatch(
      /daily model-token budget of 1000 tokens is spent \(1280 used today\); it resets at .*T00:00:00\.000Z/,
    );
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // reads and other writes still work
    expect((await call('GET', `/v1/adventures/${body.id}`, key)).status).toBe(200);
  });
});
