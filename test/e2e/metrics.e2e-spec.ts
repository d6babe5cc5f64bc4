// What an operator scrapes: every process's /metrics through the built apps (the API, the
// context worker and the memory worker as processes, the fake model), behind the admin key
// however the path is spelled; the figures of a turn, of a model that fails, and the log lines
// of a turn joined by their ids.
import { request as httpRequest } from 'node:http';
import { AppSystem, E2E_ADMIN_API_KEY, type AppProcess } from '@chronicle/testing';
import { ChronicleClient } from './support/chronicle.client';

jest.setTimeout(240_000);

let system: AppSystem;
let client: ChronicleClient;
let contextWorker: AppProcess;
let memoryWorker: AppProcess;

/** The price the installation runs with, so the cost counter has something to add. */
const PRICES = JSON.stringify({ 'fake-model': { input: 1, cachedInput: 0.5, output: 2 } });

beforeAll(async () => {
  system = await AppSystem.start({ apps: [], env: { MODEL_PRICES: PRICES } });
  await system.startApp('api');
  contextWorker = await system.startApp('context-worker');
  memoryWorker = await system.startApp('memory-worker');
  system.fake.setDefaultReply(() => ({ text: 'The lamp flickers back to life.' }));
  client = new ChronicleClient(system.apiUrl);
});

afterAll(async () => {
  await system?.close();
});

/** A request sent exactly as written (fetch would normalise the path). */
function rawGet(
  url: string,
  path: string,
  key?: string,
): Promise<{ status: number; body: string; contentType: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: hostname,
        port,
        path,
        method: 'GET',
        headers: key ? { authorization: `Bearer ${key}` } : {},
        timeout: 10_000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body,
            contentType: String(res.headers['content-type'] ?? ''),
          }),
        );
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`GET ${path} timed out`)));
    req.end();
  });
}

async function scrape(proc: AppProcess): Promise<string> {
  const answer = await rawGet(proc.metricsUrl(), '/metrics', E2E_ADMIN_API_KEY);
  if (answer.status !== 200)
    throw new Error(`${proc.app} /metrics: ${answer.status} ${answer.body}`);
  return answer.body;
}

/** The sum of a metric's samples whose labels include `labels` (0 when there are none). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = new Map(
      [...(match[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([key, value]) => present.get(key) === value)) {
      sum += Number(match[4]);
    }
  }
  return sum;
}

function has(text: string, name: string): boolean {
  return text
    .split('\n')
    .some((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`));
}

async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function adventureBody(settings: Record<string, unknown> = {}) {
  return {
    title: 'Metrics',
    opening: 'The lamp of the Saltmarch light has been dark for three nights.',
    settings: { model: 'fake-model', ...settings },
  };
}

/** Spellings a router might read as /metrics: each needs the admin key, and only one answers. */
const SPELLINGS = [
  '/METRICS',
  '/Metrics',
  '/metrics/',
  '/%6detrics',
  '/%256detrics',
  '//metrics',
  '/x/../metrics',
  '/metrics;x=1',
  '/metrics/../metrics',
  '/metrics%2F',
];

describe('GET /metrics', () => {
  it('given no key or a player key, when any process is asked on any spelling, then 401; with the admin key only /metrics answers', () =>
    system.explainFailure(async () => {
      for (const proc of system.running()) {
        const url = proc.metricsUrl();
        for (const path of ['/metrics', '/metrics?x=1', ...SPELLINGS]) {
          for (const key of [undefined, system.apiKey, 'not-the-admin-key-but-long-enough-32']) {
            const answer = await rawGet(url, path, key);
            expect({ app: proc.app, path, key, status: answer.status }).toEqual({
              app: proc.app,
              path,
              key,
              status: 401,
            });
            expect(answer.body).not.toContain('chronicle_');
          }
          const admin = await rawGet(url, path, E2E_ADMIN_API_KEY);
          const exact = path === '/metrics' || path === '/metrics?x=1';
          expect({ app: proc.app, path, status: admin.status }).toEqual({
            app: proc.app,
            path,
            status: exact ? 200 : 404,
          });
          if (exact) {
            expect(admin.contentType).toContain('text/plain');
            expect(admin.body).toContain(`process_cpu_user_seconds_total{app="${proc.app}"}`);
          }
        }
      }
    }));
});

