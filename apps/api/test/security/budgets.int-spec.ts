import { AccountsRepository, DailyTokenBudget, sumUserUsage } from '@chronicle/accounts';
import {
  startFakeOpenAiServer,
  type FakeOpenAiServer,
} from '../../../../test/support/fake-openai-server';
import { aScenario, fakeModelConfig, startApiHarness, type ApiHarness } from '../api.harness';

// Every model call is paid for: a regeneration records what it cost in the log and counts
// toward the daily budget; once the budget is spent every route that calls a model answers 429
// with Retry-After; and a synchronous model call counts against the turn limit like a turn.

describe('model budgets', () => {
  let server: FakeOpenAiServer & { baseURL: string };
  let api: ApiHarness;

  beforeAll(async () => {
    server = await startFakeOpenAiServer({
      instant: true,
      defaultReply: {
        text: 'Mira rang the bell.',
        usage: { promptTokens: 40, completionTokens: 10 },
      },
    });
    api = await startApiHarness({
      ...fakeModelConfig(server),
      rateLimitTurnsPerMinute: 5,
    });
  });
  afterAll(async () => {
    await api?.close();
    await server?.close();
  });

  /** A user of their own (their own turn-limit counter and budget), and an adventure of theirs. */
  async function player(dailyTokenBudget: number | null = null) {
    const accounts = api.app.get(AccountsRepository);
    const user = await accounts.createUser({ name: 'player', dailyTokenBudget });
    const key = (await accounts.createKey(user.id))!.key;
    const headers = { authorization: `Bearer ${key}` };
    const id = (await api.request('POST', '/v1/adventures', aScenario(), headers)).body.id;
    return { user, headers, id: id as string };
  }

  it('a regeneration records its usage in the log and counts it toward the budget', async () => {
    const { user, headers, id } = await player();
    const reply = await api.request(
      'POST',
      `/v1/adventures/${id}/summary/regenerate`,
      undefined,
      headers,
    );
    expect(reply.status).toBe(200);
    const log = await api.request('GET', `/v1/adventures/${id}/events`, undefined, headers);
    const written = log.body.events.find((e: { type: string }) => e.type === 'SummaryWritten');
    expect(written.data.usage).toEqual({
      model: 'fake-model',
      promptTokens: 40,
      completionTokens: 10,
      cachedTokens: 0,
    });
    const usage = await sumUserUsage(api.database.db as never, user.id, {
      from: new Date(Date.now() - 60_000),
    });
    expect(usage.lines).toEqual([
      expect.objectContaining({
        model: 'fake-model',
        purpose: 'summary',
        promptTokens: 40,
        completionTokens: 10,
      }),
    ]);
    expect(await api.app.get(DailyTokenBudget).usedToday(user.id, new Date())).toBe(50);
  });

  it('a spent budget answers 429 with Retry-After on every route that calls a model', async () => {
    const { headers, id } = await player(50);
    expect(
      (await api.request('POST', `/v1/adventures/${id}/summary/regenerate`, undefined, headers))
        .status,
    ).toBe(200);
    for (const [method, path, body] of [
      ['POST', `/v1/adventures/${id}/summary/regenerate`, undefined],
      ['POST', `/v1/adventures/${id}/context/preview`, undefined],
      ['POST', `/v1/adventures/${id}/actions`, { type: 'do', text: 'look' }],
      ['POST', `/v1/adventures/${id}/retry`, {}],
    ] as const) {
      const reply = await api.request(method, path, body, headers);
      expect({ path, status: reply.status }).toEqual({ path, status: 429 });
      expect(reply.body.message).toMatch(/daily model-token budget of 50 tokens is spent/);
      expect(Number(reply.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(server.requestsTo('/v1/chat/completions')).toHaveLength(2);
  });

  it('regenerations count against the turn limit like turns', async () => {
    const { headers, id } = await player();
    for (let i = 0; i < 5; i++) {
      expect(
        (await api.request('POST', `/v1/adventures/${id}/summary/regenerate`, undefined, headers))
          .status,
      ).toBe(200);
    }
    const limited = await api.request(
      'POST',
      `/v1/adventures/${id}/actions`,
      { type: 'do', text: 'x' },
      headers,
    );
    expect(limited.status).toBe(429);
    expect(limited.body.message).toMatch(/5 turns per 60 s/);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('a provider failure reaches the player without the endpoint or the provider’s words', async () => {
    const { headers, id } = await player();
    server.enqueue({ status: 500, errorMessage: 'upstream db-7 exploded at 10.1.2.3' });
    const reply = await api.request(
      'POST',
      `/v1/adventures/${id}/summary/regenerate`,
      undefined,
      headers,
    );
    expect(reply.status).toBe(502);
    const text = JSON.stringify(reply.body);
    expect(text).not.toContain(server.baseURL);
    expect(text).not.toContain('127.0.0.1');
    expect(text).not.toContain('db-7');
    expect(text).toMatch(/internal error/);
  });
});
