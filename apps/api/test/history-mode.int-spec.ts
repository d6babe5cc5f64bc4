import { aScenario, startApiHarness, type ApiHarness } from './api.harness';

// The history mode as an adventure setting over HTTP, and the cache figures of the context preview.

let api: ApiHarness;

beforeAll(async () => {
  api = await startApiHarness();
});
afterAll(() => api?.close());

describe('settings.historyMode', () => {
  it('is stable unless asked otherwise, and the preview reports what the cache can serve', async () => {
    const created = await api.request('POST', '/v1/adventures', aScenario());
    expect(created.status).toBe(201);
    const preview = await api.request('POST', `/v1/adventures/${created.body.id}/context/preview`);
    expect(preview.status).toBe(200);
    expect(preview.body.report.cache).toMatchObject({
      historyMode: 'stable',
      blockTokens: 4096,
      expectedCachedShare: expect.any(Number),
    });
  });

  it('takes sliding, and can be changed by an edit', async () => {
    const created = await api.request(
      'POST',
      '/v1/adventures',
      aScenario({ settings: { historyMode: 'sliding' } }),
    );
    const id = created.body.id as string;
    let preview = await api.request('POST', `/v1/adventures/${id}/context/preview`);
    expect(preview.body.report.cache.historyMode).toBe('sliding');
    const edited = await api.request('PATCH', `/v1/adventures/${id}`, {
      settings: { historyMode: 'stable' },
    });
    expect(edited.status).toBe(200);
    preview = await api.request('POST', `/v1/adventures/${id}/context/preview`);
    expect(preview.body.report.cache.historyMode).toBe('stable');
  });

  it('refuses any other value with a 400 naming the setting, and writes nothing', async () => {
    const before = await api.request('GET', '/v1/adventures');
    const refused = await api.request(
      'POST',
      '/v1/adventures',
      aScenario({ settings: { historyMode: 'sideways' } }),
    );
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body.message)).toContain(
      'settings.historyMode must be \\"stable\\" or \\"sliding\\"',
    );
    const after = await api.request('GET', '/v1/adventures');
    expect(after.body).toEqual(before.body);
  });
});
