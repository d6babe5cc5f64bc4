// The tables as Kysely sees them, and the one way to open the database.
// `pg` returns int8 and xid8 as strings; they stay strings here and are
// parsed deliberately where a number is wanted (see event-store.repository.ts).
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

  memory_embeddings: MemoryEmbeddingsTable;
  users: UsersTable;
  api_keys: ApiKeysTable;
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

/** A `pg` client that runs the texts marked by `preparedStatement` as named statements. */
class PreparingClient extends Client {
  // Kysely sends every query as query(text, parameters).
  override query(...args: unknown[]): never {
    const [text, values] = args;
    const name = typeof text === 'string' ? preparedNames.get(text) : undefined;
    const query = super.query as (...a: unknown[]) => never;
    return query.apply(this, name === undefined ? args : [{ name, text, values }]);
  }
}

/** One pool per process: call once and share the result. */
export function createDatabase(connectionString: string, poolSize = 10): Kysely<Database> {
  const pool = new Pool({
    Client: PreparingClient,
    connectionString,
    max: poolSize,
    // Below the API's 3 s answer bound: a request while Postgres is unreachable gets its 503 in time.
    connectionTimeoutMillis: 2_000,
    idleTimeoutMillis: 30_000,
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
