import { randomUUID } from 'node:crypto';
import { narrationCommand } from '@chronicle/adventure/testing';
import { AccountsRepository } from '@chronicle/accounts';
import { aScenario, startApiHarness, type ApiHarness } from './api.harness';

// The cost ledger over the log: the usage every model call's event records, priced from the
// built-in table with an override, for the caller and for the operator.

let api: ApiHarness;

beforeAll(async () => {
  api = await startApiHarness({
    modelPrices: { 'house-model': { input: 1, cachedInput: 0.5, output: 2 } },
  });
});
afterAll(() => api?.close());

async function adventure(request = api.request): Promise<string> {
  const created = await request('POST', '/v1/adventures', aScenario());
  expect(created.status).toBe(201);
  return created.body.id as string;
}

/** One narrated turn whose model call used these tokens. */
async function narrated(
  adventureId: string,
  model: string,
  usage: { promptTokens: number; completionTokens: number; cachedTokens: number },
) {
  const turnId = randomUUID();
  await api.adventures.handle(
    adventureId,
    {
      type: 'SubmitAction',
      data: { turnId, inputType: 'do', text: 'ring the bell', actionId: randomUUID() },
    },
    { actor: 'test' },
  );
  const command = narrationCommand(turnId, randomUUID());
  command.data = { ...command.data, usage, model, narrator: 'remote' };
  await api.adventures.handle(adventureId, command, { actor: 'test' });
}

const mini = { promptTokens: 10_000, completionTokens: 500, cachedTokens: 8_192 };
// gpt-4o-mini: 0.15 uncached, 0.075 cached, 0.60 output per million tokens
const miniCost = (1_808 * 0.15 + 8_192 * 0.075 + 500 * 0.6) / 1e6;

describe('the cost ledger', () => {
  let first: string;
  let second: string;
  let otherUsers: string;

  beforeAll(async () => {
    first = await adventure();
    second = await adventure();
    await narrated(first, 'gpt-4o-mini', mini);
    await narrated(first, 'gpt-4o-mini-2024-07-18', mini);
    await narrated(second, 'house-model', {
      promptTokens: 2_000,
      completionTokens: 1_000,
      cachedTokens: 1_024,
    });
    await narrated(second, 'mystery-model', {
      promptTokens: 300,
      completionTokens: 30,
      cachedTokens: 0,
    });
    // An embedding batch has no event of its own but its usage record
    await api.adventures.handle(
      first,
      {
        type: 'RecordModelUsage',
        data: {
          purpose: 'embedding',
          usage: { model: 'text-embedding-3-small', promptTokens: 1_000, completionTokens: 0 },
        },
      },
      { actor: 'test' },
    );
    // Another user's spending
    const accounts = api.app.get(AccountsRepository);
    const other = await accounts.createUser({ name: 'other' });
    const key = (await accounts.createKey(other.id))!.key;
    otherUsers = await adventure((method, path, body) =>
      api.request(method, path, body, { authorization: `Bearer ${key}` }),
    );
    await narrated(otherUsers, 'gpt-4o', {
      promptTokens: 1_000,
      completionTokens: 100,
      cachedTokens: 0,
    });
  });

  it("prices the caller's calls by model, with cached input at its own price", async () => {
    const reply = await api.request('GET', '/v1/usage?groupBy=model');
    expect(reply.status).toBe(200);
    const byModel = Object.fromEntries(reply.body.groups.map((g: { key: string }) => [g.key, g]));
    expect(Object.keys(byModel).sort()).toEqual([
      'gpt-4o-mini',
      'gpt-4o-mini-2024-07-18',
      'house-model',
      'mystery-model',
      'text-embedding-3-small',
    ]);
    expect(byModel['gpt-4o-mini']).toMatchObject({
      calls: 1,
      promptTokens: 10_000,
      cachedTokens: 8_192,
      completionTokens: 500,
      cachedShare: 0.8192,
    });
    expect(byModel['gpt-4o-mini'].cost).toBeCloseTo(miniCost, 9);
    // a dated name is priced as its model; the override prices the house model
    expect(byModel['gpt-4o-mini-2024-07-18'].cost).toBeCloseTo(miniCost, 9);
    expect(byModel['house-model'].cost).toBeCloseTo((976 * 1 + 1_024 * 0.5 + 1_000 * 2) / 1e6, 9);
    expect(byModel['text-embedding-3-small'].cost).toBeCloseTo((1_000 * 0.02) / 1e6, 9);
    // a model the table does not know is counted, named, and costs nothing here
    expect(byModel['mystery-model']).toMatchObject({ promptTokens: 300, cost: 0 });
    expect(reply.body.unpricedModels).toEqual(['mystery-model']);
    expect(reply.body.totals).toMatchObject({
      calls: 5,
      promptTokens: 23_300,
    });
    expect(reply.body.currency).toBe('USD');
  });

  it('groups by adventure and by UTC day, and leaves other users out', async () => {
    const byAdventure = await api.request('GET', '/v1/usage?groupBy=adventure');
    expect(byAdventure.body.groups.map((g: { key: string }) => g.key).sort()).toEqual(
      [first, second].sort(),
    );
    const today = new Date().toISOString().slice(0, 10);
    const byDay = await api.request('GET', '/v1/usage');
    expect(byDay.body.groupBy).toBe('day');
    expect(byDay.body.groups).toEqual([expect.objectContaining({ key: today, calls: 5 })]);
    // a window that ended yesterday holds nothing
    const earlier = await api.request('GET', `/v1/usage?to=${today}`);
    expect(earlier.body.groups).toEqual([]);
  });

  it('answers 400 naming the parameter to fix', async () => {
    const cases: [string, RegExp][] = [
      ['groupBy=week', /^groupBy must be one of day, adventure, model$/],
      ['groupBy=user', /^groupBy must be one of/],
      ['from=yesterday', /^from must be a date/],
      ['to=2026-13-45', /^to must be a date/],
      ['from=2026-12-02&to=2026-12-01', /^from must be before to$/],
      ['from=2020-01-01&to=2026-01-01', /^from and to may be at most 366 days apart$/],
      ['from=2026-12-01&from=2026-12-02', /^from must be a date/],
      ['limit=5', /^limit is not a parameter/],
    ];
    for (const [query, message] of cases) {
      const reply = await api.request('GET', `/v1/usage?${query}`);
      expect([query, reply.status]).toEqual([query, 400]);
      expect(reply.body.message).toMatch(message);
    }
  });

  it("gives the operator every user's spending, and only to the admin key", async () => {
    const byUser = await api.request('GET', '/v1/admin/usage?groupBy=user');
    expect(byUser.status).toBe(200);
    expect(byUser.body.groups).toHaveLength(2);
    expect(byUser.body.totals.calls).toBe(6);
    const asUser = await api.request('GET', '/v1/admin/usage', undefined, {
      authorization: `Bearer ${api.apiKey}`,
    });
    expect(asUser.status).toBe(401);
  });
});
