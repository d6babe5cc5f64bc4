import { randomUUID } from 'node:crypto';
import { PrivateRedisCluster, TEST_POSTGRES_URL, withAdminClient } from '@chronicle/testing';
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

  it('refuses a Redis Cluster that does not serve every slot, and passes a healthy one', async () => {
    const cluster = await PrivateRedisCluster.start();
    try {
      await expect(ensureRedis(cluster.url)).resolves.toEqual({ warnings: [] });
      const [first, , third] = cluster.ports;
      await cluster.killNode(third);
      // the survivors mark it failed after the node timeout (5 s); then its slots are unserved
      const deadline = Date.now() + 20_000;
      while (!/cluster_state:fail/.test(await cluster.command(first, 'CLUSTER', 'INFO'))) {
        if (Date.now() > deadline) throw new Error('the cluster never noticed the dead master');
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      const refused = ensureRedis(cluster.url);
      await expect(refused).rejects.toBeInstanceOf(ServiceUnavailableError);
      // the dead master holds the probe's first command, or a survivor says cluster_state:fail
      await expect(refused).rejects.toThrow(
        /Redis Cluster at 127\.0\.0\.1:\d+.*(cluster_state:fail|no answer within)/,
      );
    } finally {
      await cluster.destroy();
    }
  }, 60_000);
});
