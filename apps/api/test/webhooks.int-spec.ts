import { randomBytes } from 'node:crypto';
import { AccountsRepository } from '@chronicle/accounts';
import { sql } from 'kysely';
import { EVENT_STORE_DB, type Database } from '@chronicle/event-store';
import type { Kysely } from 'kysely';
import { aScenario, startApiHarness, type ApiHarness } from './api.harness';

// An owner's webhook routes against the real API, with private targets refused (the default):
// registration, the secret shown once, the SSRF refusals, validation and other users' 404s.
// Deliveries are the memory worker's (apps/memory-worker/src/webhooks.int-spec.ts).

let api: ApiHarness;

beforeAll(async () => {
  api = await startApiHarness({
    webhooksSecretKey: randomBytes(32).toString('base64'),
    webhooksAllowPrivateAddresses: false,
  });
});
afterAll(() => api?.close());

/** A public address by its literal, so no test depends on a resolver. */
const PUBLIC_URL = 'https://93.184.216.34/chronicle';

async function adventure(request = api.request): Promise<string> {
  const created = await request('POST', '/v1/adventures', aScenario());
  expect(created.status).toBe(201);
  return created.body.id as string;
}

async function anotherUser() {
  const accounts = api.app.get(AccountsRepository);
  const other = await accounts.createUser({ name: 'someone else' });
  const key = (await accounts.createKey(other.id))!.key;
  return (method: string, path: string, body?: unknown) =>
    api.request(method, path, body, { authorization: `Bearer ${key}` });
}

