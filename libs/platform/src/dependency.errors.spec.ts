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

  const MAY_HAVE_BEEN_DONE =
    'what this request asked for may or may not have been done: read before you repeat a change (an action sent again under the same id is taken at most once)';

  it.each([
    ['Query read timeout', 'a statement took longer than its bound', MAY_HAVE_BEEN_DONE],
    [
      'timeout exceeded when trying to connect',
      'no database connection was free in time',
      'nothing was changed',
    ],
    ['Connection terminated unexpectedly', 'connection lost', MAY_HAVE_BEEN_DONE],
  ])('says what happened to Postgres: %s', (message, detail, outcome) => {
    expect(asDependencyUnavailable(new Error(message))?.message).toBe(
      `The database is unreachable right now (${detail}); ${outcome}. Try again in a few seconds.`,
    );
  });

  // A statement whose answer was lost may have committed: only an error raised before anything
  // reached the server, or the server's refusal, may say that nothing changed.
  it.each([
    ['a refused connection', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'), 'no'],
    ['an unknown host', withCode('getaddrinfo ENOTFOUND db', 'ENOTFOUND'), 'no'],
    ['a pool with no connection free', new Error('timeout exceeded when trying to connect'), 'no'],
    [
      'a server that cannot connect now',
      withCode('the database system is starting up', '57P03'),
      'no',
    ],
    ['a full Redis', new Error('OOM command not allowed when used memory > maxmemory'), 'no'],
    ['a Redis Cluster without a master', new Error('CLUSTERDOWN The cluster is down'), 'no'],
    ['a statement past its bound', new Error('Query read timeout'), 'unknown'],
    ['a connection reset mid-call', withCode('read ECONNRESET', 'ECONNRESET'), 'unknown'],
    ['a connection that ended', new Error('Connection terminated unexpectedly'), 'unknown'],
    [
      'an admin shutdown',
      withCode('terminating connection due to administrator command', '57P01'),
      'unknown',
    ],
    ['a Redis command past its bound', new Error('Command timed out'), 'unknown'],
  ])('says whether %s may have done the change', (_, error, applied) => {
    expect(asDependencyUnavailable(error)?.applied).toBe(applied);
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
