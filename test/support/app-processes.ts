// The end-to-end harness: the built apps run as separate Node processes, as in
// production, against this test file's own database and queue prefix and a
// fake OpenAI-compatible server. Nothing is started in-process, so what a test
// sees is what a client of a deployment would see — including a process that
// dies, restarts or refuses to start.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import {
  createTestDatabase,
  removeQueueKeys,
  testQueuePrefix,
  TEST_REDIS_URL,
  type TestDatabase,
  type TestDatabaseOptions,
} from './database';
import { startFakeOpenAiServer, type FakeOpenAiServer } from './fake-openai-server';
import { NODE_RUNTIME_FLAGS } from '../../libs/platform/src/runtime';

export type AppName = 'api' | 'context-worker' | 'memory-worker';

const ROOT = join(__dirname, '..', '..');
/** How long a process may take to say it is ready (migrations, Nest boot, Redis). */
const READY_TIMEOUT_MS = 30_000;
/** The contract: SIGTERM → exit within this bound. */
export const STOP_TIMEOUT_MS = 30_000;
/** Keep at most this much of a process's output (a long test logs a lot). */
const MAX_OUTPUT_CHARS = 2_000_000;

// Run from the sources (jest), this file finds the apps in dist/; compiled (a benchmark runs
// from its build), it finds them beside its own build, whatever outDir that build had.
const BUILD_ROOT = __filename.endsWith('.js') ? ROOT : join(ROOT, 'dist');

/** The built entry point of an app (`npm run build` writes it). */
export function appEntry(app: AppName): string {
  return join(BUILD_ROOT, 'apps', app, 'src', 'main.js');
}

export function isAppBuilt(app: AppName): boolean {
  return existsSync(appEntry(app));
}

/** A port nobody listens on right now (listen on 0, read it, close). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** One running app process, with its output captured. */
export class AppProcess {
  stdout = '';
  stderr = '';
  exit?: ExitStatus;
  private readonly exited: Promise<ExitStatus>;
  private readonly listeners = new Set<() => void>();