describe('webhook registration', () => {
  it('given a public URL, when registered, then the secret is shown once and never again, and is not stored in clear', async () => {
    const created = await api.request('POST', '/v1/webhooks', {
      url: PUBLIC_URL,
      events: ['turn.narrated', 'turn.failed'],
      description: 'Discord bot',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      url: PUBLIC_URL,
      events: ['turn.narrated', 'turn.failed'],
      adventureId: null,
      description: 'Discord bot',
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const id = created.body.id as string;

    const one = await api.request('GET', `/v1/webhooks/${id}`);
    expect(one.status).toBe(200);
    expect(one.body).not.toHaveProperty('secret');
    const list = await api.request('GET', '/v1/webhooks');
    expect(list.body.webhooks.map((w: { id: string }) => w.id)).toContain(id);
    expect(JSON.stringify(list.body)).not.toContain('whsec_');

    const db = api.app.get<Kysely<Database>>(EVENT_STORE_DB);
    const { rows } = await sql<{
      row: string;
    }>`SELECT row_to_json(w)::text AS row FROM webhooks w WHERE id = ${id}`.execute(db);
    const secretBody = (created.body.secret as string).slice('whsec_'.length);
    expect(rows[0].row).not.toContain(secretBody);
    expect(rows[0].row).not.toContain(Buffer.from(secretBody, 'base64').toString('hex'));
  });

  it("given one adventure of yours, then the webhook is scoped to it; another user's adventure or none is 404", async () => {
    const mine = await adventure();
    const scoped = await api.request('POST', '/v1/webhooks', {
      url: PUBLIC_URL,
      events: ['turn.narrated'],
      adventureId: mine,
    });
    expect(scoped.status).toBe(201);
    expect(scoped.body.adventureId).toBe(mine);

    const other = await anotherUser();
    const theirs = await adventure(other);
    const before = (await api.request('GET', '/v1/webhooks')).body.webhooks.length;
    for (const adventureId of [theirs, '00000000-0000-4000-8000-000000000000']) {
      const refused = await api.request('POST', '/v1/webhooks', {
        url: PUBLIC_URL,
        events: ['turn.narrated'],
        adventureId,
      });
      expect(refused.status).toBe(404);
      expect(refused.body.message).toBe(`adventure ${adventureId} not found`);
    }
    expect((await api.request('GET', '/v1/webhooks')).body.webhooks).toHaveLength(before);
  });

  it.each([
    ['http://127.0.0.1:8080/hook', '127.0.0.1'],
    ['http://10.1.2.3/hook', '10.1.2.3'],
    ['http://169.254.169.254/latest/meta-data', '169.254.169.254'],
    ['http://192.168.1.10/hook', '192.168.1.10'],
    ['http://[::1]:8080/hook', '::1'],
    ['http://[fd00::1]/hook', 'fd00::1'],
    ['http://[fe80::1]/hook', 'fe80::1'],
    ['http://[::ffff:127.0.0.1]/hook', '::ffff:7f00:1'],
    ['http://localhost:9/hook', 'localhost'],
  ])(
    'given %s and private targets not allowed, then 400 naming the address, and nothing is written',
    async (url, named) => {
      const before = (await api.request('GET', '/v1/webhooks')).body.webhooks.length;
      const refused = await api.request('POST', '/v1/webhooks', { url, events: ['turn.narrated'] });
      expect(refused.status).toBe(400);
      expect(refused.body.message).toMatch(/private or loopback address/);
      expect(refused.body.message).toContain(named);
      expect((await api.request('GET', '/v1/webhooks')).body.webhooks).toHaveLength(before);
    },
  );

  it.each([
    [{ events: ['turn.narrated'] }, /url is missing/],
    [{ url: 'not a url', events: ['turn.narrated'] }, /absolute URL/],
    [{ url: 'ftp://93.184.216.34/', events: ['turn.narrated'] }, /https:\/\/ or http:\/\//],
    [{ url: 'https://u:p@93.184.216.34/', events: ['turn.narrated'] }, /credentials/],
    [
      { url: PUBLIC_URL, events: [] },
      /events must name one or more of turn.narrated, turn.failed, member.joined, round.opened/,
    ],
    [
      { url: PUBLIC_URL, events: ['round.closed'] },
      /events may hold only turn.narrated, turn.failed, member.joined, round.opened/,
    ],
    [{ url: PUBLIC_URL }, /events is missing/],
    [
      { url: PUBLIC_URL, events: ['turn.narrated'], adventureId: 'nope' },
      /adventureId must be the uuid/,
    ],
  ])('given %j, then 400 saying what to fix', async (body, message) => {
    const refused = await api.request('POST', '/v1/webhooks', body);
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body.message)).toMatch(message);
  });
});

describe('a webhook of yours', () => {
  it("given another user's webhook, then every route answers 404; deleted, it is gone for you too", async () => {
    const other = await anotherUser();
    const theirs = await other('POST', '/v1/webhooks', {
      url: PUBLIC_URL,
      events: ['turn.failed'],
    });
    expect(theirs.status).toBe(201);
    const id = theirs.body.id as string;
    for (const [method, path] of [
      ['GET', `/v1/webhooks/${id}`],
      ['GET', `/v1/webhooks/${id}/deliveries`],
      ['DELETE', `/v1/webhooks/${id}`],
    ]) {
      const answer = await api.request(method, path);
      expect(answer.status).toBe(404);
      expect(answer.body.message).toBe(`webhook ${id} not found`);
    }
    expect(
      (await api.request('GET', '/v1/webhooks')).body.webhooks.map((w: { id: string }) => w.id),
    ).not.toContain(id);

    expect((await other('GET', `/v1/webhooks/${id}/deliveries`)).body).toEqual({ deliveries: [] });
    expect((await other('DELETE', `/v1/webhooks/${id}`)).status).toBe(204);
    expect((await other('GET', `/v1/webhooks/${id}`)).status).toBe(404);
    expect((await other('DELETE', `/v1/webhooks/${id}`)).status).toBe(404);
  });

  it('given a path id that is not a uuid, then 400', async () => {
    const answer = await api.request('GET', '/v1/webhooks/nope');
    expect(answer.status).toBe(400);
    expect(answer.body.message).toMatch(/webhookId must be a UUID/);
  });
});

describe('webhooks on a server without WEBHOOKS_SECRET_KEY', () => {
  let off: ApiHarness;
  beforeAll(async () => {
    off = await startApiHarness({ webhooksSecretKey: undefined });
  });
  afterAll(() => off?.close());

  it('given no key, then the routes answer 503 naming the variable, and nothing is written', async () => {
    const refused = await off.request('POST', '/v1/webhooks', {
      url: PUBLIC_URL,
      events: ['turn.narrated'],
    });
    expect(refused.status).toBe(503);
    expect(refused.body.message).toMatch(/WEBHOOKS_SECRET_KEY/);
    expect((await off.request('GET', '/v1/webhooks')).status).toBe(503);
  });
});
