import { randomUUID } from 'node:crypto';
import { TEST_POSTGRES_URL, withAdminClient } from '@chronicle/testing';
import { ensurePostgres, ensureRedis, ServiceUnavailableError } from './preflight';

describe('start-up checks', () => {
  it('creates a missing database once when three processes start at the same moment', async () => {
    const name = `chronicle_preflight_${randomUUID().slice(0, 8)}`;
    const url = new URL(TEST_POSTGRES_URL);
    url.pathname = `/${name}`;
    try {
      await Promise.all([1, 2, 3].map(() => ensurePostgres(url.toString())));
      const found = await withAdminClient((client) =>
        client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]),
      );
      expect(found.rowCount).toBe(1);
    } finally {
      await withAdminClient((client) => client.query(`DROP DATABASE IF EXISTS "${name}"`));
    }
  });

  it('names the service and how to start it when it does not answer', async () => {
    await expect(ensurePostgres('postgres://postgres@127.0.0.1:1/x')).rejects.toThrow(
      /Postgres is not answering at 127\.0\.0\.1:1 .*pg_ctlcluster/,
    );
    const redis = ensureRedis('redis://127.0.0.1:1');
    await expect(redis).rejects.toBeInstanceOf(ServiceUnavailableError);
    await expect(redis).rejects.toThrow(/Redis is not answering at 127\.0\.0\.1:1 .*redis-server/);
  });
});
