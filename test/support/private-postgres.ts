// A Postgres cluster of one test file's own, on a free loopback port under a temporary
// directory: a fault test may stop it, crash it (immediate mode) or keep it down, which it must
// never do to the server other tests share. The binaries are the installed server's
// (`pg_config --bindir`); run as root, the cluster belongs to the `postgres` user, because
// Postgres refuses to run as root.
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { createDatabase } from '../../libs/event-store/src/database';
import { migrateToLatest } from '../../libs/event-store/src/migrate';
import { freePort } from './app-processes';
import type { TestDatabase } from './database';

const run = promisify(execFile);

/** How a stop treats the clients: `fast` rolls them back and checkpoints; `immediate` is a crash. */
export type PostgresStopMode = 'fast' | 'immediate';

/** Every command's bound: a cluster that does not start or stop in this long is broken. */
const COMMAND_TIMEOUT_MS = 60_000;

function postgresBinDir(): string {
  return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
}

/** Root runs the server's commands as `postgres`; anyone else runs them as themselves. */
function asServerUser(command: string, args: string[]): [string, string[]] {
  if (process.getuid?.() !== 0) return [command, args];
  return ['runuser', ['-u', 'postgres', '--', command, ...args]];
}

function serverUserIds(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) =>
    Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

export class PrivatePostgres {
  private running = false;
  /** The processes `freeze` stopped, to continue in `thaw`. */
  private frozen: number[] = [];

  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly bin: string,
  ) {}

  /** initdb in a fresh temporary directory, then start on a free port. */
  static async start(): Promise<PrivatePostgres> {
    const dir = mkdtempSync(join(tmpdir(), 'chronicle-pg-'));
    const owner = serverUserIds();
    if (owner) chownSync(dir, owner.uid, owner.gid);
    const cluster = new PrivatePostgres(dir, await freePort(), postgresBinDir());
    live.add(cluster);
    try {
      await cluster.command('initdb', [
        '-D',
        cluster.dataDir,
        '-U',
        'postgres',
        '--auth=trust',
        '--encoding=UTF8',
        '--no-sync',
      ]);
      await cluster.startServer();
    } catch (error) {
      await cluster.destroy();
      throw error;
    }
    return cluster;
  }

  get dataDir(): string {
    return join(this.dir, 'data');
  }

  /** The URL of `database` on this cluster. */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  get isRunning(): boolean {
    return this.running;
  }

  /**
   * Starts the server (again). fsync is off: a fault test crashes the server, never the
   * machine, and the OS keeps what was written; synchronous_commit stays on, so a commit that
   * was answered is in the WAL the restart replays.
   */
  async startServer(): Promise<void> {
    const options = [
      `-p ${this.port}`,
      `-k ${this.dir}`,
      '-c listen_addresses=127.0.0.1',
      '-c fsync=off',
      '-c full_page_writes=off',
      '-c max_connections=200',
      '-c shared_buffers=32MB',
    ].join(' ');
    await this.command('pg_ctl', [
      '-D',
      this.dataDir,
      '-l',
      join(this.dir, 'server.log'),
      '-o',
      options,
      '-w',
      '-t',
      '60',
      'start',
    ]);
    this.running = true;
  }

  /** Stops the server: `immediate` is a crash (no checkpoint; the next start replays the WAL). */
  async stopServer(mode: PostgresStopMode = 'fast'): Promise<void> {
    if (!this.running) return;
    await this.command('pg_ctl', ['-D', this.dataDir, '-m', mode, '-w', '-t', '60', 'stop']);
    this.running = false;
  }

  /** A crash and a start: every connection is cut, every open transaction lost. */
  async restart(mode: PostgresStopMode = 'immediate'): Promise<void> {
    await this.stopServer(mode);
    await this.startServer();
  }

  /** Down (crashed) for `ms`, then started again. */
  async downFor(ms: number, mode: PostgresStopMode = 'immediate'): Promise<void> {
    await this.stopServer(mode);
    await new Promise((resolve) => setTimeout(resolve, ms));
    await this.startServer();
  }

  /**
   * SIGSTOP the server: the postmaster first (so it forks nothing more), then every process it
   * forked, the backends serving the open connections among them. Connections stay open and
   * nothing answers, as on a frozen host; a new connection is accepted by the kernel and never
   * greeted.
   */
  freeze(): void {
    if (!this.running || this.frozen.length > 0) return;
    const postmaster = Number(
      readFileSync(join(this.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0],
    );
    process.kill(postmaster, 'SIGSTOP');
    const children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(postmaster)], {
      encoding: 'utf8',
    })
      .split('\n')
      .map((line) => Number(line.trim()))
      .filter((pid) => pid > 0);
    for (const pid of children) {
      try {
        process.kill(pid, 'SIGSTOP');
      } catch {
        // a process that exited meanwhile has nothing to stop
      }
    }
    this.frozen = [postmaster, ...children];
  }

  /** SIGCONT every process `freeze` stopped. */
  thaw(): void {
    for (const pid of this.frozen.reverse()) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // gone
      }
    }
    this.frozen = [];
  }

  get isFrozen(): boolean {
    return this.frozen.length > 0;
  }

  /** A database of this cluster, migrated to the latest, as the test helpers know one. */
  async createDatabase(name = 'chronicle'): Promise<TestDatabase> {
    const admin = new Client({ connectionString: this.url(), connectionTimeoutMillis: 5_000 });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE "${name}"`);
    } finally {
      await admin.end();
    }
    const connectionString = this.url(name);
    const db = createDatabase(connectionString, 4);
    await migrateToLatest(db);
    let dropped = false;
    return {
      db,
      connectionString,
      name,
      // the cluster goes away whole in destroy(); dropping closes this side's pool
      drop: async () => {
        if (dropped) return;
        dropped = true;
        await db.destroy();
      },
    };
  }

  /** The end of the server's log, for a failure message. */
  logTail(lines = 40): string {
    try {
      const text = execFileSync('tail', ['-n', String(lines), join(this.dir, 'server.log')], {
        encoding: 'utf8',
      });
      return `----- postgres (port ${this.port}) -----\n${text}`;
    } catch {
      return '';
    }
  }

  /** Crashes the server (if running) and deletes the cluster's directory. */
  async destroy(): Promise<void> {
    this.thaw();
    try {
      await this.stopServer('immediate');
    } catch {
      // a server that will not stop still has its directory removed below
    }
    live.delete(this);
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** The synchronous crash a process on its way out can still make (see `live`). */
  crashNow(): void {
    this.thaw();
    if (!this.running) return;
    const [command, args] = asServerUser(join(this.bin, 'pg_ctl'), [
      '-D',
      this.dataDir,
      '-m',
      'immediate',
      'stop',
    ]);
    try {
      execFileSync(command, args, { stdio: 'ignore', timeout: 10_000 });
    } catch {
      // nothing more can be done on the way out
    }
    this.running = false;
  }

  private async command(name: string, args: string[]): Promise<void> {
    const [command, full] = asServerUser(join(this.bin, name), args);
    try {
      await run(command, full, { timeout: COMMAND_TIMEOUT_MS, cwd: this.dir });
    } catch (error) {
      const { stderr, stdout } = error as { stderr?: string; stdout?: string };
      throw new Error(
        `${name} ${args.join(' ')} failed: ${(error as Error).message}\n${stdout ?? ''}${stderr ?? ''}\n${this.logTail()}`,
      );
    }
  }
}

// A jest worker that is torn down never reaches afterAll: its clusters go down with it (their
// directories stay in the temporary directory).
const live = new Set<PrivatePostgres>();
process.once('exit', () => {
  for (const cluster of live) cluster.crashNow();
});
