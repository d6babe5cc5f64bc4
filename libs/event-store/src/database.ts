// The tables as Kysely sees them, and the one way to open the database.
// `pg` returns int8 and xid8 as strings; they stay strings here and are
// parsed deliberately where a number is wanted (see event-store.repository.ts).
import { AsyncLocalStorage } from 'node:async_hooks';
import { type ColumnType, type Generated, Kysely, PostgresDialect } from 'kysely';
import { Client, Pool } from 'pg';

/** jsonb: read as parsed JSON, written as JSON text. */
export type Jsonb<T = unknown> = ColumnType<T, string, string>;

export interface StreamsTable {
  stream_id: string;
  version: number;
  updated_at: Generated<Date>;
}

export interface EventsTable {
  position: ColumnType<string, never, never>;
  stream_id: string;
  version: number;
  event_id: string;
  type: string;
  schema_version: number;
  data: Jsonb;
  metadata: Generated<Jsonb<Record<string, unknown>>>;
  recorded_at: Generated<Date>;
  tx_id: ColumnType<string, never, never>;
}

export interface OutboxTable {
  id: Generated<string>;
  queue: string;
  job_name: string;
  job_id: string;
  payload: Jsonb;
  created_at: Generated<Date>;
  enqueued_at: Date | null;
}

export interface SnapshotsTable {
  stream_id: string;
  projector_version: number;
  version: number;
  /** JSON as text, as the previous release wrote it; null on the rows written `packed`. */
  state: string | null;
  /** The snapshot's bytes, brotli-compressed by the process: written and read whole (see the migrations). */
  packed: Buffer | null;
  created_at: Generated<Date>;
}

/** Kept by a trigger on events (see the 20261201110000 migration); the reconciler's own count. */
export interface TurnsInFlightTable {
  stream_id: string;
  turn_id: string;
  started_at: Date;
  requeues: Generated<number>;
  requeued_at: Date | null;
}

/** Who owns which adventure: written with its first event (see read-models.ts in libs/adventure). */
export interface AdventureOwnersTable {
  stream_id: string;
  owner_id: string;
  created_at: Generated<Date>;
}

/** A member of an adventure's room and their role (the owner is its host): written with the events. */
export interface AdventureMembersTable {
  stream_id: string;
  user_id: string;
  role: 'host' | 'player' | 'spectator';
  joined_at: Generated<Date>;
}

/** An invite code's adventure: written with the InviteCreated event, removed with its revoke. */
export interface AdventureInvitesTable {
  code: string;
  stream_id: string;
  created_at: Generated<Date>;
}

/** One paid model call, charged to the adventure's owner: written with the event recording it. */
export interface ModelCallsTable {
  stream_id: string;
  version: number;
  user_id: string;
  recorded_at: Generated<Date>;
  purpose: string;
  model: string;
  prompt_tokens: ColumnType<string, string | number, never>;
  completion_tokens: ColumnType<string, string | number, never>;
  cached_tokens: ColumnType<string, string | number, never>;
  /** The members whose actions the call answered, in a room (split evenly); null otherwise. */
  members: string[] | null;
}

/** Derived vectors, content-addressed by (model, text_hash); see libs/memory-store. */
export interface MemoryEmbeddingsTable {
  model: string;
  text_hash: string;
  dimensions: number;
  /** float32 little-endian. */
  vector: Buffer;
  created_at: Generated<Date>;
}

export interface UsersTable {
  id: string;
  name: string;
  created_at: Generated<Date>;
  daily_token_budget: number | null;
}

export interface ApiKeysTable {
  id: string;
  user_id: string;
  prefix: string;
  secret_hash: Buffer;
  name: string;
  created_at: Generated<Date>;
  revoked_at: Date | null;
  last_used_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

/** An owner's webhook (libs/webhooks): the secret sealed under WEBHOOKS_SECRET_KEY. */
export interface WebhooksTable {
  id: string;
  user_id: string;
  adventure_id: string | null;
  url: string;
  events: string[];
  description: Generated<string>;
  sealed_secret: Buffer;
  created_at: Generated<Date>;
  deleted_at: Date | null;
}

/** One attempt of one delivery (libs/webhooks). */
export interface WebhookDeliveriesTable {
  webhook_id: string;
  delivery_id: string;
  message_id: string;
  event_type: string;
  attempt: number;
  status: string;
  response_status: number | null;
  duration_ms: number;
  error: string | null;
  next_attempt_at: Date | null;
  attempted_at: Generated<Date>;
}

/**
 * Every table the migrations create, as Kysely sees it: one schema for every repository (the
 * event store's, the accounts', the embeddings'), as there is one database.
 */
export interface Database {
  streams: StreamsTable;
  events: EventsTable;
  outbox: OutboxTable;
  snapshots: SnapshotsTable;
  turns_in_flight: TurnsInFlightTable;
  adventure_owners: AdventureOwnersTable;
  adventure_members: AdventureMembersTable;
  adventure_invites: AdventureInvitesTable;
  model_calls: ModelCallsTable;

