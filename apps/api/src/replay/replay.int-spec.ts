import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { randomUUID } from 'node:crypto';
import { AccountsRepository } from '@chronicle/accounts';
import { canonicalJson, projectionView, type ProjectionView } from '@chronicle/adventure';
import { createAdventureCommand, narrationCommand } from '@chronicle/adventure/testing';
import { AdventureCommandHandler } from '@chronicle/adventure-store';
import { JsonLogger, loadConfig } from '@chronicle/platform';
import {
  createTestDatabase,
  removeQueueKeys,
  testQueuePrefix,
  TEST_REDIS_URL,
  type TestDatabase,
} from '@chronicle/testing';
import { sql } from 'kysely';
import { apiHttpAdapter, configureHttp } from '../api.bootstrap';
import { turnIdFor } from '../adventures/turn-id';
import { ApiModule } from '../api.module';

// The replay routes over HTTP, on the API as ApiModule builds it.

describe('replay routes (HTTP, Postgres)', () => {
  let database: TestDatabase;
  let app: NestExpressApplication;
  let baseUrl: string;
  let prefix: string;
  let adventureId: string;
  const recorded = new Map<number, string>();
  const ADMIN_KEY = `admin-${randomUUID()}`;
  let userKey: string;
  /** fetch with the user's key (the admin's for /v1/admin). */
  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${baseUrl}${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${path.startsWith('/v1/admin') ? ADMIN_KEY : userKey}`,
        ...(init.headers as Record<string, string> | undefined),
      },
    });

  beforeAll(async () => {
    database = await createTestDatabase();
    prefix = testQueuePrefix();
    const config = {
      ...loadConfig({ REDIS_URL: TEST_REDIS_URL, LOG_LEVEL: 'error' }),
      databaseUrl: database.connectionString,
      queuePrefix: prefix,
      host: '127.0.0.1',
      port: 0,
      snapshotEvery: 7,
      modelApiKey: undefined,
      adminApiKey: ADMIN_KEY,
    };
    app = await NestFactory.create<NestExpressApplication>(
      ApiModule.forRoot(config),
      apiHttpAdapter(),
      { logger: new JsonLogger('api', 'error'), bodyParser: false },
    );
    configureHttp(app, config);
    await app.listen(0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;

    const accounts = app.get(AccountsRepository);
    const user = await accounts.createUser({ name: 'replayer' });
    userKey = (await accounts.createKey(user.id))!.key;
    const repo = app.get(AdventureCommandHandler);
    adventureId = randomUUID();
    const run = async (command: Parameters<AdventureCommandHandler['handle']>[1]) => {
      const { state } = await repo.handle(adventureId, command, { actor: 'test' });
      recorded.set(state.version, canonicalJson(projectionView(state)));
    };
    await run(createAdventureCommand({ adventureId, ownerId: user.id }));
    for (let turn = 0; turn < 10; turn++) {
      const turnId = randomUUID();
      await run({
        type: 'SubmitAction',
        data: { turnId, inputType: 'do', text: `go ${turn}`, actionId: randomUUID() },
      });
      await run(
        narrationCommand(turnId, randomUUID(), {
          text: `Narration ${turn}. `.repeat(100),
          manifest: { turn, sections: [] },
        }),
      );
    }
    await repo.snapshotsWritten();
  });

  afterAll(async () => {
    await app.close();
    await database.drop();
    await removeQueueKeys(prefix);
  });

  it('POST /v1/admin/replay answers the report', async () => {
    const response = await call(`/v1/admin/replay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ adventureId }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ adventureId, equal: true, events: 21 });
    const missing = await call(`/v1/admin/replay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ adventureId: randomUUID() }),
    });
    expect(missing.status).toBe(404);
  });

  it('GET …/at/:version answers every version as recorded, with the context of the turn that produced it', async () => {
    for (let version = 1; version <= 21; version++) {
      const response = await call(`/v1/adventures/${adventureId}/at/${version}`);
      expect(response.status).toBe(200);
      const body = (await response.json()) as {
        projection: ProjectionView;
        narrativeState: unknown;
        context: { version: number; manifest: { turn: number } } | null;
      };
      expect(canonicalJson(body.projection)).toBe(recorded.get(version));
      expect(body.narrativeState).toEqual(body.projection.narrative);
      // Narrations sit at odd versions from 3: turn n is narrated at version 2n + 3.
      const lastNarrated = version < 3 ? null : version - ((version - 3) % 2);
      expect(body.context?.version ?? null).toBe(lastNarrated);
      if (lastNarrated) expect(body.context?.manifest.turn).toBe((lastNarrated - 3) / 2);
    }
    const beyond = await call(`/v1/adventures/${adventureId}/at/99`);
    expect(beyond.status).toBe(404);
  });

  it('exports NDJSON and imports it as a new adventure; a corrupt file is a 400 naming the line', async () => {
    const exported = await call(`/v1/adventures/${adventureId}/export`);
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-type')).toContain('application/x-ndjson');
    const text = await exported.text();
    expect(text.trimEnd().split('\n')).toHaveLength(22);

    const count = async () =>
      Number(
        (await sql<{ n: string }>`SELECT count(*) AS n FROM events`.execute(database.db)).rows[0].n,
      );
    const before = await count();
    const lines = text.trimEnd().split('\n');
    lines[9] = lines[9].slice(0, 30);
    const refused = await call(`/v1/adventures/import`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson' },
      body: lines.join('\n'),
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { message: string }).message).toMatch(
      /line 10: not valid JSON/,
    );
    expect(await count()).toBe(before);

    const imported = await call(`/v1/adventures/import`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson' },
      body: text,
    });
    expect(imported.status).toBe(201);
    const body = (await imported.json()) as { adventureId: string };
    expect(body).toMatchObject({ version: 21, sourceAdventureId: adventureId, events: 21 });
    expect(body.adventureId).not.toBe(adventureId);
    const copy = (await (await call(`/v1/adventures/${body.adventureId}/at/21`)).json()) as {
      projection: ProjectionView;
    };
    const original = JSON.parse(recorded.get(21) as string);
    // The same adventure, but its turns renamed into the new adventure's namespace: no imported
    // id names a turn stream or job of the original.
    let expected = canonicalJson({ ...original, id: null, ownerId: null });
    const turnIds = new Set(
      (original.recentTurns as { turnId: string }[]).map((turn) => turn.turnId),
    );
    for (const turnId of turnIds) {
      expected = expected.split(turnId).join(turnIdFor(body.adventureId, turnId));
    }
    expect(canonicalJson({ ...copy.projection, id: null, ownerId: null })).toBe(expected);
    for (const turnId of turnIds) expect(JSON.stringify(copy.projection)).not.toContain(turnId);
  });
});
