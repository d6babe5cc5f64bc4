import { AccountsRepository } from '@chronicle/accounts';
import { aScenario, startApiHarness, type ApiHarness, type ApiReply } from './api.harness';

// Rooms over HTTP (spec/multiplayer.md §3.1, §3.8): real Postgres and Redis, each user with their
// own key. Non-members get 404; a member's role decides what else they may do (403 naming it).

let api: ApiHarness;

beforeAll(async () => {
  api = await startApiHarness();
});

afterAll(async () => {
  await api?.close();
});

type Caller = (method: string, path: string, body?: unknown) => Promise<ApiReply>;

async function aUser(name: string): Promise<{ id: string; call: Caller }> {
  const accounts = api.app.get(AccountsRepository);
  const user = await accounts.createUser({ name });
  const key = (await accounts.createKey(user.id))!.key;
  return {
    id: user.id,
    call: (method, path, body) =>
      api.request(method, path, body, { authorization: `Bearer ${key}` }),
  };
}

async function anAdventure(): Promise<string> {
  const created = await api.request('POST', '/v1/adventures', aScenario());
  expect(created.status).toBe(201);
  return created.body.id as string;
}

async function invite(id: string, body: Record<string, unknown> = { role: 'player' }) {
  const reply = await api.request('POST', `/v1/adventures/${id}/invites`, body);
  expect(reply.status).toBe(201);
  return reply.body as { code: string; url: string; role: string };
}

const mira = { character: { name: 'Mira', pronouns: 'she/her', description: 'A smith.' } };

describe('rooms: invites and joining', () => {
  it('given an invite, when a second user joins with their own key, then they are a member (201), a second join answers 200, and the room lists them', async () => {
    const id = await anAdventure();
    const created = await invite(id, { role: 'player', maxUses: 5, expiresInSeconds: 3600 });
    expect(created).toMatchObject({
      code: expect.stringMatching(/^[A-Za-z0-9_-]{24}$/),
      url: `/v1/invites/${created.code}/join`,
      role: 'player',
      maxUses: 5,
      expiresAt: expect.any(String),
    });
    const listed = await api.request('GET', `/v1/adventures/${id}/invites`);
    expect(listed.body.invites).toEqual([expect.objectContaining({ code: created.code, uses: 0 })]);

    const player = await aUser('player');
    const joined = await player.call('POST', created.url, mira);
    expect(joined.status).toBe(201);
    expect(joined.body).toEqual({ adventureId: id, userId: player.id, role: 'player' });
    const again = await player.call('POST', created.url, mira);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(joined.body);

    const members = await player.call('GET', `/v1/adventures/${id}/members`);
    expect(members.status).toBe(200);
    expect(members.body.members).toEqual([
      { userId: api.userId, role: 'host', character: null, status: 'active' },
      { userId: player.id, role: 'player', character: mira.character, status: 'active' },
    ]);
    const read = await player.call('GET', `/v1/adventures/${id}`);
    expect(read.status).toBe(200);
    const mine = await player.call('GET', '/v1/adventures?limit=200');
    expect(mine.body.adventures.map((a: { id: string }) => a.id)).toContain(id);
  });

  it('given a stranger, when they read or write the adventure, then 404 as for a missing one', async () => {
    const id = await anAdventure();
    const stranger = await aUser('stranger');
    for (const [method, path] of [
      ['GET', `/v1/adventures/${id}`],
      ['GET', `/v1/adventures/${id}/members`],
      ['GET', `/v1/adventures/${id}/export`],
      ['POST', `/v1/adventures/${id}/invites`],
    ]) {
      const reply = await stranger.call(
        method,
        path,
        method === 'POST' ? { role: 'player' } : undefined,
      );
      expect([method, path, reply.status]).toEqual([method, path, 404]);
    }
  });

  it('given an invite of one use that was used, when another user joins, then 410 naming the limit; an expired invite is 410 naming its expiry; an unknown code 404', async () => {
    const id = await anAdventure();
    const once = await invite(id, { role: 'player', maxUses: 1 });
    expect((await (await aUser('first')).call('POST', once.url, mira)).status).toBe(201);
    const late = await aUser('late');
    const usedUp = await late.call('POST', once.url, mira);
    expect(usedUp.status).toBe(410);
    expect(usedUp.body.message).toMatch(/used 1 times, its limit/);

    // Created two hours ago with a minute to live (the decider takes the time from its caller).
    const code = 'expired-invite-code-for-the-test';
    await api.adventures.handle(
      id,
      {
        type: 'CreateInvite',
        data: {
          code,
          role: 'player',
          expiresInSeconds: 60,
          now: new Date(Date.now() - 2 * 3600_000).toISOString(),
        },
      },
      { actor: 'test' },
    );
    const expired = await late.call('POST', `/v1/invites/${code}/join`, mira);
    expect(expired.status).toBe(410);
    expect(expired.body.message).toMatch(/expired at/);
    const unknown = await late.call('POST', '/v1/invites/no-such-code/join', mira);
    expect(unknown.status).toBe(404);
    const noName = await late.call('POST', (await invite(id)).url, { character: {} });
    expect(noName.status).toBe(400);
    expect(noName.body.message).toMatch(/character\.name/);
  });

  it('given a revoked invite, when someone joins with it, then 404', async () => {
    const id = await anAdventure();
    const { code, url } = await invite(id);
    expect((await api.request('DELETE', `/v1/adventures/${id}/invites/${code}`)).status).toBe(200);
    expect((await (await aUser('too-late')).call('POST', url, mira)).status).toBe(404);
  });
});

