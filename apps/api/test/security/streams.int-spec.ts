import { request, type IncomingMessage } from 'node:http';
import Redis from 'ioredis';
import { AccountsRepository } from '@chronicle/accounts';
import { TurnStreamPublisher } from '@chronicle/turn-stream';
import { TEST_REDIS_URL } from '@chronicle/testing';
import { aScenario, startApiHarness, type ApiHarness } from '../api.harness';

// Bounded resources: a key may hold SSE_MAX_PER_KEY streams, an instance SSE_MAX_CONNECTIONS,
// a key RATE_LIMIT_READS_PER_MINUTE reads; and the followers of unfinished turns share
// TURN_STREAM_READERS Redis connections, however many they are (counted with CLIENT LIST).

interface OpenStream {
  status: number;
  headers: IncomingMessage['headers'];
  body: () => string;
  ended: Promise<string>;
  close: () => void;
}

/** Opens an SSE request and resolves once the status is known (and, on 200, a first frame). */
function openStream(baseUrl: string, path: string, key: string): Promise<OpenStream> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path, headers: { authorization: `Bearer ${key}` } },
      (res) => {
        let text = '';
        const ended = new Promise<string>((done) => {
          res.on('end', () => done(text));
          res.on('close', () => done(text));
        });
        const stream: OpenStream = {
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: () => text,
          ended,
          close: () => req.destroy(),
        };
        res.setEncoding('utf8');
        let answered = false;
        res.on('data', (chunk: string) => {
          text += chunk;
          if (!answered && (res.statusCode !== 200 || text.includes('\n\n'))) {
            answered = true;
            resolve(stream);
          }
        });
        res.on('end', () => !answered && resolve(stream));
      },
    );
    req.on('error', (error) => {
      if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(error);
    });
    req.end();
  });
}

async function userKey(api: ApiHarness, name: string): Promise<string> {
  const accounts = api.app.get(AccountsRepository);
  const user = await accounts.createUser({ name });
  return (await accounts.createKey(user.id))!.key;
}

/** An adventure of `key`'s with a turn in flight (no worker runs here), and its stream path. */
async function turnInFlight(api: ApiHarness, key: string) {
  const headers = { authorization: `Bearer ${key}` };
  const id = (await api.request('POST', '/v1/adventures', aScenario(), headers)).body.id;
  const turn = await api.request(
    'POST',
    `/v1/adventures/${id}/actions`,
    { type: 'do', text: 'wait' },
    headers,
  );
  return { id: id as string, turnId: turn.body.turnId as string, path: turn.body.stream as string };
}

describe('stream and read caps', () => {
  let api: ApiHarness;

  beforeAll(async () => {
    api = await startApiHarness({
      sseMaxPerKey: 3,
      sseMaxConnections: 5,
      rateLimitReadsPerMinute: 40,
    });
  });
  afterAll(() => api.close());

  it('a key holds at most SSE_MAX_PER_KEY streams, the instance SSE_MAX_CONNECTIONS; 429 + Retry-After past them', async () => {
    const mine = await userKey(api, 'mine');
    const theirs = await userKey(api, 'theirs');
    const a = await turnInFlight(api, mine);
    const b = await turnInFlight(api, theirs);
    const held: OpenStream[] = [];
    for (let i = 0; i < 3; i++) held.push(await openStream(api.baseUrl, a.path, mine));
    expect(held.map((s) => s.status)).toEqual([200, 200, 200]);
    const fourth = await openStream(api.baseUrl, a.path, mine);
    expect(fourth.status).toBe(429);
    expect(Number(fourth.headers['retry-after'])).toBeGreaterThan(0);
    expect(fourth.body()).toMatch(/SSE_MAX_PER_KEY is 3/);

    // Closing one frees its slot.
    held.shift()!.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    held.push(await openStream(api.baseUrl, a.path, mine));
    expect(held[2].status).toBe(200);

    // 3 + 2 = the instance's 5; the sixth, from any key, is refused.
    for (let i = 0; i < 2; i++) held.push(await openStream(api.baseUrl, b.path, theirs));
    expect(held.slice(3).map((s) => s.status)).toEqual([200, 200]);
    const sixth = await openStream(api.baseUrl, b.path, theirs);
    expect(sixth.status).toBe(429);
    expect(sixth.body()).toMatch(/SSE_MAX_CONNECTIONS is 5/);
    for (const stream of held) stream.close();
  });

  it('reads per key are limited: 429 + Retry-After past RATE_LIMIT_READS_PER_MINUTE', async () => {
    const key = await userKey(api, 'reader');
    const headers = { authorization: `Bearer ${key}` };
    const statuses: number[] = [];
    for (let i = 0; i < 45; i++) {
      statuses.push((await api.request('GET', '/v1/adventures', undefined, headers)).status);
    }
    expect(statuses.slice(0, 40).every((s) => s === 200)).toBe(true);
    expect(statuses.slice(40)).toEqual([429, 429, 429, 429, 429]);
    const refused = await api.request('GET', '/v1/adventures', undefined, headers);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.body.message).toMatch(/40 reads per 60 s/);
  });
});

describe('1,000 followers on one instance', () => {
  let api: ApiHarness;
  let redis: Redis;

  beforeAll(async () => {
    api = await startApiHarness({
      sseMaxPerKey: 2_000,
      sseMaxConnections: 2_000,
      turnStreamReaders: 2,
    });
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    await redis.quit();
    await api.close();
  });

  /** Clients Redis has now: all of them, and the API's stream readers. */
  async function clients() {
    const readerName = `${api.config.queuePrefix}-turn-stream-reader-`;
    const list = (await redis.client('LIST')) as string;
    const lines = list.split('\n').filter((line) => line.trim() !== '');
    return {
      all: lines.length,
      // This API's readers only: other test files' APIs share this Redis under their own prefixes.
      readers: lines.filter((line) => line.includes(` name=${readerName}`)).length,
    };
  }

  it('use at most TURN_STREAM_READERS subscriber connections, and all receive their turn’s end', async () => {
    const key = api.apiKey;
    const turns = [];
    for (let i = 0; i < 10; i++) turns.push(await turnInFlight(api, key));
    const before = await clients();

    // They connect in waves of 100, as watchers arrive, not all in one millisecond.
    const followers: OpenStream[] = [];
    for (let wave = 0; wave < 10; wave++) {
      const opening: Promise<OpenStream>[] = [];
      for (let i = 0; i < 100; i++) opening.push(openStream(api.baseUrl, turns[i % 10].path, key));
      followers.push(...(await Promise.all(opening)));
    }
    expect(followers.every((f) => f.status === 200)).toBe(true);
    expect(followers.every((f) => f.body().includes('event: player'))).toBe(true);

    const during = await clients();
    expect(during.readers).toBeGreaterThan(0);
    expect(during.readers).toBeLessThanOrEqual(2);
    // Other test files share this Redis; one connection per follower would be 1,000 more.
    expect(during.all - before.all).toBeLessThan(50);

    const publisher = api.app.get(TurnStreamPublisher);
    for (const turn of turns) {
      await publisher.publish(turn.turnId, 'done', { turnId: turn.turnId, version: 2 });
    }
    const bodies = await Promise.all(followers.map((f) => f.ended));
    const missing = bodies.filter((body) => !body.includes('event: done'));
    if (missing.length) console.log(missing.length, missing.slice(0, 3));
    expect(bodies.every((body) => body.includes('event: done'))).toBe(true);
  }, 60_000);
});
