// The API at its edge when a dependency fails: Postgres or Redis unreachable answers 503 with
// Retry-After within 3 s (never a 500 or a hang) and writes nothing, and /health names a Redis
// that may evict keys.
import { adventureStreamId } from '@chronicle/adventure';
import { RestartableRedis, withAdminClient } from '@chronicle/testing';
import { sql } from 'kysely';
import { aScenario, startApiHarness, type ApiHarness } from './api.harness';

const ANSWER_BOUND_MS = 3_000;

async function timed<T>(call: () => Promise<T>): Promise<{ reply: T; ms: number }> {
  const started = Date.now();
  const reply = await call();
  return { reply, ms: Date.now() - started };
}

describe('the API with Redis unreachable or misconfigured', () => {
  let redis: RestartableRedis;
  let api: ApiHarness;

  beforeAll(async () => {
    redis = await RestartableRedis.start({ appendOnly: true });
    api = await startApiHarness({ redisUrl: redis.url });
  });

  afterAll(async () => {
    await api?.close();
    await redis?.close();
    // ioredis arms its disconnectTimeout (2 s) for a socket that went away while Redis was down,
    // and nothing clears it: waited out so this jest worker exits cleanly.
    await new Promise((resolve) => setTimeout(resolve, 2_100));
  });

  it('/health is 503 naming the eviction policy until it is noeviction again', async () => {
    expect(await api.request('GET', '/health')).toMatchObject({
      status: 200,
      body: { status: 'ok', redisMaxmemoryPolicy: 'noeviction', redisAof: true },
    });
    await redis.command('CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru');
    try {
      const reply = await api.request('GET', '/health');
      expect(reply).toMatchObject({
        status: 503,
        body: { status: 'unavailable', redis: 'up', redisMaxmemoryPolicy: 'allkeys-lru' },
      });
      expect((reply.body as { problem: string }).problem).toContain('allkeys-lru');
      expect((reply.body as { problem: string }).problem).toContain('noeviction');
    } finally {
      await redis.command('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
    }
    expect((await api.request('GET', '/health')).status).toBe(200);
  });

  it('/health warns when AOF is off', async () => {
    await redis.command('CONFIG', 'SET', 'appendonly', 'no');
    try {
      const reply = await api.request('GET', '/health');
      expect(reply).toMatchObject({ status: 200, body: { redisAof: false } });
      expect(JSON.stringify(reply.body)).toContain('AOF is off');
    } finally {
      await redis.command('CONFIG', 'SET', 'appendonly', 'yes');
    }
  });

  it('answers an action with 503 and Retry-After within 3 s while Redis is down, and takes actions again once it is back', async () => {
    const created = await api.request('POST', '/v1/adventures', aScenario());
    expect(created.status).toBe(201);
    const id = (created.body as { id: string }).id;
    const before = await api.adventures.get(id);

    await redis.down();
    try {
      const { reply, ms } = await timed(() =>
        api.request('POST', `/v1/adventures/${id}/actions`, { type: 'do', text: 'ring the bell' }),
      );
      expect(reply.status).toBe(503);
      expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(JSON.stringify(reply.body)).toContain('unreachable');
      expect(ms).toBeLessThan(ANSWER_BOUND_MS);
      expect((await api.adventures.get(id)).version).toBe(before.version);
    } finally {
      await redis.up();
    }

    // No process restarted: the API's connections find Redis again by themselves.
    let status = 0;
    for (let i = 0; i < 50 && status !== 202; i++) {
      const reply = await api.request('POST', `/v1/adventures/${id}/actions`, {
        type: 'do',
        text: `ring the bell again (${i})`,
      });
      status = reply.status;
      if (status !== 202) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(status).toBe(202);
  });

  it('answers with 503 while a full Redis (noeviction) refuses writes, and 202 once memory is freed', async () => {
    const created = await api.request('POST', '/v1/adventures', aScenario());
    const id = (created.body as { id: string }).id;
    await redis.command('CONFIG', 'SET', 'maxmemory', '1');
    try {
      const refused = await api.request('POST', `/v1/adventures/${id}/actions`, {
        type: 'do',
        text: 'fill the hold',
      });
      expect(refused.status).toBe(503);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    } finally {
      await redis.command('CONFIG', 'SET', 'maxmemory', '0');
    }
    const accepted = await api.request('POST', `/v1/adventures/${id}/actions`, {
      type: 'do',
      text: 'fill the hold',
    });
    expect(accepted.status).toBe(202);
  });

  it('answers with 503 within 3 s while Redis is frozen (sockets open, no answers)', async () => {
    const created = await api.request('POST', '/v1/adventures', aScenario());
    const id = (created.body as { id: string }).id;
    redis.freeze();
    try {
      const { reply, ms } = await timed(() =>
        api.request('POST', `/v1/adventures/${id}/actions`, { type: 'do', text: 'hold still' }),
      );
      expect(reply.status).toBe(503);
      expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(ms).toBeLessThan(ANSWER_BOUND_MS);
    } finally {
      redis.thaw();
    }
  });
});

describe('the API with Postgres unreachable', () => {
  let api: ApiHarness;

  beforeAll(async () => {
    api = await startApiHarness();
  });

  afterAll(async () => {
    await withAdminClient((client) =>
      client.query(`ALTER DATABASE "${api.database.name}" ALLOW_CONNECTIONS true`),
    );
    await api?.close();
  });

  it('answers reads and actions with 503 and Retry-After within 3 s, never a 500, and accepts again once it is back', async () => {
    const created = await api.request('POST', '/v1/adventures', aScenario());
    const id = (created.body as { id: string }).id;
    const name = api.database.name;
    // The database refuses new connections and drops the API's open ones: to the API it is gone.
    await withAdminClient(async (client) => {
      await client.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
      await client.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [name],
      );
    });

    for (const call of [
      () => api.request('GET', `/v1/adventures/${id}`),
      () =>
        api.request('POST', `/v1/adventures/${id}/actions`, { type: 'do', text: 'look around' }),
    ]) {
      const { reply, ms } = await timed(call);
      expect(reply.status).toBe(503);
      expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(ms).toBeLessThan(ANSWER_BOUND_MS);
    }

    await withAdminClient((client) =>
      client.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`),
    );
    const accepted = await api.request('POST', `/v1/adventures/${id}/actions`, {
      type: 'do',
      text: 'look around',
    });
    expect(accepted.status).toBe(202);
    // 202 came after the commit: the event and its outbox row are both there.
    const rows = await sql<{ n: string }>`
      SELECT count(*) AS n FROM events WHERE stream_id = ${adventureStreamId(id)} AND type = 'PlayerActed'
    `.execute(api.database.db);
    expect(Number(rows.rows[0].n)).toBe(1);
  });
});