describe('after a turn', () => {
  it('given a narrated turn, when each process is scraped, then its histograms and counters moved, with no id in any label', () =>
    system.explainFailure(async () => {
      const before = await scrape(contextWorker);
      const adventureId = await client.createAdventure(adventureBody({ memoryBankEnabled: true }));
      const played = await client.play(adventureId, 'do', 'light the lamp');
      expect(played.stream.outcome).toBe('done');

      // the player sees `done` before the worker has counted the turn: the turn's counters move
      // when the narrate use case answers, and the job's completion once BullMQ has moved it,
      // the last of the three; scraped after that, every counter of this turn has moved
      const completed = (text: string) =>
        sample(text, 'chronicle_jobs_total', { queue: 'narrate', result: 'completed' });
      let after = '';
      await eventually('the narrate job counted as completed', async () => {
        after = await scrape(contextWorker);
        return completed(after) > completed(before);
      });
      const moved = (name: string, labels: Record<string, string> = {}) =>
        sample(after, name, labels) - sample(before, name, labels);
      expect(moved('chronicle_turn_model_wait_seconds_count')).toBe(1);
      expect(moved('chronicle_turn_finish_seconds_count')).toBe(1);
      expect(moved('chronicle_turns_total', { outcome: 'narrated' })).toBe(1);
      expect(
        moved('chronicle_model_request_duration_seconds_count', {
          purpose: 'narration',
          result: 'ok',
        }),
      ).toBe(1);
      expect(
        moved('chronicle_model_tokens_total', {
          model: 'fake-model',
          purpose: 'narration',
          kind: 'prompt',
        }),
      ).toBeGreaterThan(0);
      expect(
        moved('chronicle_model_cost_usd_total', { model: 'fake-model', purpose: 'narration' }),
      ).toBeGreaterThan(0);
      // POST → model request is measured from the API's receipt of the POST: it is at most the
      // time the whole turn took here, and more than nothing
      const waited = moved('chronicle_turn_model_wait_seconds_sum');
      expect(waited).toBeGreaterThan(0);
      expect(waited).toBeLessThan(60);

      const api = await scrape(system.process('api'));
      expect(
        sample(api, 'chronicle_http_request_duration_seconds_count', {
          method: 'POST',
          route: '/v1/adventures/:id/actions',
          status: '202',
        }),
      ).toBeGreaterThanOrEqual(1);
      expect(has(api, 'chronicle_queue_jobs')).toBe(true);
      expect(sample(api, 'chronicle_queue_jobs', { queue: 'narrate', state: 'waiting' })).toBe(0);
      expect(has(api, 'chronicle_queue_oldest_waiting_seconds')).toBe(true);
      expect(has(api, 'chronicle_sse_connections')).toBe(true);

      // the memory pass the narration called for, counted by the memory worker
      await eventually('the memory job counted as completed', async () => {
        const memory = await scrape(memoryWorker);
        return (
          sample(memory, 'chronicle_jobs_total', { queue: 'memory', result: 'completed' }) >= 1
        );
      });

      for (const proc of system.running()) {
        const text = await scrape(proc);
        expect({
          app: proc.app,
          leaksId: text.includes(adventureId) || text.includes(played.accepted.turnId),
        }).toEqual({
          app: proc.app,
          leaksId: false,
        });
      }
    }));

  it('given a turn, when its log lines are read, then every one on its path carries the ids that join them', () =>
    system.explainFailure(async () => {
      const adventureId = await client.createAdventure(adventureBody());
      const requestId = `metrics-e2e-${Date.now()}`;
      const response = await fetch(`${system.apiUrl}/v1/adventures/${adventureId}/actions`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${system.apiKey}`,
          'content-type': 'application/json',
          'x-request-id': requestId,
        },
        body: JSON.stringify({ type: 'do', text: 'climb the stairs' }),
      });
      expect(response.status).toBe(202);
      const accepted = (await response.json()) as { turnId: string; stream: string };
      await client.follow(accepted);
      await contextWorker.waitFor(
        'the narrated line',
        () =>
          contextWorker.logs().some((l) => l.turnId === accepted.turnId && l.msg === 'narrated'),
        30_000,
      );
      const lines = contextWorker.logs().filter((line) => line.turnId === accepted.turnId);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) {
        expect({ msg: line.msg, ids: pick(line) }).toEqual({
          msg: line.msg,
          ids: {
            adventureId,
            turnId: accepted.turnId,
            jobId: expect.stringMatching(/^narrate-/),
            requestId,
            userId: expect.any(String),
          },
        });
      }
    }));
});

describe('a failing model', () => {
  it('given a provider error, when the turn is retried and when it fails for good, then the errors are counted by code', () =>
    system.explainFailure(async () => {
      const before = await scrape(contextWorker);
      const adventureId = await client.createAdventure(adventureBody());
      // a 500 (retried: the turn is narrated on its second attempt), then a 401 (final)
      system.fake.enqueue({ status: 500, path: '/v1/chat/completions' });
      const retried = await client.play(adventureId, 'do', 'wait for the keeper');
      expect(retried.stream.outcome).toBe('done');
      system.fake.enqueue({ status: 401, path: '/v1/chat/completions' });
      const failed = await client.play(adventureId, 'do', 'call out');
      expect(failed.stream.outcome).toBe('error');

      await eventually(
        'the failures counted',
        async () => {
          const after = await scrape(contextWorker);
          const moved = (name: string, labels: Record<string, string>) =>
            sample(after, name, labels) - sample(before, name, labels);
          return (
            moved('chronicle_model_errors_total', {
              purpose: 'narration',
              code: 'model_unreachable',
            }) === 1 &&
            moved('chronicle_model_errors_total', {
              purpose: 'narration',
              code: 'model_unauthorized',
            }) === 1 &&
            moved('chronicle_narrations_failed_total', { code: 'model_unauthorized' }) === 1 &&
            moved('chronicle_turns_total', { outcome: 'failed' }) === 1 &&
            moved('chronicle_jobs_total', { queue: 'narrate', result: 'retried' }) === 1
          );
        },
        30_000,
      );
    }));
});

describe('METRICS_PORT', () => {
  it('given a second worker on a port another one holds, when it starts, then it stops at once, naming the variable', () =>
    system.explainFailure(async () => {
      const port = new URL(contextWorker.metricsUrl()).port;
      const second = await system.spawn('context-worker', { METRICS_PORT: port });
      const exit = await second.waitForExit(60_000);
      expect(exit.code).toBe(1);
      expect(second.stdout).toContain(`METRICS_PORT ${port} on 127.0.0.1 is in use`);
      // the one that holds it still answers
      expect(await scrape(contextWorker)).toContain('chronicle_turns_total');
    }));
});

function pick(line: Record<string, unknown>) {
  const { adventureId, turnId, jobId, requestId, userId } = line;
  return { adventureId, turnId, jobId, requestId, userId };
}
