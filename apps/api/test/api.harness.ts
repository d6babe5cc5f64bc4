import type { INestApplication } from '@nestjs/common';
import { AccountsRepository } from '@chronicle/accounts';
import { AdventureCommandHandler } from '@chronicle/adventure-store';
import { JsonLogger, loadConfig, type AppConfig } from '@chronicle/platform';
import {
  createTestDatabase,
  removeQueueKeys,
  testQueuePrefix,
  TEST_REDIS_URL,
  type TestDatabase,
} from '@chronicle/testing';
import { startApi } from '../src/api.bootstrap';

// Boots the real API in-process on a free port, against a database and a queue prefix of the
// test file's own, and talks to it over HTTP with fetch.

export interface ApiHarness {
  app: INestApplication;
  config: AppConfig;
  baseUrl: string;
  database: TestDatabase;
  adventures: AdventureCommandHandler;
  /** A user of this API and their key, sent by `request` unless it is given an authorization. */
  userId: string;
  apiKey: string;
  request(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<ApiReply>;
  close(): Promise<void>;
}

export interface ApiReply {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** The admin key of a harness API; `request` sends it on /v1/admin routes. */
export const HARNESS_ADMIN_KEY = 'harness-admin-key-of-at-least-32-chars';

export function testConfig(overrides: Partial<AppConfig> = {}): AppConfig {
  return {
    ...loadConfig({ REDIS_URL: TEST_REDIS_URL, LOG_LEVEL: 'error' }),
    host: '127.0.0.1',
    port: 0,
    modelApiKey: undefined,
    adminApiKey: HARNESS_ADMIN_KEY,
    // a test plays faster than a player: rate limits are tested on their own (auth/access.int-spec)
    rateLimitTurnsPerMinute: 100_000,
    rateLimitWritesPerMinute: 100_000,
    rateLimitAnonPerMinute: 100_000,
    rateLimitReadsPerMinute: 100_000,
    ...overrides,
  };
}

/** Settings that point the API at a fake OpenAI-compatible server, with the models it answers. */
export function fakeModelConfig(server: { baseURL: string }): Partial<AppConfig> {
  return {
    modelBaseUrl: server.baseURL,
    modelApiKey: 'test-key',
    modelName: 'fake-model',
    embeddingModel: 'fake-embed',
  };
}

export async function startApiHarness(overrides: Partial<AppConfig> = {}): Promise<ApiHarness> {
  const database = await createTestDatabase();
  const config = testConfig({
    databaseUrl: database.connectionString,
    queuePrefix: testQueuePrefix(),
    ...overrides,
  });
  const app = await startApi(config, new JsonLogger('api', 'error'));
  // A user and key for `request`; none when the test starts the API without its database.
  const accounts = app.get(AccountsRepository);
  const user = await accounts.createUser({ name: 'harness' }).catch(() => null);
  const apiKey = user ? (await accounts.createKey(user.id))!.key : '';
  const address = app.getHttpServer().address() as { port: number };
  const baseUrl = `http://127.0.0.1:${address.port}`;
  const request = async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ApiReply> => {
    const key = path.startsWith('/v1/admin') ? config.adminApiKey : apiKey;
    headers = { authorization: `Bearer ${key}`, ...headers };
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      // not JSON (the docs page, an SSE body): the raw text
    }
    return { status: response.status, headers: response.headers, body: parsed };
  };
  return {
    app,
    config,
    baseUrl,
    database,
    adventures: app.get(AdventureCommandHandler),
    userId: user?.id ?? '',
    apiKey,
    request,
    close: async () => {
      await app.close();
      await database.drop();
      await removeQueueKeys(config.queuePrefix);
    },
  };
}

/** A scenario body with a placeholder, a card and canon. */
export function aScenario(overrides: Record<string, unknown> = {}) {
  return {
    title: 'The Drowned Bell',
    opening: 'You are ${Name}, the last bell-ringer of Hollowmere.',
    placeholders: { Name: 'Mira' },
    plotEssentials: 'The bell tolls under the lake.',
    authorsNote: 'Keep it eerie.',
    aiInstructions: '',
    persona: { name: 'Mira', pronouns: 'she/her', description: 'A stubborn ringer.' },
    storyCards: [{ name: 'Old Tom', keys: 'tom, ferryman', entry: 'Tom rows the ferry.' }],
    canon: {
      rules: ['The dead stay dead.'],
      forbiddenStatusChanges: [{ from: 'dead', to: 'alive' }],
    },
    settings: { temperature: 0.7 },
    ...overrides,
  };
}
