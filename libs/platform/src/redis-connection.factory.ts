// Every Redis connection a process opens is made here, one kind per need, because the needs
// are opposite when Redis goes away: a worker should wait it out (BullMQ's blocking commands
// require `maxRetriesPerRequest: null`), a producer sits behind an HTTP request and must fail
// fast so the caller gets an answer, and a start-up probe must not retry at all.
import Redis, { type RedisOptions } from 'ioredis';

const CONNECT_TIMEOUT_MS = 2_000;
/**
 * The longest a short command may wait for its answer on a connection that looks open (Redis
 * frozen, or a network that drops packets without a reset): the caller behind an HTTP request
 * gets an error (a 503) instead of a hang. Never set on connections that block (XREAD BLOCK).
 */
export const COMMAND_TIMEOUT_MS = 2_000;
// ioredis waits this long for a closing socket's 'close' before destroying it,
// and arms the wait even when the socket is already gone (Redis was down):
// the default 2 s keeps a stopping process alive for nothing.
const DISCONNECT_TIMEOUT_MS = 200;

// Reconnect forever with a capped delay: a producer fails its commands fast,
// but recovers by itself once Redis is back.
const reconnectDelay = (times: number): number => Math.min(200 * 2 ** Math.min(times, 5), 5_000);

export function producerConnectionOptions(): RedisOptions {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: CONNECT_TIMEOUT_MS,
    commandTimeout: COMMAND_TIMEOUT_MS,
    disconnectTimeout: DISCONNECT_TIMEOUT_MS,
    retryStrategy: reconnectDelay,
  };
}

export function workerConnectionOptions(): RedisOptions {
  return {
    maxRetriesPerRequest: null,
    connectTimeout: CONNECT_TIMEOUT_MS,
    disconnectTimeout: DISCONNECT_TIMEOUT_MS,
    retryStrategy: reconnectDelay,
  };
}

export function createProducerConnection(
  redisUrl: string,
  connectionName = 'chronicle-producer',
): Redis {
  return new Redis(redisUrl, { ...producerConnectionOptions(), connectionName });
}

export function createWorkerConnection(
  redisUrl: string,
  connectionName = 'chronicle-worker',
): Redis {
  return new Redis(redisUrl, { ...workerConnectionOptions(), connectionName });
}

/**
 * A producer-like connection (fails fast) that still queues the commands sent while it is
 * first opening: for a job that starts before the connection is up (the memory worker's lock).
 */
export function createLockConnection(redisUrl: string, connectionName: string): Redis {
  const redis = new Redis(redisUrl, {
    ...producerConnectionOptions(),
    enableOfflineQueue: true,
    connectionName,
  });
  redis.on('error', () => undefined);
  return redis;
}

/** A start-up probe: connects once when asked, never retries, never queues a command. */
export function createProbeConnection(redisUrl: string, connectTimeoutMs: number): Redis {
  const redis = new Redis(redisUrl, {
    lazyConnect: true,
    connectTimeout: connectTimeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  return redis;
}

/** Resolves once `client` is ready, or rejects after `timeoutMs` naming the URL. */
export async function waitForRedis(client: Redis, timeoutMs = 5_000): Promise<void> {
  if (client.status === 'ready') return;
  if (client.status === 'wait') void client.connect().catch(() => undefined);
  await new Promise<void>((resolve, reject) => {
    let lastError: Error | undefined;
    const onError = (error: Error): void => {
      lastError = error;
    };
    const cleanup = (): void => {
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('error', onError);
    };
    const onReady = (): void => {
      cleanup();
      resolve();
    };
    const timer = setTimeout(() => {
      cleanup();
      const where = `${client.options.host ?? '?'}:${client.options.port ?? '?'}`;
      reject(
        new Error(
          `Redis at ${where} did not answer within ${timeoutMs} ms` +
            (lastError ? ` (${lastError.message})` : ''),
        ),
      );
    }, timeoutMs);
    client.on('ready', onReady);
    client.on('error', onError);
  });
}

/**
 * A connection for short commands beside a request or a job (turn streams,
 * rate limits, token counters): a couple of retries then an error, never an
 * unbounded wait; commands issued in the same tick share one round trip.
 */
export function createCommandConnection(
  redisUrl: string,
  connectionName: string,
  /** COMMAND_TIMEOUT_MS for a connection that never blocks (its duplicates inherit it) */
  commandTimeoutMs?: number,
): Redis {
  const redis = new Redis(redisUrl, {
    maxRetriesPerRequest: 2,
    connectTimeout: CONNECT_TIMEOUT_MS,
    enableAutoPipelining: true,
    connectionName,
    ...(commandTimeoutMs !== undefined && { commandTimeout: commandTimeoutMs }),
  });
  // Failures surface as rejected commands where they matter, and in /health.
  redis.on('error', () => undefined);
  return redis;
}

/**
 * Closes a connection however it stands: QUIT when it is ready, a plain
 * disconnect while it is reconnecting, nothing once it has ended (disconnecting
 * an ended ioredis client arms a 2 s timer that holds the process open).
 */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
  else redis.disconnect();
}