  memory_embeddings: MemoryEmbeddingsTable;
  users: UsersTable;
  api_keys: ApiKeysTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
}

// Statement text -> the name its connections prepare it under.
const preparedNames = new Map<string, string>();

/**
 * Marks a statement run so often that parsing and planning it on every call
 * is a measurable part of its cost (the append's function call: ~45 µs of its
 * ~250 µs of server time). The clients of `createDatabase` run exactly this
 * text as a named prepared statement, parsed once per connection; Kysely hands
 * a query's text to `pg` unchanged, so execute it as
 * `executor.executeQuery(CompiledQuery.raw(text, parameters))`, inside or
 * outside a transaction. Only for fixed texts: every distinct text stays
 * prepared on every connection for the connection's life.
 */
export function preparedStatement(text: string): string {
  if (!preparedNames.has(text)) preparedNames.set(text, `chronicle_${preparedNames.size + 1}`);
  return text;
}

/**
 * How long a statement may wait for its answer, for the work run inside `withQueryTimeout`
 * (an import, a migration): longer than the pool's bound, which is set for the API's 3 s answer.
 */
const statementBound = new AsyncLocalStorage<number>();

/**
 * Runs `work` with every statement it sends bounded by `ms` instead of the pool's
 * `queryTimeoutMs`: for the few things that are legitimately slow (importing a whole log,
 * migrating, exporting), never to make an ordinary request wait longer.
 */
export function withQueryTimeout<T>(ms: number, work: () => T): T {
  return statementBound.run(ms, work);
}

/** What `pg` says when a statement's answer did not come within its bound. */
export const QUERY_TIMEOUT_MESSAGE = 'Query read timeout';

/**
 * A `pg` client that runs the texts marked by `preparedStatement` as named statements, under the
 * statement bound in force (see `withQueryTimeout`), and that drops its connection when a
 * statement outlives its bound.
 */
class PreparingClient extends Client {
  // Kysely sends every query as query(text, parameters).
  override query(...args: unknown[]): never {
    const [text, values] = args;
    const name = typeof text === 'string' ? preparedNames.get(text) : undefined;
    const bound = statementBound.getStore();
    const query = super.query as (...a: unknown[]) => never;
    const result: unknown = query.apply(
      this,
      name === undefined && bound === undefined
        ? args
        : [
            {
              text,
              values,
              ...(name !== undefined && { name }),
              ...(bound && { query_timeout: bound }),
            },
          ],
    );
    if (result instanceof Promise) {
      // The statement is still on the wire (a frozen server answers it when it wakes): the
      // connection is not reusable, and its transaction must not outlive the caller's answer.
      // Closing the socket fails it here (the pool drops the client when it is released) and
      // makes the server roll back whatever the statement's transaction had not committed.
      result.catch((error: unknown) => {
        if (error instanceof Error && error.message === QUERY_TIMEOUT_MESSAGE) {
          (
            this as unknown as { connection: { stream: { destroy(): void } } }
          ).connection.stream.destroy();
        }
      });
    }
    return result as never;
  }
}

export interface DatabaseOptions {
  /**
   * How long one statement may wait for Postgres before it fails with a dependency error
   * (`QUERY_TIMEOUT_MESSAGE`, a 503 at the API). Bounds a query on a connection that is already
   * open to a server that stopped answering (SIGSTOP, a hung host), where the connect bound
   * does not apply. Omitted: unbounded.
   */
  queryTimeoutMs?: number;
}

/** One pool per process: call once and share the result. */
export function createDatabase(
  connectionString: string,
  poolSize = 10,
  options: DatabaseOptions = {},
): Kysely<Database> {
  const pool = new Pool({
    Client: PreparingClient,
    connectionString,
    max: poolSize,
    // Below the API's 3 s answer bound: a request while Postgres is unreachable gets its 503 in time.
    connectionTimeoutMillis: 2_000,
    idleTimeoutMillis: 30_000,
    ...(options.queryTimeoutMs && { query_timeout: options.queryTimeoutMs }),
  });
  // An idle client that loses its server (Postgres restarted) emits 'error' on
  // the pool; without a listener that would crash the process. The next query
  // gets a fresh client.
  pool.on('error', () => undefined);
  // A client that is checked out (a transaction, or a session held across other awaits, like
  // the reconciler's advisory lock) when its server goes away emits 'error' on itself, where
  // the pool does not listen: unheard, that kills the process. The failure reaches the holder
  // as the error of its next query, and the pool drops the broken client when it is released.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}

/** int8 from `pg` arrives as a string; positions stay far below 2^53, and this checks it. */
export function parseInt8(value: string | number | bigint, what = 'int8'): number {
  const parsed = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(parsed))
    throw new Error(`${what} ${String(value)} is not a safe integer`);
  return parsed;
}