describe('rooms: roles', () => {
  it('given a spectator, when they read, then 200; when they act, edit, invite or list invites, then 403 naming the role', async () => {
    const id = await anAdventure();
    const spectator = await aUser('spectator');
    expect(
      (await spectator.call('POST', (await invite(id, { role: 'spectator' })).url, mira)).status,
    ).toBe(201);
    expect((await spectator.call('GET', `/v1/adventures/${id}`)).status).toBe(200);
    expect((await spectator.call('GET', `/v1/adventures/${id}/export`)).status).toBe(200);
    for (const [method, path, body] of [
      [
        'POST',
        `/v1/adventures/${id}/actions`,
        { type: 'do', text: 'wave', id: crypto.randomUUID() },
      ],
      ['PATCH', `/v1/adventures/${id}`, { title: 'Mine now' }],
      ['POST', `/v1/adventures/${id}/invites`, { role: 'player' }],
      ['GET', `/v1/adventures/${id}/invites`, undefined],
    ] as const) {
      const reply = await spectator.call(method, path, body);
      expect([method, path, reply.status]).toEqual([method, path, 403]);
      expect(reply.body.message).toMatch(/you are a spectator/);
    }
  });

  it("given a player, when they edit the adventure or retry, then 403 naming the role; their own character they may change, another member's not", async () => {
    const id = await anAdventure();
    const player = await aUser('player');
    const other = await aUser('other');
    const { url } = await invite(id);
    await player.call('POST', url, mira);
    await other.call('POST', url, { character: { name: 'Ren' } });
    const edit = await player.call('PATCH', `/v1/adventures/${id}`, {
      settings: { turnPolicy: 'round' },
    });
    expect(edit.status).toBe(403);
    expect(edit.body.message).toMatch(/you are a player/);
    const retry = await player.call('POST', `/v1/adventures/${id}/retry`, {});
    expect(retry.status).toBe(403);
    const renamed = await player.call('PATCH', `/v1/adventures/${id}/members/${player.id}`, {
      character: { name: 'Mira Vale' },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.character).toEqual({ name: 'Mira Vale', pronouns: '', description: '' });
    const promote = await player.call('PATCH', `/v1/adventures/${id}/members/${player.id}`, {
      role: 'host',
    });
    expect(promote.status).toBe(403);
    const theirs = await player.call('PATCH', `/v1/adventures/${id}/members/${other.id}`, {
      character: { name: 'Mine' },
    });
    expect(theirs.status).toBe(403);
    const kick = await player.call('DELETE', `/v1/adventures/${id}/members/${other.id}`);
    expect(kick.status).toBe(403);
  });

  it('given the host, when they set the room settings, then they are kept; a bad one is 400 naming it', async () => {
    const id = await anAdventure();
    const set = await api.request('PATCH', `/v1/adventures/${id}`, {
      settings: {
        turnPolicy: 'round',
        roundTimeoutSeconds: 120,
        idleTimeoutSeconds: 60,
        perPlayerDailyTokens: 5000,
      },
    });
    expect(set.status).toBe(200);
    const read = await api.request('GET', `/v1/adventures/${id}`);
    expect(read.body.settings).toMatchObject({
      turnPolicy: 'round',
      roundTimeoutSeconds: 120,
      idleTimeoutSeconds: 60,
      perPlayerDailyTokens: 5000,
    });
    const bad = await api.request('PATCH', `/v1/adventures/${id}`, {
      settings: { turnPolicy: 'chaos' },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.message)).toMatch(/turnPolicy/);
  });
});

describe('rooms: kick, ban, leave, hand-over', () => {
  it('given a player, when the host kicks them, then they get 404 at once; banned, they cannot rejoin (403); kicked without a ban, they can', async () => {
    const id = await anAdventure();
    const banned = await aUser('banned');
    const kicked = await aUser('kicked');
    const { url } = await invite(id);
    await banned.call('POST', url, mira);
    await kicked.call('POST', url, mira);
    expect((await banned.call('GET', `/v1/adventures/${id}`)).status).toBe(200);

    const ban = await api.request('DELETE', `/v1/adventures/${id}/members/${banned.id}?ban=true`);
    expect(ban.status).toBe(200);
    expect(ban.body).toEqual({ userId: banned.id, removed: true, banned: true });
    expect((await banned.call('GET', `/v1/adventures/${id}`)).status).toBe(404);
    const rejoin = await banned.call('POST', (await invite(id)).url, mira);
    expect(rejoin.status).toBe(403);
    expect(rejoin.body.message).toMatch(/banned/);

    expect((await api.request('DELETE', `/v1/adventures/${id}/members/${kicked.id}`)).status).toBe(
      200,
    );
    expect((await kicked.call('GET', `/v1/adventures/${id}/members`)).status).toBe(404);
    expect((await kicked.call('POST', url, mira)).status).toBe(201);
  });

  it('given a player, when they leave, then they get 404; the host cannot leave (409)', async () => {
    const id = await anAdventure();
    const player = await aUser('leaver');
    await player.call('POST', (await invite(id)).url, mira);
    expect((await player.call('DELETE', `/v1/adventures/${id}/members/${player.id}`)).status).toBe(
      200,
    );
    expect((await player.call('GET', `/v1/adventures/${id}`)).status).toBe(404);
    const hostLeaves = await api.request('DELETE', `/v1/adventures/${id}/members/${api.userId}`);
    expect(hostLeaves.status).toBe(409);
  });

  it('given a player, when the host hands the room over, then the player is owner and host, and the former host is a player', async () => {
    const id = await anAdventure();
    const next = await aUser('next-host');
    await next.call('POST', (await invite(id)).url, mira);
    const handed = await api.request('PATCH', `/v1/adventures/${id}/members/${next.id}`, {
      role: 'host',
    });
    expect(handed.status).toBe(200);
    expect(handed.body).toMatchObject({ userId: next.id, role: 'host' });
    const read = await next.call('GET', `/v1/adventures/${id}`);
    expect(read.body.ownerId).toBe(next.id);
    expect(
      (await next.call('PATCH', `/v1/adventures/${id}`, { title: 'Handed over' })).status,
    ).toBe(200);
    const former = await api.request('PATCH', `/v1/adventures/${id}`, { title: 'Still mine?' });
    expect(former.status).toBe(403);
    const members = await next.call('GET', `/v1/adventures/${id}/members`);
    expect(
      members.body.members.map((m: { userId: string; role: string }) => [m.userId, m.role]),
    ).toEqual([
      [next.id, 'host'],
      [api.userId, 'player'],
    ]);
  });
});

describe('rooms: export, import and time travel', () => {
  it('given a room, when exported and imported by a member, then the importer is host alone and the report names who was dropped; time travel shows the room then', async () => {
    const id = await anAdventure();
    const player = await aUser('importer');
    await player.call('POST', (await invite(id)).url, mira);
    const after = (await api.request('GET', `/v1/adventures/${id}`)).body.version as number;

    const exported = await player.call('GET', `/v1/adventures/${id}/export`);
    expect(exported.status).toBe(200);
    const text = typeof exported.body === 'string' ? exported.body : JSON.stringify(exported.body);
    expect(text).toContain('"MemberJoined"');
    const imported = await api.request('POST', '/v1/adventures/import', text, {
      authorization: `Bearer ${await keyOf(player.id)}`,
      'content-type': 'application/x-ndjson',
    });
    expect(imported.status).toBe(201);
    // The copy's first owner is the importer (AdventureCreated names them), so the exporter's
    // host never was one of its members; the invite that was live is dropped.
    expect(imported.body.room).toMatchObject({ droppedMembers: [], droppedInvites: 1 });
    const copy = imported.body.adventureId as string;
    const members = await player.call('GET', `/v1/adventures/${copy}/members`);
    expect(members.body.members).toEqual([
      expect.objectContaining({ userId: player.id, role: 'host' }),
    ]);
    // The exporter's host is a stranger to the copy.
    expect((await api.request('GET', `/v1/adventures/${copy}`)).status).toBe(404);

    const then = await api.request('GET', `/v1/adventures/${id}/at/1`);
    expect(then.status).toBe(200);
    const now = await api.request('GET', `/v1/adventures/${id}/at/${after}`);
    expect(JSON.stringify(now.body)).toContain(player.id);
    expect(JSON.stringify(then.body)).not.toContain(player.id);
  });
});

async function keyOf(userId: string): Promise<string> {
  const accounts = api.app.get(AccountsRepository);
  return (await accounts.createKey(userId))!.key;
}
