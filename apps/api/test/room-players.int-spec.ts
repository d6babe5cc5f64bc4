import { randomUUID } from 'node:crypto';
import { AccountsRepository, DailyTokenBudget } from '@chronicle/accounts';
import { adventureStreamId } from '@chronicle/adventure';
import { deterministicEventId } from '@chronicle/adventure-store';
import { modelReply } from '@chronicle/adventure/testing';
import { sql } from 'kysely';
import { aScenario, startApiHarness, type ApiHarness, type ApiReply } from './api.harness';

// A room's players over HTTP, each with their own API key (spec/multiplayer.md §3.5, §3.8): the
// access guard's allow-list lets a player act, pass, withdraw and follow the stream; the round's
// other writes are the host's; a spectator only reads. The host's budget pays for every turn.

let api: ApiHarness;

beforeAll(async () => {
  api = await startApiHarness();
});

afterAll(async () => {
  await api?.close();
});

interface Member {
  id: string;
  key: string;
  call: (method: string, path: string, body?: unknown) => Promise<ApiReply>;
}

async function aUser(name: string, dailyTokenBudget: number | null = null): Promise<Member> {
  const accounts = api.app.get(AccountsRepository);
  const user = await accounts.createUser({ name, dailyTokenBudget });
  const key = (await accounts.createKey(user.id))!.key;
  return {
    id: user.id,
    key,
    call: (method, path, body) =>
      api.request(method, path, body, { authorization: `Bearer ${key}` }),
  };
}

/** A room hosted by `host` with one player and one spectator, under `turnPolicy`. */
async function aRoom(host: Member, turnPolicy: 'round' | 'hot-seat' | 'free') {
  const created = await host.call('POST', '/v1/adventures', aScenario());
  expect(created.status).toBe(201);
  const id: string = created.body.id;
  const join = async (role: 'player' | 'spectator', name: string) => {
    const invite = await host.call('POST', `/v1/adventures/${id}/invites`, { role });
    expect(invite.status).toBe(201);
    const member = await aUser(name);
    const joined = await member.call('POST', invite.body.url, { character: { name } });
    expect(joined.status).toBe(201);
    return member;
  };
  const player = await join('player', 'Mira');
  const spectator = await join('spectator', 'Sam');
  const edited = await host.call('PATCH', `/v1/adventures/${id}`, { settings: { turnPolicy } });
  expect(edited.status).toBe(200);
  return { id, player, spectator };
}

/** The worker's narration of the turn in flight, by a paid model. */
async function narrate(adventureId: string, turnId: string, tokens: number): Promise<void> {
  await api.adventures.handle(
    adventureId,
    {
      type: 'RecordNarration',
      key: deterministicEventId(turnId, 'narrated'),
      data: {
        turnId,
        actionId: randomUUID(),
        text: 'Both are answered.',
        reply: modelReply('Both are answered.', []),
        usage: { promptTokens: tokens, completionTokens: 0, cachedTokens: 0 },
        model: 'fake-model',
        narrator: 'remote',
        finishReason: 'stop',
        contextManifest: {},
        latencyMs: 2,
      },
    },
    { actor: 'worker:context' },
  );
}

const act = (text: string) => ({ type: 'do', text, id: randomUUID() });

