import { randomUUID } from 'node:crypto';
import { adventureStreamId } from '@chronicle/adventure';
import { deterministicEventId } from '@chronicle/adventure-store';
import { modelReply } from '@chronicle/adventure/testing';
import { sql } from 'kysely';
import { PlayerDailyCap } from '../src/adventures/player-daily-cap';
import { aScenario, startApiHarness, type ApiHarness } from './api.harness';

// Who pays in a room (spec/multiplayer.md §3.5, §4 item 5): the host's budget, a per-player
// daily cap that refuses only the player over it, and the room's ledger by member.

let api: ApiHarness;

beforeAll(async () => {
  api = await startApiHarness();
});

afterAll(async () => {
  await api?.close();
});

async function newRoom(players: string[], perPlayerDailyTokens: number): Promise<string> {
  const reply = await api.request('POST', '/v1/adventures', aScenario());
  expect(reply.status).toBe(201);
  const id: string = reply.body.id;
  const now = new Date().toISOString();
  for (const userId of players) {
    const code = `code-${randomUUID().slice(0, 8)}`;
    await api.adventures.handle(
      id,
      { type: 'CreateInvite', data: { code, role: 'player', now } },
      { actor: api.userId },
    );
    await api.adventures.handle(
      id,
      {
        type: 'JoinRoom',
        data: { code, userId, character: { name: `P${userId.slice(0, 4)}` }, now },
      },
      { actor: userId },
    );
  }
  await api.adventures.handle(
    id,
    { type: 'EditAdventure', data: { settings: { perPlayerDailyTokens } } },
    { actor: api.userId },
  );
  return id;
}

/** A narration of the turn in flight, as the worker records it, by a paid model. */
async function narrate(adventureId: string, turnId: string, tokens: number): Promise<void> {
  await api.adventures.handle(
    adventureId,
    {
      type: 'RecordNarration',
      key: deterministicEventId(turnId, 'narrated'),
      data: {
        turnId,
        actionId: randomUUID(),
        text: 'It is done.',
        reply: modelReply('It is done.', []),
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

/**
 * Calls a room's players made, as model_calls holds them once a turn names each action's sender:
 * `members` shares the call. (room.payers names them from each action's sender.)
 */
async function seedCall(adventureId: string, members: string[], tokens: number): Promise<void> {
  const version = 100_000 + Math.floor(Math.random() * 100_000);
  await sql`
    INSERT INTO model_calls (stream_id, version, user_id, purpose, model, prompt_tokens,
                             completion_tokens, cached_tokens, members)
    VALUES (${adventureStreamId(adventureId)}, ${version}, ${api.userId}, 'narration',
            'fake-model', ${tokens}, 0, 0, ${members})
  `.execute(api.database.db);
}

describe('who pays in a room', () => {
  it("given a room, when the host's turn is narrated, then the call is charged to the host and names the host as the member it answered", async () => {
    const room = await newRoom([randomUUID()], 0);
    const turn = await api.request('POST', `/v1/adventures/${room}/actions`, {
      type: 'do',
      text: 'Light the lamp',
    });
    expect(turn.status).toBe(202);
    await narrate(room, turn.body.turnId, 40);
    const rows = await sql<{ user_id: string; members: string[] | null }>`
      SELECT user_id, members FROM model_calls WHERE stream_id = ${adventureStreamId(room)}
    `.execute(api.database.db);
    expect(rows.rows).toEqual([{ user_id: api.userId, members: [api.userId] }]);
  });

  it('given a one-player adventure, when a turn is narrated, then its call names no members (as before rooms)', async () => {
    const reply = await api.request('POST', '/v1/adventures', aScenario());
    const turn = await api.request('POST', `/v1/adventures/${reply.body.id}/actions`, {
      type: 'do',
      text: 'Wait',
    });
    await narrate(reply.body.id, turn.body.turnId, 10);
    const rows = await sql<{ members: string[] | null }>`
      SELECT members FROM model_calls WHERE stream_id = ${adventureStreamId(reply.body.id)}
    `.execute(api.database.db);
    expect(rows.rows).toEqual([{ members: null }]);
  });

  it('given a player over perPlayerDailyTokens, then they are refused with 429 naming the cap while the host and the other player play on', async () => {
    const over = randomUUID();
    const under = randomUUID();
    const room = await newRoom([over, under], 100);
    await seedCall(room, [over], 80);
    await seedCall(room, [over, under], 60); // 30 each: `over` is at 110, `under` at 30

    const cap = api.app.get(PlayerDailyCap);
    const refused = await cap.assertWithin(room, over).then(
      () => null,
      (error: Error & { kind?: string }) => error,
    );
    expect(refused?.kind).toBe('rate_limited');
    expect(refused?.message).toContain('perPlayerDailyTokens is 100');
    expect(refused?.message).toContain('used 110 today');
    await expect(cap.assertWithin(room, under)).resolves.toBeUndefined();
    await expect(cap.assertWithin(room, api.userId)).resolves.toBeUndefined();

    // The host plays on over HTTP: the cap is a player's, the room's budget is the host's.
    const hostTurn = await api.request('POST', `/v1/adventures/${room}/actions`, {
      type: 'do',
      text: 'Go on',
    });
    expect(hostTurn.status).toBe(202);
  });

  it('given a room with shared calls, when its ledger is read by member, then each member has their even share and the others none of theirs', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const room = await newRoom([a, b], 0);
    await seedCall(room, [a], 100);
    await seedCall(room, [a, b], 50);
    const other = await newRoom([randomUUID()], 0);
    await seedCall(other, [a], 999);

    const reply = await api.request('GET', `/v1/adventures/${room}/usage`);
    expect(reply.status).toBe(200);
    expect(reply.body.groupBy).toBe('member');
    const byMember = Object.fromEntries(
      reply.body.groups.map((g: { key: string; promptTokens: number }) => [g.key, g.promptTokens]),
    );
    expect(byMember).toEqual({ [a]: 125, [b]: 25 });
    expect(reply.body.totals.promptTokens).toBe(150);

    const bad = await api.request('GET', `/v1/adventures/${room}/usage?groupBy=user`);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('groupBy must be one of member, day, model');
  });
});