  constructor(
    readonly app: AppName,
    readonly child: ChildProcess,
    readonly env: Record<string, string>,
    /** the API's base URL; undefined for workers */
    readonly url: string | undefined,
  ) {
    child.stdout?.setEncoding('utf8');
    child.stderr?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      this.stdout = clip(this.stdout + chunk);
      this.notify();
    });
    child.stderr?.on('data', (chunk: string) => {
      this.stderr = clip(this.stderr + chunk);
      this.notify();
    });
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        this.notify();
        resolve(this.exit);
      });
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get running(): boolean {
    return this.exit === undefined;
  }

  /** The JSON log lines written to stdout so far (other lines are skipped). */
  logs(): Array<Record<string, unknown>> {
    const lines: Array<Record<string, unknown>> = [];
    for (const line of this.stdout.split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // a line cut by the output clip, or not ours
      }
    }
    return lines;
  }

  /**
   * Where this process serves /metrics: the API on its own port; a worker on the port it logged
   * (`metrics listening`, `metricsPort`: the harness starts workers with METRICS_PORT=0).
   */
  metricsUrl(): string {
    if (this.url) return `${this.url}/metrics`;
    const line = this.logs().find((entry) => entry.msg === 'metrics listening');
    if (typeof line?.metricsPort !== 'number') {
      throw new Error(`${this.app} (pid ${this.pid}) has not logged its metrics port`);
    }
    return `http://127.0.0.1:${line.metricsPort}/metrics`;
  }

  /** Resolves when `test` holds over the captured output; rejects on exit or timeout. */
  async waitFor(what: string, test: () => boolean, timeoutMs: number): Promise<void> {
    if (test()) return;
    await new Promise<void>((resolve, reject) => {
      const done = (error?: Error) => {
        clearTimeout(timer);
        this.listeners.delete(check);
        if (error) reject(error);
        else resolve();
      };
      const check = () => {
        if (test()) done();
        else if (!this.running)
          done(new Error(`${this.app} exited (${describeExit(this.exit)}) before ${what}`));
      };
      const timer = setTimeout(
        () => done(new Error(`${this.app}: no ${what} after ${timeoutMs} ms`)),
        timeoutMs,
      );
      this.listeners.add(check);
    });
  }

  /** Ready: the API answers `GET /health` with 200; a worker logs `"<app> ready"`. */
  async waitUntilReady(timeoutMs = READY_TIMEOUT_MS): Promise<void> {
    const marker = `"msg":"${this.app} ready"`;
    await this.waitFor('ready log line', () => this.stdout.includes(marker), timeoutMs);
    if (this.url) await waitForHealth(this, timeoutMs);
  }

  async waitForExit(timeoutMs: number): Promise<ExitStatus> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(new Error(`${this.app} (pid ${this.pid}) still running after ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * SIGTERM, then the exit within `timeoutMs`. Throws if the process outlives it
   * (and then kills it, so a failing test leaves nothing running).
   */
  async stop(timeoutMs = STOP_TIMEOUT_MS): Promise<ExitStatus> {
    if (!this.running) return this.exit as ExitStatus;
    // a process a fault test froze (SIGSTOP) would hold the SIGTERM until the bound
    this.child.kill('SIGCONT');
    this.child.kill('SIGTERM');
    try {
      return await this.waitForExit(timeoutMs);
    } catch (error) {
      this.child.kill('SIGKILL');
      await this.exited;
      throw error;
    }
  }

  /** Sends a signal without waiting (SIGKILL: the process dies mid-work, as in a crash). */
  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (this.running) this.child.kill(signal);
  }

  /** The end of the output, for failure messages. */
  tail(lines = 80): string {
    const cut = (text: string) => text.trimEnd().split('\n').slice(-lines).join('\n');
    return [
      `----- ${this.app} (pid ${this.pid}, ${this.running ? 'running' : describeExit(this.exit)}) stdout -----`,
      cut(this.stdout),
      `----- ${this.app} stderr -----`,
      cut(this.stderr),
    ].join('\n');
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

function clip(text: string): string {
  return text.length > MAX_OUTPUT_CHARS ? text.slice(text.length - MAX_OUTPUT_CHARS) : text;
}

function describeExit(exit: ExitStatus | undefined): string {
  if (!exit) return 'running';
  return exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`;
}

async function waitForHealth(proc: AppProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (!proc.running) throw new Error(`${proc.app} exited (${describeExit(proc.exit)})`);
    try {
      const response = await fetch(`${proc.url}/health`, { signal: AbortSignal.timeout(2_000) });
      if (response.status === 200) return;
      last = `status ${response.status}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${proc.app}: GET /health not 200 after ${timeoutMs} ms (${last})`);
}

// A jest worker that is torn down (timeout, Ctrl-C) never reaches afterAll:
// its children go down with it rather than linger holding ports and jobs.
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** Starts one built app as a child process with exactly `env` on top of PATH/HOME. */
export function spawnApp(app: AppName, env: Record<string, string>, url?: string): AppProcess {
  const entry = appEntry(app);
  if (!existsSync(entry)) {
    throw new Error(`${entry} is missing: run \`npm run build\` first (npm test does).`);
  }
  const child = spawn(process.execPath, [...NODE_RUNTIME_FLAGS, entry], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      NODE_ENV: 'test',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return new AppProcess(app, child, env, url);
}

/** The admin key every e2e installation runs with, unless a test sets ADMIN_API_KEY itself. */
export const E2E_ADMIN_API_KEY = 'e2e-admin-key-not-secret-32-chars-long';

// The API keys of the running test installations, by API base URL, so a client of that URL
// (see test/e2e/support/chronicle.client.ts) sends them without every test threading them.
const installationKeys = new Map<string, { playerKey: string; adminKey: string }>();

/** The player's and the admin's keys of the installation at `baseUrl`, if the harness made them. */
export function installationKeysFor(
  baseUrl: string,
): { playerKey: string; adminKey: string } | undefined {
  return installationKeys.get(baseUrl);
}

/** Creates a user and an API key through the admin routes; returns {userId, keyId, key}. */
export async function createUserKey(
  baseUrl: string,
  adminKey: string,
  body: { name: string; dailyTokenBudget?: number } = { name: 'player' },
): Promise<{ userId: string; keyId: string; key: string }> {
  const post = async (path: string, payload: unknown) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(payload),
    });
    const text = await response.text();
    if (response.status !== 201) throw new Error(`POST ${path}: ${response.status} ${text}`);
    return JSON.parse(text) as Record<string, string>;
  };
  const user = await post('/v1/admin/users', body);
  const key = await post(`/v1/admin/users/${user.id}/keys`, { name: 'e2e' });
  return { userId: user.id, keyId: key.id, key: key.key };
}

