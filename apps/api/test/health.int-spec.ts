import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { TEST_REDIS_URL } from '@chronicle/testing';
import { startApiHarness, type ApiHarness } from './api.harness';

// /health reports each dependency; the API keeps serving (and answering /health) while one is
// down, so an orchestrator sees which one to look at.

/** ioredis' default `disconnectTimeout`. */
const IOREDIS_DISCONNECT_TIMEOUT_MS = 2_000;

describe('GET /health with a dependency down', () => {
  let api: ApiHarness | undefined;

  afterEach(async () => {
    await api?.close();
    api = undefined;
  });

  it('is 503 naming Postgres when the database does not answer', async () => {
    api = await startApiHarness({ databaseUrl: 'postgres://postgres@127.0.0.1:1/chronicle' });
    const reply = await api.request('GET', '/health');
    expect(reply).toMatchObject({
      status: 503,
      body: { status: 'unavailable', postgres: 'down', redis: 'up' },
    });
  });

  // Start-up needs Redis (the control plane subscribes before the API listens, and the
  // launcher's preflight waits for it), so Redis is taken away after start: the API reaches it
  // through a TCP relay that the test then shuts.
  it('is 503 naming Redis when Redis goes away after start-up', async () => {
    const relay = await startRelay(new URL(TEST_REDIS_URL));
    try {
      api = await startApiHarness({ redisUrl: `redis://127.0.0.1:${relay.port}` });
      expect((await api.request('GET', '/health')).status).toBe(200);
      await relay.close();
      const reply = await api.request('GET', '/health');
      expect(reply).toMatchObject({
        status: 503,
        body: { status: 'unavailable', postgres: 'up', redis: 'down' },
      });
      await api.close();
      api = undefined;
      // Closing an ioredis client while it waits to reconnect arms a timer (its
      // disconnectTimeout, 2 s) to destroy a socket that is already gone, and nothing clears it:
      // harmless in the app, which exits, but it would keep this jest worker from exiting.
      await new Promise((resolve) => setTimeout(resolve, IOREDIS_DISCONNECT_TIMEOUT_MS + 100));
    } finally {
      await relay.close();
    }
  });
});

/** A TCP relay to `target`; `close` stops listening and cuts every relayed connection. */
async function startRelay(target: URL): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  let closed = false;
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      if (closed) return;
      closed = true;
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
