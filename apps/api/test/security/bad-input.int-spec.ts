import { randomUUID } from 'node:crypto';
import { aScenario, startApiHarness, type ApiHarness } from '../api.harness';
import { bearer, rawRequest } from './raw-http';

// Bad input, everywhere: every path and query parameter and header is checked with a message
// naming it, never a 500; a body of a type the route does not take is a 415; a missing field
// says it is missing; the parser's own words never reach the client.

describe('bad input', () => {
  let api: ApiHarness;
  let id: string;

  beforeAll(async () => {
    api = await startApiHarness();
    id = (await api.request('POST', '/v1/adventures', aScenario())).body.id;
  });
  afterAll(() => api.close());

  const send = (
    method: string,
    path: string,
    body?: string,
    headers: Record<string, string> = {},
  ) =>
    rawRequest(api.baseUrl, method, path, {
      headers: { ...bearer(api.apiKey), ...headers },
      ...(body !== undefined && { body }),
    });

  it.each([
    [
      'a version past any integer',
      () => `/v1/adventures/${id}/at/99999999999999999999`,
      /path parameter version must be a stream version/,
    ],
    ['a negative version', () => `/v1/adventures/${id}/at/-1`, /path parameter version/],
    [
      'an adventure id that is no UUID',
      () => '/v1/adventures/not-an-id',
      /path parameter id must be a UUID/,
    ],
    [
      'a turn id that is no UUID',
      () => `/v1/adventures/${id}/turns/abc`,
      /path parameter turnId must be a UUID/,
    ],
    [
      'an over-long memory id',
      () => `/v1/adventures/${id}/memories/${'m'.repeat(300)}/pin`,
      /path parameter memoryId must be an id of 1 to 200/,
    ],
    [
      'a page limit past any integer',
      () => `/v1/adventures?limit=99999999999999999999`,
      /limit must be at most 200/,
    ],
    [
      'a page limit that is no number',
      () => `/v1/adventures/${id}/events?limit=many`,
      /limit must be a whole number/,
    ],
    [
      'a query parameter given twice',
      () => `/v1/adventures/${id}/turns/${randomUUID()}/stream?lastEventId=1-0&lastEventId=2-0`,
      /query parameter lastEventId must be given once/,
    ],
  ])('%s: 400 naming it', async (_, path, message) => {
    const method = path().endsWith('/pin') ? 'POST' : 'GET';
    const reply = await send(method, path());
    expect(reply.status).toBe(400);
    expect(JSON.stringify(reply.body.message)).toMatch(message);
  });

  it('a Last-Event-ID that this stream never sent: 400 naming the header', async () => {
    const turn = await api.request('POST', `/v1/adventures/${id}/actions`, {
      type: 'do',
      text: 'wait',
    });
    const reply = await send('GET', turn.body.stream, undefined, { 'last-event-id': 'garbage' });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/Last-Event-ID/);
    await api.request('POST', `/v1/adventures/${id}/turns/${turn.body.turnId}/cancel`);
  });

  it('a body of a media type the route does not take: 415 naming what it takes', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const reply = await send('POST', '/v1/adventures', 'title=x', { 'content-type': type });
      expect(reply.status).toBe(415);
      expect(reply.body.message).toMatch(/send the body as application\/json/);
    }
    const untyped = await send('POST', '/v1/adventures', '{"title":"x"}');
    expect(untyped.status).toBe(415);
    expect(untyped.body.message).toMatch(/no Content-Type/);
  });

  it('a missing required field says it is missing', async () => {
    const { title: _title, ...rest } = aScenario();
    const reply = await api.request('POST', '/v1/adventures', rest);
    expect(reply.status).toBe(400);
    expect(reply.body.message).toContain('title is missing');
    expect(JSON.stringify(reply.body.message)).not.toMatch(
      /title is too long|title must be a string/,
    );
  });

  it('JSON nested 5,000 deep is refused cleanly; bad JSON does not echo the parser', async () => {
    const deep = `${'['.repeat(5_000)}${']'.repeat(5_000)}`;
    const nested = await send('POST', '/v1/adventures', `{"title":${deep}}`, {
      'content-type': 'application/json',
    });
    expect(nested.status).toBe(400);
    expect(nested.body.message).toMatch(/nests arrays and objects more than 64 deep/);
    expect(nested.text).not.toMatch(/call stack/i);
    const broken = await send('POST', '/v1/adventures', '{"title": "x",', {
      'content-type': 'application/json',
    });
    expect(broken.status).toBe(400);
    expect(broken.body.message).toMatch(/not valid JSON/);
    expect(broken.text).not.toMatch(/Unexpected|position|SyntaxError|JSON\.parse/);
  });

  it('a NUL in a title is a 400, never a 500', async () => {
    const reply = await api.request(
      'POST',
      '/v1/adventures',
      aScenario({ title: 'The\u0000Bell' }),
    );
    expect(reply.status).toBe(400);
    expect(JSON.stringify(reply.body.message)).toMatch(/NUL/);
  });
});