export interface AppSystemOptions {
  /** apps started by `start()` (default: api and context-worker) */
  apps?: AppName[];
  /** extra or overriding environment for every app */
  env?: Record<string, string>;
  /** options for the fake model server */
  fake?: Parameters<typeof startFakeOpenAiServer>[0];
  /**
   * `{ empty: true }` starts from an empty database that the first app migrates, for a
   * caller outside jest (a benchmark), where no run has built the migrated template.
   */
  database?: TestDatabaseOptions;
  /**
   * Servers of the caller's own instead of the shared test servers: a fault test runs the apps
   * against a private Postgres database and Redis it may stop, crash or fill (see
   * private-postgres.ts, private-redis.ts). The caller keeps them and destroys them.
   */
  services?: { database: TestDatabase; redisUrl: string };
}

/**
 * One test file's system: its database, queue prefix, fake model server and
 * app processes. `close()` stops everything and drops the database; call it in
 * afterAll (it never throws, so cleanup always completes).
 */
export class AppSystem {
  readonly processes: AppProcess[] = [];
  /** the API's base URL, e.g. http://127.0.0.1:41234 */
  apiUrl = '';
  /** the key of the `player` user the harness created on the first API start */
  apiKey = '';
  private apiPort = 0;

  private constructor(
    readonly database: TestDatabase,
    readonly queuePrefix: string,
    readonly fake: FakeOpenAiServer & { url: string; baseURL: string },
    private readonly extraEnv: Record<string, string>,
    /** the Redis every app of this system uses */
    readonly redisUrl: string,
  ) {}

  static async create(options: AppSystemOptions = {}): Promise<AppSystem> {
    const database =
      options.services?.database ?? (await createTestDatabase(undefined, options.database));
    const fake = await startFakeOpenAiServer(options.fake);
    const redisUrl = options.services?.redisUrl ?? TEST_REDIS_URL;
    return new AppSystem(database, testQueuePrefix(), fake, options.env ?? {}, redisUrl);
  }

  /** create() and start the apps (api first, so the ready workers are reachable through it). */
  static async start(options: AppSystemOptions = {}): Promise<AppSystem> {
    const system = await AppSystem.create(options);
    try {
      for (const app of options.apps ?? ['api', 'context-worker']) await system.startApp(app);
    } catch (error) {
      const output = system.output();
      await system.close();
      throw withOutput(error, output);
    }
    return system;
  }

  /** The environment an app of this system runs with. */
  environment(app: AppName, overrides: Record<string, string> = {}): Record<string, string> {
    const env: Record<string, string> = {
      DATABASE_URL: this.database.connectionString,
      DATABASE_POOL_SIZE: '4',
      REDIS_URL: this.redisUrl,
      QUEUE_PREFIX: this.queuePrefix,
      HOST: '127.0.0.1',
      PORT: String(this.apiPort || 3000),
      LOG_LEVEL: 'info',
      MODEL_BASE_URL: this.fake.baseURL,
      MODEL_API_KEY: 'test-key',
      MODEL_NAME: 'fake-model',
      MODEL_TIMEOUT_MS: '20000',
      EMBEDDING_MODEL: 'fake-embedding',
      NARRATE_ATTEMPTS: '3',
      // a killed worker's lock expires quickly, so its job is picked up again within the test
      NARRATE_LOCK_MS: '2000',
      OUTBOX_SWEEP_INTERVAL_MS: '200',
      SHUTDOWN_TIMEOUT_MS: '20000',
      SNAPSHOT_EVERY: '10',
      ADMIN_API_KEY: E2E_ADMIN_API_KEY,
      // the harness makes its own user and key through the admin routes
      DEV_KEY_ON_START: 'false',
      // a test plays faster than a player; a test of the limits sets its own
      RATE_LIMIT_TURNS_PER_MINUTE: '100000',
      RATE_LIMIT_WRITES_PER_MINUTE: '100000',
      RATE_LIMIT_ANON_PER_MINUTE: '100000',
      // each worker's /metrics on a free port of its own (several run side by side)
      METRICS_PORT: '0',
      ...this.extraEnv,
      ...overrides,
    };
    // workers listen on nothing; a PORT in their environment would only mislead a reader
    if (app !== 'api' && overrides.PORT === undefined) delete env.PORT;
    if (app === 'api' && overrides.METRICS_PORT === undefined) delete env.METRICS_PORT;
    return env;
  }

