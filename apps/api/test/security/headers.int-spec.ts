import { ConfigError, loadConfig } from '@chronicle/platform';
import { aScenario, startApiHarness, type ApiHarness } from '../api.harness';
import { rawRequest } from './raw-http';

// HTTP hygiene: what every answer carries, the HTML's content policy, the client address behind
// a proxy (TRUST_PROXY), the admin key's strength, and the models an adventure may name.

describe('headers and settings', () => {
  let api: ApiHarness;

  beforeAll(async () => {
    api = await startApiHarness({
      trustProxy: ['loopback'],
      rateLimitAnonPerMinute: 2,
      modelName: 'house-model',
      modelAllowed: ['house-model', 'house-model-large'],
    });
  });
  afterAll(() => api.close());

  it('no X-Powered-By; nosniff, no-referrer and a content policy on every answer', async () => {
    for (const [path, key] of [
      ['/health', false],
      ['/v1/adventures', true],
      ['/v1/adventures', false],
      ['/nope', true],
    ] as const) {
      const reply = await rawRequest(api.baseUrl, 'GET', path, {
        headers: key ? { authorization: `Bearer ${api.apiKey}` } : {},
      });
      expect(reply.headers['x-powered-by']).toBeUndefined();
      expect(reply.headers['x-content-type-options']).toBe('nosniff');
      expect(reply.headers['referrer-policy']).toBe('no-referrer');
      expect(reply.headers['content-security-policy']).toBe(
        "default-src 'none'; frame-ancestors 'none'",
      );
    }
  });

  it('the docs page has a strict content policy: scripts from this origin only, no framing', async () => {
    const page = await rawRequest(api.baseUrl, 'GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    const policy = String(page.headers['content-security-policy']);
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).toContain("object-src 'none'");
    expect(policy).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline|\*/);
    expect(page.headers['x-powered-by']).toBeUndefined();
  });

  it('TRUST_PROXY: behind a trusted proxy, the anonymous limit counts each client, not the proxy', async () => {
    const from = (address: string) =>
      rawRequest(api.baseUrl, 'GET', '/v1/adventures', { headers: { 'x-forwarded-for': address } });
    expect((await from('203.0.113.1')).status).toBe(401);
    expect((await from('203.0.113.1')).status).toBe(401);
    const third = await from('203.0.113.1');
    expect(third.status).toBe(429);
    expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
    // Another client behind the same proxy has its own count.
    expect((await from('203.0.113.2')).status).toBe(401);
  });

  it('MODEL_ALLOWED bounds settings.model: 422 naming the choices, on create and edit', async () => {
    const refused = await api.request(
      'POST',
      '/v1/adventures',
      aScenario({ settings: { model: 'gpt-4-32k' } }),
    );
    expect(refused.status).toBe(422);
    expect(refused.body.message).toMatch(
      /settings\.model "gpt-4-32k" is not offered on this installation; choose one of "house-model", "house-model-large"/,
    );
    const created = await api.request(
      'POST',
      '/v1/adventures',
      aScenario({ settings: { model: 'house-model-large' } }),
    );
    expect(created.status).toBe(201);
    const edit = await api.request('PATCH', `/v1/adventures/${created.body.id}`, {
      settings: { model: 'other' },
    });
    expect(edit.status).toBe(422);
    const reset = await api.request('PATCH', `/v1/adventures/${created.body.id}`, {
      settings: { model: '' },
    });
    expect(reset.status).toBe(200);
  });

  it('an ADMIN_API_KEY shorter than 32 characters stops start-up, naming it and not echoing it', () => {
    let error: unknown;
    try {
      loadConfig({ ADMIN_API_KEY: 'admin123' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/ADMIN_API_KEY must be at least 32 characters/);
    expect((error as Error).message).not.toContain('admin123');
    expect(loadConfig({ ADMIN_API_KEY: 'k'.repeat(32) }).adminApiKey).toBe('k'.repeat(32));
    expect(() => loadConfig({ TRUST_PROXY: 'everyone' })).toThrow(/TRUST_PROXY/);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({}).modelAllowed).toEqual([]);
  });
});
