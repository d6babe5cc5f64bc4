// The tables as Kysely sees them, and the one way to open the database.
// `pg` returns int8 and xid8 as strings; they stay strings here and are
// parsed deliberately where a number is wanted (see event-store.repository.ts).
import { type ColumnType, type Generated, Kysely, PostgresDialect } from 'kysely';
import { Pool } from 'pg';

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

export interface Database {
  streams: StreamsTable;
  events: EventsTable;
  outbox: OutboxTable;
  snapshots: SnapshotsTable;
}

/** One pool per process: call once and share the result. */
export function createDatabase(connectionString: string, poolSize = 10): Kysely<Database> {
  const pool = new Pool({
    connectionString,
    max: poolSize,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client that loses its server (Postgres restarted) emits 'error' on
  // the pool; without a listener that would crash the process. The next query
  // gets a fresh client.
  pool.on('error', () => undefined);
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}

/** int8 from `pg` arrives as a string; positions stay far below 2^53, and this checks it. */
export function parseInt8(value: string | number | bigint, what = 'int8'): number {
  const parsed = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(parsed))
    throw new Error(`${what} ${String(value)} is not a safe integer`);
  return parsed;
}
