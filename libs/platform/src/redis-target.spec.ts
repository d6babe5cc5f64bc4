import { loadConfig } from './config';
import { clusterOptions } from './redis-connection.factory';
import { describeRedisUrl, parseRedisUrl } from './redis-target';

describe('REDIS_URL', () => {
  it('names one server as a redis:// or rediss:// URL', () => {
    expect(parseRedisUrl('redis://127.0.0.1:6379')).toEqual({
      kind: 'server',
      url: 'redis://127.0.0.1:6379',
    });
    expect(parseRedisUrl('rediss://:secret@cache.example:6380/2').kind).toBe('server');
  });

  it('names a cluster by its seeds, with one user, password and TLS for every node', () => {
    expect(parseRedisUrl('redis-cluster://10.0.0.1:7000,10.0.0.2,[::1]:7002')).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 6379 },
        { host: '::1', port: 7002 },
      ],
      username: undefined,
      password: undefined,
      tls: false,
    });
    expect(parseRedisUrl('rediss-cluster://app:p%40ss@a:1,b:2')).toMatchObject({
      username: 'app',
      password: 'p@ss',
      tls: true,
    });
  });

  it('gives every node the URL’s credentials and TLS, and the cluster its reconnects', () => {
    const target = parseRedisUrl('rediss-cluster://app:pw@a:1,b:2');
    if (target.kind !== 'cluster') throw new Error('not a cluster');
    const options = clusterOptions(target, {
      maxRetriesPerRequest: null,
      enableOfflineQueue: false,
      retryStrategy: () => 250,
      connectionName: 'chronicle-worker',
    });
    expect(options).toMatchObject({
      enableOfflineQueue: false,
      redisOptions: {
        maxRetriesPerRequest: null,
        connectionName: 'chronicle-worker',
        username: 'app',
        password: 'pw',
        tls: {},
      },
    });
    expect(options.clusterRetryStrategy?.(3)).toBe(250);
    expect(options.redisOptions).not.toHaveProperty('retryStrategy');
  });

  it('is refused at start-up, saying what is wrong, when it is neither', () => {
    expect(() => loadConfig({ REDIS_URL: 'http://127.0.0.1:6379' })).toThrow(
      /REDIS_URL must start with redis:\/\/, rediss:\/\/, redis-cluster:\/\/ or rediss-cluster:\/\//,
    );
    expect(() => loadConfig({ REDIS_URL: 'redis-cluster://a:1,b:notaport' })).toThrow(
      /REDIS_URL "b:notaport" is not a cluster node/,
    );
    expect(() => loadConfig({ REDIS_URL: 'redis-cluster://a:1/0' })).toThrow(/no path or query/);
  });

  it('is described in messages without its password', () => {
    expect(describeRedisUrl('redis-cluster://u:secret@a:1,b:2')).toBe(
      'the Redis Cluster at a:1,b:2',
    );
    expect(describeRedisUrl('redis://:secret@cache:6380')).toBe('cache:6380');
  });
});