  /** Starts one app and waits until it is ready. */
  async startApp(app: AppName, overrides: Record<string, string> = {}): Promise<AppProcess> {
    const proc = await this.spawn(app, overrides);
    await proc.waitUntilReady();
    if (app === 'api') await this.registerKeys(proc);
    return proc;
  }

  /** The player key (created once per system) and the admin key, for clients of this API. */
  private async registerKeys(proc: AppProcess): Promise<void> {
    const adminKey = proc.env.ADMIN_API_KEY;
    // a test of the first-start development key needs the users table left empty
    if (!adminKey || !proc.url || proc.env.DEV_KEY_ON_START !== 'false') return;
    if (!this.apiKey) this.apiKey = (await createUserKey(proc.url, adminKey)).key;
    installationKeys.set(proc.url, { playerKey: this.apiKey, adminKey });
  }

  /** Starts one app without waiting (for start-up failures). */
  async spawn(app: AppName, overrides: Record<string, string> = {}): Promise<AppProcess> {
    let url: string | undefined;
    if (app === 'api') {
      if (!this.apiPort || this.processes.some((p) => p.app === 'api' && p.running)) {
        this.apiPort = await freePort();
      }
      url = `http://127.0.0.1:${this.apiPort}`;
      this.apiUrl = url;
    }
    const proc = spawnApp(app, this.environment(app, overrides), url);
    this.processes.push(proc);
    return proc;
  }

  /** The newest running process of an app. */
  process(app: AppName): AppProcess {
    const found = [...this.processes].reverse().find((p) => p.app === app && p.running);
    if (!found) throw new Error(`no running ${app} process`);
    return found;
  }

  running(app?: AppName): AppProcess[] {
    return this.processes.filter((p) => p.running && (app === undefined || p.app === app));
  }

  /** SIGTERM the app's running process (asserting a clean exit), then start a new one. */
  async restart(app: AppName): Promise<AppProcess> {
    const old = this.process(app);
    const status = await old.stop();
    if (status.code !== 0) throw new Error(`${app} exited with ${describeExit(status)} on SIGTERM`);
    return this.startApp(app);
  }

  /** Every process's output tail, for a failure message. */
  output(lines = 80): string {
    return this.processes.map((p) => p.tail(lines)).join('\n');
  }

  /**
   * Runs a test body; on failure the processes' output is appended to the error,
   * so jest prints it with the failure.
   */
  async explainFailure<T>(body: () => Promise<T>): Promise<T> {
    try {
      return await body();
    } catch (error) {
      throw withOutput(error, this.output());
    }
  }

  /** Stops every process (SIGTERM, then SIGKILL past the bound), the fake server, the data. */
  async close(): Promise<void> {
    await Promise.all(
      this.processes.map(async (p) => {
        try {
          await p.stop(STOP_TIMEOUT_MS);
        } catch {
          // stop() already killed it; the test that cares asserted on it
        }
      }),
    );
    await this.fake.close().catch(() => undefined);
    await this.database.drop().catch(() => undefined);
    await removeQueueKeys(this.queuePrefix, this.redisUrl).catch(() => undefined);
  }
}

function withOutput(error: unknown, output: string): unknown {
  if (error instanceof Error) {
    error.message = `${error.message}\n\n${output}`;
    return error;
  }
  return new Error(`${String(error)}\n\n${output}`);
}
