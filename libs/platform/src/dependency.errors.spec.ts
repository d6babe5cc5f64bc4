import { asDependencyUnavailable, DependencyUnavailableError } from './dependency.errors';

function withCode(message: string, code: string, name = 'Error'): Error {
  const error = new Error(message) as Error & { code: string };
  error.code = code;
  error.name = name;
  return error;
}

describe('asDependencyUnavailable', () => {
  it.each([
    [
      'a refused connection to Postgres',
      withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
      'postgres',
    ],
    [
      'an administrator shutdown',
      withCode('terminating connection due to administrator command', '57P01'),
      'postgres',
    ],
    [
      'a database that refuses connections',
      withCode('database "x" is not currently accepting connections', '55000'),
      'postgres',
    ],
    [
      'a pool that cannot connect in time',
      new Error('timeout exceeded when trying to connect'),
      'postgres',
    ],
    [
      "ioredis' offline producer",
      new Error("Stream isn't writeable and enableOfflineQueue options is false"),
      'redis',
    ],
    [
      'a full Redis under noeviction',
      new Error("OOM command not allowed when used memory > 'maxmemory'."),
      'redis',
    ],
    [
      'a Redis Cluster without a master for the slot',
      new Error('CLUSTERDOWN The cluster is down'),
      'redis',
    ],
    ['a Redis Cluster no seed answers', new Error('Failed to refresh slots cache.'), 'redis'],
    [
      'a timed-out enqueue',
      new Error('enqueue narrate-turn timed out after 5000 ms (is Redis at redis://x up?)'),
      'redis',
    ],
  ])('maps %s to 503', (_, error, dependency) => {
    const mapped = asDependencyUnavailable(error);
    expect(mapped).toBeInstanceOf(DependencyUnavailableError);
    expect(mapped).toMatchObject({ kind: 'unavailable', dependency, retryAfterSeconds: 2 });
  });

  it.each([
    ['Query read timeout', 'a statement took longer than its bound'],
    ['timeout exceeded when trying to connect', 'no database connection was free in time'],
    ['Connection terminated unexpectedly', 'connection lost'],
  ])('says what happened to Postgres: %s', (message, detail) => {
    expect(asDependencyUnavailable(new Error(message))?.message).toBe(
      `The database is unreachable right now (${detail}); nothing was changed. Try again in a few seconds.`,
    );
  });

  it.each([
    ['a constraint violation', withCode('duplicate key value violates unique constraint', '23505')],
    ['a syntax error', withCode('syntax error at or near "SELEC"', '42601')],
    [
      'a model provider that is down',
      withCode('Could not reach the model provider', 'ECONNREFUSED', 'ModelError'),
    ],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a thrown string', 'nope'],
  ])('leaves %s alone', (_, error) => {
    expect(asDependencyUnavailable(error)).toBeNull();
  });
});
