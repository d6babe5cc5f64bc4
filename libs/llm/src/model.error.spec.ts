import { APIConnectionError, APIError } from 'openai';

import { ModelError, parseRetryAfter, scrubSecret, toModelError } from './model.error';

const KEY = 'sk-live-ABCDEFGH12345678wxyz';
const ctx = {
  model: 'm',
  baseURL: 'http://127.0.0.1:9/v1',
  timeoutMs: 120_000,
  apiKey: KEY,
  operation: 'narration',
  nowMs: 1_000_000,
};

describe('scrubSecret', () => {
  it('removes the key, its shortened forms and anything shaped like a key', () => {
    const text = `key ${KEY}; shown as sk-live-ABC***wxyz; header Bearer ${KEY}; other sk-proj-abcdef123`;
    const scrubbed = scrubSecret(text, KEY);
    expect(scrubbed).not.toContain(KEY);
    expect(scrubbed).not.toContain('ABCDEFGH');
    expect(scrubbed).not.toMatch(/sk-/);
    expect(scrubbed).toContain('[redacted]');
  });
});

describe('parseRetryAfter', () => {
  const headers = (values: Record<string, string>) => new Headers(values);

  it('reads seconds, milliseconds and HTTP dates', () => {
    expect(parseRetryAfter(headers({ 'retry-after': '2' }), 0)).toBe(2000);
    expect(parseRetryAfter(headers({ 'retry-after': '0.5' }), 0)).toBe(500);
    expect(parseRetryAfter(headers({ 'retry-after-ms': '750', 'retry-after': '9' }), 0)).toBe(750);
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter(headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:30 GMT' }), now)).toBe(
      30_000,
    );
  });

  it('gives undefined for none or nonsense, and never a negative delay', () => {
    expect(parseRetryAfter(headers({}), 0)).toBeUndefined();
    expect(parseRetryAfter(headers({ 'retry-after': 'soon' }), 0)).toBeUndefined();
    expect(
      parseRetryAfter(headers({ 'retry-after': 'Wed, 01 Jan 2020 00:00:00 GMT' }), Date.now()),
    ).toBe(0);
  });
});

describe('toModelError', () => {
  it('maps 403 to auth and 503 to a retryable server error', () => {
    expect(
      toModelError(new APIError(403, { message: 'no' }, undefined, new Headers()), ctx),
    ).toMatchObject({ kind: 'auth', retryable: false });
    expect(
      toModelError(new APIError(503, { message: 'busy' }, undefined, new Headers()), ctx),
    ).toMatchObject({ kind: 'server', retryable: true });
  });

  it('keeps a quoted key out of the message', () => {
    const error = toModelError(
      new APIError(400, { message: `bad request for ${KEY}` }, undefined, new Headers()),
      ctx,
    );
    expect(error.message).not.toContain(KEY);
  });

  it('says when a host name does not resolve', () => {
    const cause = Object.assign(new Error('getaddrinfo ENOTFOUND nowhere'), { code: 'ENOTFOUND' });
    const error = toModelError(
      new APIConnectionError({ cause: Object.assign(new TypeError('fetch failed'), { cause }) }),
      ctx,
    );
    expect(error).toMatchObject({ kind: 'unreachable', retryable: true });
    expect(error.message).toMatch(/could not be found/);
  });

  it('serialises without the stack or a cause', () => {
    const error = new ModelError({ kind: 'cut', retryable: true, message: 'cut' });
    expect(JSON.parse(JSON.stringify(error))).toEqual({
      name: 'ModelError',
      kind: 'cut',
      retryable: true,
      message: 'cut',
    });
  });
});
