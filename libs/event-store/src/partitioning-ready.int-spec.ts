// The schema keeps the way to hash partitioning or Citus open (docs/partitioning.md): every
// table keyed by an adventure's stream enforces uniqueness only through keys that include
// stream_id (the distribution key), and no foreign key points into or out of `events`, since a
// distributed table's rows live on other nodes than the rows such a key would join.
import { createTestDatabase, type TestDatabase } from '@chronicle/testing';
import { sql } from 'kysely';

const STREAM_TABLES = ['events', 'snapshots', 'turns_in_flight', 'streams'];

describe('the schema, partitioned or distributed on stream_id later', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });

  afterAll(async () => {
    await database.drop();
  });

  it('every unique key and primary key of a stream-keyed table includes stream_id', async () => {
    const { rows } = await sql<{ table: string; index: string; columns: string[] }>`
      SELECT t.relname AS table, i.relname AS index,
             array_agg(a.attname::text ORDER BY k.ord) AS columns
        FROM pg_index x
        JOIN pg_class t ON t.oid = x.indrelid
        JOIN pg_class i ON i.oid = x.indexrelid
        JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = current_schema()
        CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS k(attnum, ord)
        JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
       WHERE x.indisunique AND t.relname = ANY(${STREAM_TABLES})
       GROUP BY t.relname, i.relname`.execute(database.db);

    // the tables are there and have unique keys: the check below is not vacuous
    expect(new Set(rows.map((r) => r.table))).toEqual(new Set(STREAM_TABLES));
    const without = rows.filter((r) => !r.columns.includes('stream_id'));
    expect(without).toEqual([]);
    const events = rows.filter((r) => r.table === 'events').map((r) => r.columns.join(','));
    expect(events.sort()).toEqual(['stream_id,event_id', 'stream_id,version']);
  });

  it('no foreign key points into or out of events', async () => {
    const { rows } = await sql<{ name: string }>`
      SELECT c.conname AS name
        FROM pg_constraint c
       WHERE c.contype = 'f'
         AND (c.conrelid = 'events'::regclass OR c.confrelid = 'events'::regclass)`.execute(
      database.db,
    );
    expect(rows).toEqual([]);
  });
});
