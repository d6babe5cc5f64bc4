// A redis-server of a test's own, on a free port under a temporary directory, that the test may
// flush, stop and start again (the shared and devenv servers are never touched that way).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { freePort } from './app-processes';

export class RestartableRedis {
  private child?: ChildProcess;

  private constructor(
    readonly dir: string,
    readonly port: number,
    /** AOF on (fsync always): a restart keeps every key */
    readonly appendOnly: boolean,
  ) {}

  static async start(options: { appendOnly?: boolean } = {}): Promise<RestartableRedis> {
    const server = new RestartableRedis(
      mkdtempSync(join(tmpdir(), 'chronicle-durable-redis-')),
      await freePort(),
      options.appendOnly ?? false,
    );
    await server.up();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async up(): Promise<void> {
    const args = [
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--dir',
      this.dir,
      '--save',
      '',
    ];
    args.push('--appendonly', this.appendOnly ? 'yes' : 'no', '--appendfsync', 'always');
    this.child = spawn('redis-server', args, { stdio: 'ignore' });
    const client = new Redis(this.url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on('error', () => undefined);
    try {
      for (let i = 0; i < 100; i++) {
        try {
          await client.connect();
          if ((await client.ping()) === 'PONG') return;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
      throw new Error(`redis-server on ${this.port} did not answer`);
    } finally {
      client.disconnect();
    }
  }

  /** Stops the server (SIGTERM: with AOF on, every key is on disk). */
  async down(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    child.kill('SIGCONT'); // a frozen server cannot act on SIGTERM
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  }

  /** SIGSTOP: the server keeps its sockets open and answers nothing, as a hung host does. */
  freeze(): void {
    this.child?.kill('SIGSTOP');
  }

  thaw(): void {
    this.child?.kill('SIGCONT');
  }

  async command(...args: string[]): Promise<unknown> {
    const client = new Redis(this.url, { maxRetriesPerRequest: 0 });
    try {
      return await client.call(args[0], ...args.slice(1));
    } finally {
      client.disconnect();
    }
  }

  async close(): Promise<void> {
    await this.down();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
