import type { INestApplication } from '@nestjs/common';
import { KEY_CACHE_TTL_MS } from '@chronicle/accounts';
import { JsonLogger } from '@chronicle/platform';
import {
  startFakeOpenAiServer,
  type FakeOpenAiServer,
} from '../../../../test/support/fake-openai-server';
import { startApi } from '../../src/api.bootstrap';
import { aScenario, fakeModelConfig, startApiHarness, type ApiHarness } from '../api.harness';

// A revoke or a change to a user holds on every API instance at once: each instance keeps the
// keys it has checked, with their user, for KEY_CACHE_TTL_MS, and the instance that writes the
// change tells the others over the control plane. Two real API instances here share one
// database, one Redis and one installation.

describe('changing an account behind two API instances', () => {
  let model: FakeOpenAiServer & { baseURL: string };
  let first: ApiHarness;
  let second: INestApplication;
  let secondUrl: string;

  beforeAll(async () => {
    model = await startFakeOpenAiServer({
      instant: true,
      defaultReply: {
        text: 'Mira rang the bell.',
        usage: { promptTokens: 40, completionTokens: 10 },
      },
    });
    first = await startApiHarness(fakeModelConfig(model));
    second = await startApi(first.config, new JsonLogger('api', 'error'));
    secondUrl = `http://127.0.0.1:${(second.getHttpServer().address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
    await model?.close();
  });

  const on = (baseUrl: string, key: string, method: string, path: string, body?: unknown) =>
    fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  /** A user of their own and their key, checked once on each instance (so both cache it). */
  async function userOnBoth(name: string) {
    const user = await first.request('POST', '/v1/admin/users', { name });
    const key = await first.request('POST', `/v1/admin/users/${user.body.id}/keys`, {});
    for (const baseUrl of [first.baseUrl, secondUrl]) {
      expect((await on(baseUrl, key.body.key, 'GET', '/v1/adventures')).status).toBe(200);
    }
    return { userId: user.body.id as string, keyId: key.body.id as string, key: key.body.key };
  }

  /**
   * The other instance's answer, asked again while it is `before`: the announcement is a pub/sub
   * message, which reaches it a moment after the writer's answer. Fails if it takes a quarter of
   * the cache's TTL, which an instance that was never told would take.
   */
  async function changesOnSecond(ask: () => Promise<Response>, before: number): Promise<number> {
    const started = Date.now();
    let status = (await ask()).status;
    while (status === before && Date.now() - started < KEY_CACHE_TTL_MS / 4) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      status = (await ask()).status;
    }
    expect(Date.now() - started).toBeLessThan(KEY_CACHE_TTL_MS / 4);
    return status;
  }

  it('given a key both instances trust, when it is revoked through one, then the other refuses it long before its cache would expire', async () => {
    const { userId, keyId, key } = await userOnBoth('to revoke');
    const revoked = await first.request('DELETE', `/v1/admin/users/${userId}/keys/${keyId}`);
    expect(revoked.status).toBe(204);
    expect((await on(first.baseUrl, key, 'GET', '/v1/adventures')).status).toBe(401);
    expect(await changesOnSecond(() => on(secondUrl, key, 'GET', '/v1/adventures'), 200)).toBe(401);
    // the harness's own key, never revoked, still works on both
    for (const baseUrl of [first.baseUrl, secondUrl]) {
      expect((await on(baseUrl, first.apiKey, 'GET', '/v1/adventures')).status).toBe(200);
    }
  });

  it('given a user who spent 50 tokens, when their budget is lowered to 50 through one instance, then the other refuses their next model call; raised again, it serves it', async () => {
    const { userId, key } = await userOnBoth('spender');
    const created = await on(first.baseUrl, key, 'POST', '/v1/adventures', aScenario());
    const id = ((await created.json()) as { id: string }).id;
    const regenerate = (baseUrl: string) =>
      on(baseUrl, key, 'POST', `/v1/adventures/${id}/summary/regenerate`);
    // 40 + 10 tokens spent; no budget of their own, and the installation's default is none
    expect((await regenerate(first.baseUrl)).status).toBe(200);
    expect((await regenerate(secondUrl)).status).toBe(200);

    const lowered = await first.request('PATCH', `/v1/admin/users/${userId}`, {
      dailyTokenBudget: 50,
    });
    expect(lowered.status).toBe(200);
    expect(await changesOnSecond(() => regenerate(secondUrl), 200)).toBe(429);
    expect((await regenerate(first.baseUrl)).status).toBe(429);

    const raised = await first.request('PATCH', `/v1/admin/users/${userId}`, {
      dailyTokenBudget: null,
    });
    expect(raised.body.dailyTokenBudget).toBeNull();
    expect(await changesOnSecond(() => regenerate(secondUrl), 429)).toBe(200);
  });
});
