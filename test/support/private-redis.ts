// A Redis server of one test file's own, on a free loopback port, run as a child process: a
// fault test may restart it with or without its data, stop it, freeze it or fill it up, which it
// must never do to the server other tests share. Always `noeviction`, as production must run.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { freePort } from './app-processes';

export interface PrivateRedisOptions {
  /** AOF with an fsync on every write, so a restart keeps every acknowledged write (default false) */
  appendOnly?: boolean;
}

const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 10_000;
const FILLER_PREFIX = 'fault-filler:';

export class PrivateRedis {
  private child?: ChildProcess;
  private output = '';
  private appendOnly: boolean;
  private frozen = false;

  private constructor(
    readonly dir: string,
    readonly port: number,
    options: PrivateRedisOptions,
  ) {
    this.appendOnly = options.appendOnly ?? false;
  }

  static async start(options: PrivateRedisOptions = {}): Promise<PrivateRedis> {
    const server = new PrivateRedis(
      mkdtempSync(join(tmpdir(), 'chronicle-redis-')),
      await freePort(),
      options,
    );
    live.add(server);
    await server.startServer();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get isRunning(): boolean {
    return this.child !== undefined && this.child.exitCode === null && !this.child.signalCode;
  }

  get pid(): number {
    return this.child?.pid ?? -1;
  }

  /** Starts the server (again), with the persistence asked for, and waits for PONG. */
  async startServer(options: PrivateRedisOptions = {}): Promise<void> {
    if (this.isRunning) throw new Error('the private Redis is already running');
    if (options.appendOnly !== undefined) this.appendOnly = options.appendOnly;
    const args = [
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--dir',
      this.dir,
      '--save',
      '',
      '--appendonly',
      this.appendOnly ? 'yes' : 'no',
      '--appendfsync',
      'always',
      '--maxmemory-policy',
      'noeviction',
      '--logfile',
      '',
    ];
    const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    child.stdout?.setEncoding('utf8');
    child.stderr?.setEncoding('utf8');
    const keep = (chunk: string) => {
      this.output = (this.output + chunk).slice(-20_000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (!this.isRunning) throw new Error(`redis-server exited at start:\n${this.output}`);
      try {
        if ((await this.command((redis) => redis.ping())) === 'PONG') return;
      } catch {
        // not listening yet
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`redis-server did not answer within ${START_TIMEOUT_MS} ms:\n${this.output}`);
  }

  /**
   * Stops the server. `graceful` (SIGTERM) flushes the AOF; `kill` (SIGKILL) is a crash. A
   * server without persistence comes back empty either way.
   */
  async stopServer(how: 'graceful' | 'kill' = 'graceful'): Promise<void> {
    const child = this.child;
    if (!child || !this.isRunning) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    this.thaw();
    child.kill(how === 'kill' ? 'SIGKILL' : 'SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  }

  /** Stopped and started again; `appendOnly` changes the persistence of the new run. */
  async restart(options: PrivateRedisOptions & { how?: 'graceful' | 'kill' } = {}): Promise<void> {
    await this.stopServer(options.how);
    await this.startServer(options);
  }

  /** SIGSTOP: connections stay open and nothing answers (a frozen host). */
  freeze(): void {
    if (!this.isRunning || this.frozen) return;
    this.child?.kill('SIGSTOP');
    this.frozen = true;
  }

  thaw(): void {
    if (!this.frozen) return;
    this.child?.kill('SIGCONT');
    this.frozen = false;
  }

  /**
   * Fills the server under `noeviction`: maxmemory just above what is used, then filler values
   * until a write is refused with OOM. Every write that needs memory fails until `free()`.
   */
  async fill(): Promise<{ fillerKeys: number }> {
    return this.command(async (redis) => {
      const info = await redis.info('memory');
      const used = Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
      await redis.config('SET', 'maxmemory', String(used + 4 * 1024 * 1024));
      const value = 'x'.repeat(64 * 1024);
      for (let i = 0; i < 10_000; i++) {
        try {
          await redis.set(`${FILLER_PREFIX}${i}`, value);
        } catch (error) {
          if (/OOM/.test((error as Error).message)) return { fillerKeys: i };
          throw error;
        }
      }
      throw new Error('the private Redis never refused a write while being filled');
    });
  }

  /** Undoes `fill()`: the filler goes and the memory limit is lifted. */
  async free(): Promise<void> {
    await this.command(async (redis) => {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${FILLER_PREFIX}*`, 'COUNT', 1000);
        if (keys.length > 0) await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
      await redis.config('SET', 'maxmemory', '0');
    });
  }

  /** One raw command (`call('CONFIG', 'SET', 'appendonly', 'no')`) on a short-lived connection. */
  call(command: string, ...args: string[]): Promise<unknown> {
    return this.command((redis) => redis.call(command, ...args));
  }

  /** One short-lived connection for commands of the test's own. */
  command<T>(fn: (redis: Redis) => Promise<T>): Promise<T> {
    return withConnection(this.url, fn);
  }

  /** What the server printed, for a failure message. */
  logTail(): string {
    return `----- redis (port ${this.port}) -----\n${this.output.split('\n').slice(-30).join('\n')}`;
  }

  /** Kills the server and deletes its directory. */
  async destroy(): Promise<void> {
    await this.stopServer('kill').catch(() => undefined);
    live.delete(this);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Runs `fn` on a connection of its own to one server: no retries, closed after. */
export async function withConnection<T>(url: string, fn: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 2_000,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return await fn(redis);
  } finally {
    redis.disconnect();
  }
}

// A jest worker that is torn down never reaches afterAll: its servers go down with it.
const live = new Set<PrivateRedis>();
process.once('exit', () => {
  for (const server of live) if (server.isRunning) process.kill(server.pid, 'SIGKILL');
});
