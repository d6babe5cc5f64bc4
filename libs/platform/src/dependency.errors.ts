// Postgres or Redis could not be reached: not a bug and not the caller's mistake, so the API
// answers 503 with Retry-After (kind `unavailable`), and a worker waits and tries again without
// spending an attempt. Errors are recognised by what the drivers throw (pg, ioredis, BullMQ),
// never by the dependency's own messages about the data.

export type Dependency = 'postgres' | 'redis';

/** How long a client should wait before asking again, in seconds. */
export const DEPENDENCY_RETRY_AFTER_SECONDS = 2;

/**
 * Whether what the request asked for may have been done anyway. `no`: the command never reached
 * the server (no connection, refused, not sent). `unknown`: it was sent and its answer was lost
 * (a statement past its bound, a connection cut mid-call): a statement the server finished still
 * commits, so the caller must not be told that nothing changed.
 */
export type Applied = 'no' | 'unknown';

export class DependencyUnavailableError extends Error {
  readonly kind = 'unavailable';
  readonly retryAfterSeconds = DEPENDENCY_RETRY_AFTER_SECONDS;

  constructor(
    readonly dependency: Dependency,
    detail: string,
    readonly applied: Applied = 'unknown',
  ) {
    super(
      `${dependency === 'postgres' ? 'The database' : 'The queue (Redis)'} is unreachable right now (${detail}); ${
        applied === 'no'
          ? 'nothing was changed'
          : 'what this request asked for may or may not have been done: read before you repeat a change (an action sent again under the same id is taken at most once)'
      }. Try again in a few seconds.`,
    );
    this.name = 'DependencyUnavailableError';
  }
}

// Network errors under either driver.
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
// `Query read timeout`: a statement outlived DATABASE_QUERY_TIMEOUT_MS (a frozen server answers
// nothing on a connection that is open).
// SQLSTATE classes 08 (connection exception) and 57P (operator intervention: shutdown, restart,
// cannot connect now), and 53300 (too many connections).
const PG_UNAVAILABLE = /^(08...|57P0[1-3]|53300)$/;
const PG_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Connection terminated unexpectedly|the database system is (starting up|shutting down)|does not allow connections|not currently accepting connections|terminating connection due to administrator command/i;
// OOM: a full Redis under noeviction refuses writes until memory is freed; to a caller that is
// the same as an unreachable one (try again shortly). CLUSTERDOWN, TRYAGAIN and a failed slot
// refresh: a Redis Cluster that is failing over or has lost a master.
const REDIS_MESSAGES =
  /OOM command not allowed|Connection is closed|Stream isn't writeable|enableOfflineQueue|Reached the max retries per request|MaxRetriesPerRequest|enqueue .* timed out|ping timed out|LOADING|redis.* timed out|Command timed out|CLUSTERDOWN|TRYAGAIN|Failed to refresh slots cache|None of startup nodes is available/i;

/**
 * What the caller (and the operator reading the log) is told happened: on a saturated server a
 * statement that outlived its bound or a pool with no connection free is not a lost connection,
 * and the remedy differs (capacity, not the network).
 */
function postgresDetail(message: string): string {
  if (/Query read timeout/i.test(message)) return 'a statement took longer than its bound';
  if (/timeout exceeded when trying to connect/i.test(message)) {
    return 'no database connection was free in time';
  }
  return 'connection lost';
}

// Errors raised before a command left this process, or a server's refusal to run it: nothing
// the request asked for was done. Everything else Postgres or Redis throws here may follow a
// command the server received.
const NEVER_SENT_CODES = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P03', // cannot connect now
  '53300', // too many connections
]);
const NEVER_SENT_MESSAGES =
  /timeout exceeded when trying to connect|the database system is starting up|does not allow connections|not currently accepting connections|OOM command not allowed|enableOfflineQueue|CLUSTERDOWN|TRYAGAIN|Failed to refresh slots cache|None of startup nodes is available|LOADING/i;

function appliedOf(error: Error, code: string | undefined): Applied {
  if (code !== undefined && NEVER_SENT_CODES.has(code)) return 'no';
  return NEVER_SENT_MESSAGES.test(error.message) ? 'no' : 'unknown';
}

function codeOf(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function looksLikeRedis(error: Error): boolean {
  return (
    error.name === 'MaxRetriesPerRequestError' ||
    REDIS_MESSAGES.test(error.message) ||
    /redis|:6379|ioredis/i.test(error.stack ?? '')
  );
}

/**
 * The error as a DependencyUnavailableError when it says Postgres or Redis could not be reached,
 * or null. (Already one: returned as it is.)
 */
export function asDependencyUnavailable(error: unknown): DependencyUnavailableError | null {
  if (error instanceof DependencyUnavailableError) return error;
  if (!(error instanceof Error)) return null;
  // A model provider's failure is the model's (libs/llm maps it), never Postgres's or Redis's.
  if (error.name === 'ModelError') return null;
  const code = codeOf(error);
  const applied = appliedOf(error, code);
  if (code !== undefined && PG_UNAVAILABLE.test(code))
    return new DependencyUnavailableError('postgres', code, applied);
  if (PG_MESSAGES.test(error.message))
    return new DependencyUnavailableError('postgres', postgresDetail(error.message), applied);
  if (code !== undefined && NETWORK_CODES.has(code)) {
    const dependency = looksLikeRedis(error) ? 'redis' : 'postgres';
    return new DependencyUnavailableError(dependency, code, applied);
  }
  if (REDIS_MESSAGES.test(error.message) || error.name === 'MaxRetriesPerRequestError') {
    return new DependencyUnavailableError('redis', 'connection lost', applied);
  }
  return null;
}

export function isDependencyUnavailable(error: unknown): boolean {
  return asDependencyUnavailable(error) !== null;
}
