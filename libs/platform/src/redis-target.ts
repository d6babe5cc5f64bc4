// Where Redis is, read from REDIS_URL: one server (`redis://`, `rediss://` for TLS) or a Redis
// Cluster, named by any of its masters as seeds (`redis-cluster://host:port,host:port`,
// `rediss-cluster://` for TLS; a user and password before the first node apply to every node).
// One variable either way, so every module that is handed `redisUrl` works with both, and only
// the connection factory (redis-connection.factory.ts) tells them apart.

export interface RedisNodeAddress {
  host: string;
  port: number;
}

export type RedisTarget =
  | { kind: 'server'; url: string }
  | {
      kind: 'cluster';
      nodes: RedisNodeAddress[];
      username?: string;
      password?: string;
      tls: boolean;
    };

const CLUSTER_URL = /^(rediss?)-cluster:\/\/(?:([^@/]*)@)?([^/?#@]+)\/?$/;

export class RedisUrlError extends Error {}

export function isClusterUrl(url: string): boolean {
  return /^rediss?-cluster:\/\//.test(url);
}

/** Parses REDIS_URL; throws RedisUrlError saying what is wrong. */
export function parseRedisUrl(url: string): RedisTarget {
  if (!isClusterUrl(url)) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new RedisUrlError('must be a URL such as redis://host:port');
    }
    if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
      throw new RedisUrlError(
        'must start with redis://, rediss://, redis-cluster:// or rediss-cluster://',
      );
    }
    return { kind: 'server', url };
  }
  const match = CLUSTER_URL.exec(url);
  if (!match) {
    throw new RedisUrlError(
      'a cluster URL is redis-cluster://[user:password@]host:port[,host:port…] (no path or query)',
    );
  }
  const [, scheme, userinfo, hosts] = match;
  const nodes = hosts.split(',').map((entry) => parseNode(entry.trim()));
  let username: string | undefined;
  let password: string | undefined;
  if (userinfo !== undefined) {
    const colon = userinfo.indexOf(':');
    const user = colon === -1 ? userinfo : userinfo.slice(0, colon);
    const pass = colon === -1 ? '' : userinfo.slice(colon + 1);
    username = user === '' ? undefined : decodeURIComponent(user);
    password = pass === '' ? undefined : decodeURIComponent(pass);
  }
  return { kind: 'cluster', nodes, username, password, tls: scheme === 'rediss' };
}

function parseNode(entry: string): RedisNodeAddress {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s]+)(?::(\d{1,5}))?$/.exec(entry);
  const port = match?.[2] === undefined ? 6379 : Number(match[2]);
  if (!match || port < 1 || port > 65535) {
    throw new RedisUrlError(`"${entry}" is not a cluster node (host:port)`);
  }
  return { host: match[1].replace(/^\[|\]$/g, ''), port };
}

/** Where the target is, for a message: hosts and ports, never a password. */
export function describeRedisUrl(url: string): string {
  try {
    const target = parseRedisUrl(url);
    if (target.kind === 'cluster') {
      return `the Redis Cluster at ${target.nodes.map((n) => `${n.host}:${n.port}`).join(',')}`;
    }
    const parsed = new URL(target.url);
    return `${parsed.hostname}:${parsed.port || 6379}`;
  } catch {
    return 'REDIS_URL';
  }
}
