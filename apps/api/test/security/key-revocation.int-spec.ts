import type { INestApplication } from '@nestjs/common';
import { KEY_CACHE_TTL_MS } from '@chronicle/accounts';
import { JsonLogger } from '@chronicle/platform';
import { startApi } from '../../src/api.bootstrap';
import { startApiHarness, type ApiHarness } from '../api.harness';

// A revoke ends a key on every API instance at once: each instance keeps the keys it has checked
// for KEY_CACHE_TTL_MS, and the instance that revokes tells the others over the control plane.
// Two real API instances here share one database, one Redis and one installation.

describe('revoking a key behind two API instances', () => {
  let first: ApiHarness;
  let second: INestApplication;
  let secondUrl: string;

  beforeAll(async () => {
    first = await startApiHarness();
    second = await startApi(first.config, new JsonLogger('api', 'error'));
    secondUrl = `http://127.0.0.1:${(second.getHttpServer().address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await second.close();
    await first.close();
  });

  const listOn = (baseUrl: string, key: string) =>
    fetch(`${baseUrl}/v1/adventures`, { headers: { authorization: `Bearer ${key}` } });

  it('given a key both instances trust, when it is revoked through one, then the other refuses it long before its cache would expire', async () => {
    const created = await first.request('POST', `/v1/admin/users/${first.userId}/keys`, {
      name: 'to revoke',
    });
    expect(created.status).toBe(201);
    const key = created.body.key as string;
    // both instances have checked it, so both hold it in their key cache
    expect((await listOn(first.baseUrl, key)).status).toBe(200);
    expect((await listOn(secondUrl, key)).status).toBe(200);

    const revoked = await first.request(
      'DELETE',
      `/v1/admin/users/${first.userId}/keys/${created.body.id}`,
    );
    expect(revoked.status).toBe(204);
    const revokedAt = Date.now();
    expect((await listOn(first.baseUrl, key)).status).toBe(401);
    // the announcement is a pub/sub message: it reaches the other instance a moment after the 204
    let status = (await listOn(secondUrl, key)).status;
    while (status === 200 && Date.now() - revokedAt < KEY_CACHE_TTL_MS / 4) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      status = (await listOn(secondUrl, key)).status;
    }
    expect({ status, withinQuarterOfTtl: Date.now() - revokedAt < KEY_CACHE_TTL_MS / 4 }).toEqual({
      status: 401,
      withinQuarterOfTtl: true,
    });
    // and the harness's own key, never revoked, still works on both
    expect((await listOn(first.baseUrl, first.apiKey)).status).toBe(200);
    expect((await listOn(secondUrl, first.apiKey)).status).toBe(200);
  });
});
