// Every Redis connection a process opens is made here, one kind per need, because the needs
// are opposite when Redis goes away: a worker should wait it out (BullMQ's blocking commands
// require `maxRetriesPerRequest: null`), a producer sits behind an HTTP request and must fail
// fast so the caller gets an answer, and a start-up probe must not retry at all.
//
// REDIS_URL names one server or a Redis Cluster (redis-target.ts); each factory returns an
// ioredis `Redis` for the one and an ioredis `Cluster` for the other, with the same behaviour:
// the node options below become the cluster's node options, and its reconnect and offline-queue
// settings move to the cluster level, where ioredis reads them for a cluster.
import Redis, { Cluster, type ClusterOptions, type RedisOptions } from 'ioredis';
import { describeRedisUrl, parseRedisUrl, type RedisTarget } from './redis-target';

/** A connection to a single Redis or to a Redis Cluster; both take the same commands. */
export type RedisClient = Redis | Cluster;

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

/** Opens REDIS_URL with these (single-server) options: a `Redis`, or a `Cluster` of such nodes. */
export function openRedis(redisUrl: string, options: RedisOptions): RedisClient {
  const target = parseRedisUrl(redisUrl);
  if (target.kind === 'server') return new Redis(redisUrl, options);
  const cluster = new Cluster(target.nodes, clusterOptions(target, options));
  described.set(cluster, describeRedisUrl(redisUrl));
  return cluster;
}

/** A cluster's seeds as its URL named them, for messages (ioredis keeps them private). */
const described = new WeakMap<Cluster, string>();

export function isClusterClient(client: RedisClient): client is Cluster {
  return client.isCluster;
}

/**
 * A cluster's options from a single server's: reconnecting, the offline queue, lazy connect and
 * auto-pipelining are the cluster's own (ioredis ignores them on its nodes); the rest, with the
 * URL's user, password and TLS, is every node's.
 */
export function clusterOptions(
  target: Extract<RedisTarget, { kind: 'cluster' }>,
  options: RedisOptions,
): ClusterOptions {
  const { retryStrategy, enableOfflineQueue, lazyConnect, enableAutoPipelining, ...node } = options;
  return {
    ...(retryStrategy !== undefined && {
      clusterRetryStrategy: (times: number) => (retryStrategy ? retryStrategy(times) : null),
    }),
    enableOfflineQueue,
    lazyConnect,
    enableAutoPipelining,
    // With TLS the certificates name the hosts the cluster announces: connect by those names.
    ...(target.tls && { dnsLookup: (address, callback) => callback(null, address) }),
    redisOptions: {
      ...node,
      username: target.username,
      password: target.password,
      ...(target.tls && { tls: {} }),
    },
  };
}

export function createProducerConnection(
  redisUrl: string,
  connectionName = 'chronicle-producer',
): RedisClient {
  return openRedis(redisUrl, { ...producerConnectionOptions(), connectionName });
}

export function createWorkerConnection(
  redisUrl: string,
  connectionName = 'chronicle-worker',
): RedisClient {
  return openRedis(redisUrl, { ...workerConnectionOptions(), connectionName });
}

/**
 * A producer-like connection (fails fast) that still queues the commands sent while it is
 * first opening: for a job that starts before the connection is up (the memory worker's lock).
 */
export function createLockConnection(redisUrl: string, connectionName: string): RedisClient {
  const redis = openRedis(redisUrl, {
    ...producerConnectionOptions(),
    enableOfflineQueue: true,
    connectionName,
  });
  redis.on('error', () => undefined);
  return redis;
}

/** A start-up probe: connects once when asked, never retries, never queues a command. */
export function createProbeConnection(redisUrl: string, connectTimeoutMs: number): RedisClient {
  const redis = openRedis(redisUrl, {
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
export async function waitForRedis(client: RedisClient, timeoutMs = 5_000): Promise<void> {
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
      reject(
        new Error(
          `Redis at ${whereIs(client)} did not answer within ${timeoutMs} ms` +
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
): RedisClient {
  const redis = openRedis(redisUrl, {
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
export async function closeRedis(redis: RedisClient): Promise<void> {
  if (redis.status === 'end') return;
  if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
  else redis.disconnect();
}

/** Where a client connects, for a message: host:port, or the cluster's seeds. */
function whereIs(client: RedisClient): string {
  if (isClusterClient(client)) return described.get(client) ?? 'the Redis Cluster';
  return `${client.options.host ?? '?'}:${client.options.port ?? '?'}`;
}

/**
 * A second connection like `client`, with these options over its own (a blocking reader's): the
 * same server, or the same cluster with these as its nodes' options.
 */
export function duplicateRedis(client: RedisClient, options: RedisOptions): RedisClient {
  if (!isClusterClient(client)) return client.duplicate(options);
  const { enableAutoPipelining, ...node } = options;
  return client.duplicate([], {
    ...(enableAutoPipelining !== undefined && { enableAutoPipelining }),
    redisOptions: { ...client.options.redisOptions, ...node },
  });
}