describe('room players over HTTP with their own keys', () => {
  it('given a round, when host and player each submit with their own key, then the round closes into one turn answering both, narrated once and charged to the host for both', async () => {
    const host = await aUser('host');
    const { id, player } = await aRoom(host, 'round');

    const first = await player.call('POST', `/v1/adventures/${id}/actions`, act('I forge'));
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ submitted: true });
    expect(first.body.closed).not.toBe(true);
    const last = await host.call('POST', `/v1/adventures/${id}/actions`, act('I watch'));
    expect(last.status).toBe(202);
    expect(last.body).toMatchObject({ submitted: true, closed: true });
    expect(last.body.turnId).toBe(first.body.turnId);

    await narrate(id, last.body.turnId, 60);
    const story = await player.call('GET', `/v1/adventures/${id}`);
    expect(story.status).toBe(200);
    const texts = JSON.stringify(story.body);
    expect(texts).toContain('Both are answered.');
    expect(texts.split('Both are answered.')).toHaveLength(2);
    const calls = await sql<{ user_id: string; members: string[] | null }>`
      SELECT user_id, members FROM model_calls WHERE stream_id = ${adventureStreamId(id)}
    `.execute(api.database.db);
    expect(calls.rows).toEqual([{ user_id: host.id, members: [player.id, host.id] }]);
  });

  it('given a round, when the player passes or withdraws, then 200; when they close, retry, undo, edit or erase, then 403 naming the role', async () => {
    const host = await aUser('host');
    const { id, player } = await aRoom(host, 'round');
    expect((await player.call('POST', `/v1/adventures/${id}/actions`, act('I wait'))).status).toBe(
      202,
    );
    expect(
      (await player.call('DELETE', `/v1/adventures/${id}/rounds/current/submission`)).status,
    ).toBe(200);
    expect((await player.call('POST', `/v1/adventures/${id}/rounds/current/pass`)).status).toBe(
      200,
    );
    for (const [method, path] of [
      ['POST', `/v1/adventures/${id}/rounds/current/close`],
      ['POST', `/v1/adventures/${id}/retry`],
      ['POST', `/v1/adventures/${id}/undo`],
      ['PATCH', `/v1/adventures/${id}/actions/${randomUUID()}`],
      ['DELETE', `/v1/adventures/${id}/actions/${randomUUID()}`],
    ] as const) {
      const reply = await player.call(method, path, {});
      expect([method, path, reply.status]).toEqual([method, path, 403]);
      expect(reply.body.message).toMatch(/you are a player in this room: only the host/);
    }
  });

  it("given hot-seat with the host's seat, when the player acts, then 409 naming the current player; the host acts", async () => {
    const host = await aUser('host');
    const { id, player } = await aRoom(host, 'hot-seat');
    const early = await player.call('POST', `/v1/adventures/${id}/actions`, act('Me first'));
    expect(early.status).toBe(409);
    expect(early.body.currentPlayer).toBe(host.id);
    expect(early.body.message).toContain(host.id);
    expect((await host.call('POST', `/v1/adventures/${id}/actions`, act('I look'))).status).toBe(
      202,
    );
  });

  it('given a spectator, when they act or pass, then 403; player and spectator may both open the stream', async () => {
    const host = await aUser('host');
    const { id, player, spectator } = await aRoom(host, 'round');
    for (const [path, body] of [
      [`/v1/adventures/${id}/actions`, act('Let me')],
      [`/v1/adventures/${id}/rounds/current/pass`, undefined],
    ] as const) {
      const reply = await spectator.call('POST', path, body);
      expect([path, reply.status]).toEqual([path, 403]);
      expect(reply.body.message).toMatch(/you are a spectator/);
    }
    for (const member of [player, spectator]) {
      const aborted = new AbortController();
      const reply = await fetch(`${api.baseUrl}/v1/adventures/${id}/stream`, {
        headers: { authorization: `Bearer ${member.key}`, accept: 'text/event-stream' },
        signal: aborted.signal,
      });
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toContain('text/event-stream');
      aborted.abort();
    }
  });

  it("given the host's daily budget is spent, when a player with a budget of their own acts, then 429 naming the budget: the host pays", async () => {
    const host = await aUser('host', 50);
    const { id, player } = await aRoom(host, 'free');
    const turn = await host.call('POST', `/v1/adventures/${id}/actions`, act('Spend it'));
    expect(turn.status).toBe(202);
    // What the worker charges when it records the narration: the owner's day.
    await api.app
      .get(DailyTokenBudget)
      .recordSpend(
        host.id,
        { promptTokens: 80, completionTokens: 0, cachedTokens: 0, model: 'fake-model' },
        new Date(),
      );

    const refused = await player.call('POST', `/v1/adventures/${id}/actions`, act('My turn'));
    expect(refused.status).toBe(429);
    expect(refused.body.message).toMatch(/daily model-token budget of 50 tokens is spent/);
  });
});
