import { createTestDatabase, type TestDatabase } from '@chronicle/testing';
import { createDatabase, migrateToLatest } from '@chronicle/event-store';
import { sql } from 'kysely';
import { migrations } from './migrations';

describe('migrateToLatest (Postgres)', () => {
  let empty: TestDatabase;

  beforeAll(async () => {
    empty = await createTestDatabase(undefined, { empty: true });
  });

  afterAll(async () => {
    await empty.drop();
  });

  it('two processes migrating an empty database at once both succeed, and each migration runs once', async () => {
    // Two pools stand for two processes starting at the same moment.
    const first = createDatabase(empty.connectionString, 2);
    const second = createDatabase(empty.connectionString, 2);
    try {
      const [a, b] = await Promise.all([migrateToLatest(first), migrateToLatest(second)]);

      const names = Object.keys(migrations).sort();
      expect([...a.applied, ...b.applied].sort()).toEqual(names);
      expect([a.applied.length, b.applied.length].sort()).toEqual([0, names.length]);
      const { rows } = await sql<{
        name: string;
      }>`SELECT name FROM kysely_migration ORDER BY name`.execute(empty.db);
      expect(rows.map((r) => r.name)).toEqual(names);
      expect((await migrateToLatest(first)).applied).toEqual([]);
    } finally {
      await Promise.all([first.destroy(), second.destroy()]);
    }
  });

  it('migration names follow <yyyymmddhhmmss>-<verb-noun>', () => {
    for (const name of Object.keys(migrations)) expect(name).toMatch(/^\d{14}-[a-z]+(-[a-z]+)+$/);
  });
});
