// What the scale bench reads around each step to say where the CPU went: the apps' and this
// process's CPU seconds (/proc), the Postgres server's (its postmaster and every backend, from
// /proc, through postmaster.pid), the Redis server's own count (INFO cpu), and the work they
// did: Postgres transactions, rows inserted and WAL bytes; Redis commands; and, sampled while a
// step runs, what the database's busy backends are doing (on a CPU, or waiting: for the WAL's
// flush, a lock, the client). The servers are TEST_POSTGRES_URL's and TEST_REDIS_URL's: on a
// private pair (devenv.sh) their totals are the bench's alone. The report states the server's
// durability settings as read, since a commit that waits for its WAL flush costs what one that
// does not never shows.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';
import { withAdminClient, type AppProcess } from '@chronicle/testing';
import { cpuTimes, machineTimes, processCpuSeconds, type CpuSeconds } from '../apps';

export interface Reading {
  at: number;
  /** CPU seconds by process: the bench, each app (`api 1`, `context-worker 2`…), postgres, redis */
  cpu: CpuSeconds;
  machine: { busy: number; total: number };
  postgres: { transactions: number; inserted: number; walBytes: number };
  redis: { commands: number };
}

export interface Spent {
  seconds: number;
  cpu: CpuSeconds;
  /** share of the whole machine busy (every process on it, ours or not) */
  machineBusy: number;
  postgres: Reading['postgres'];
  redis: Reading['redis'];
}

/** Backends of the bench's database seen active, sampled every WAIT_SAMPLE_MS during a step. */
export interface BackendWaits {
  samples: number;
  /** backend-samples by `wait_event_type:wait_event` (`CPU` when it waited on nothing) */
  byWait: Record<string, number>;
}

const WAIT_SAMPLE_MS = 250;

export class Probes {
  private postmasterPid?: number;
  /** The server's `fsync` and `synchronous_commit`, as read at the start. */
  durability = 'unknown';

  constructor(
    private readonly database: string,
    private readonly redis: Redis,
    private readonly processes: () => AppProcess[],
  ) {}

  static async open(
    database: string,
    redisUrl: string,
    processes: () => AppProcess[],
  ): Promise<Probes> {
    const probes = new Probes(database, new Redis(redisUrl, { lazyConnect: true }), processes);
    await probes.redis.connect();
    probes.postmasterPid = await withAdminClient(async (client) => {
      const { rows } = await client.query<{ dir: string; fsync: string; sync: string }>(
        `SELECT current_setting('data_directory') AS dir, current_setting('fsync') AS fsync,
                current_setting('synchronous_commit') AS sync`,
      );
      probes.durability = `fsync ${rows[0].fsync}, synchronous_commit ${rows[0].sync}`;
      try {
        return Number(readFileSync(join(rows[0].dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      } catch {
        return undefined; // a server elsewhere: its CPU is left out of the table
      }
    });
    return probes;
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }

  async read(): Promise<Reading> {
    const count = new Map<string, number>();
    const cpu = cpuTimes(this.processes(), (proc) => {
      const n = (count.get(proc.app) ?? 0) + 1;
      count.set(proc.app, n);
      return `${proc.app} ${n}`;
    });
    if (this.postmasterPid) cpu.postgres = this.postgresCpu(this.postmasterPid);
    const info = await this.redis.info();
    const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1]);
    cpu.redis = field('used_cpu_user') + field('used_cpu_sys');
    const postgres = await withAdminClient(async (client) => {
      await client.query('SELECT pg_stat_clear_snapshot()');
      const db = await client.query<{ x: string; i: string }>(
        `SELECT xact_commit + xact_rollback AS x, tup_inserted AS i
           FROM pg_stat_database WHERE datname = $1`,
        [this.database],
      );
      const wal = await client
        .query<{ b: string }>('SELECT wal_bytes AS b FROM pg_stat_wal')
        .catch(() => ({ rows: [{ b: 'NaN' }] }));
      return {
        transactions: Number(db.rows[0]?.x ?? NaN),
        inserted: Number(db.rows[0]?.i ?? NaN),
        walBytes: Number(wal.rows[0]?.b ?? NaN),
      };
    });
    return {
      at: Date.now(),
      cpu,
      machine: machineTimes(),
      postgres,
      redis: { commands: field('total_commands_processed') },
    };
  }

  /** What the database's active backends wait on while `run` runs (one sample a quarter second). */
  async sampleWaits<T>(run: Promise<T>): Promise<{ result: T; waits: BackendWaits }> {
    const waits: BackendWaits = { samples: 0, byWait: {} };
    let done = false;
    const finished = run.finally(() => (done = true));
    await withAdminClient(async (client) => {
      while (!done) {
        const { rows } = await client.query<{ wait: string; n: string }>(
          `SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU') AS wait, count(*) AS n
             FROM pg_stat_activity
            WHERE datname = $1 AND state = 'active' AND backend_type = 'client backend'
              AND pid <> pg_backend_pid()
            GROUP BY 1`,
          [this.database],
        );
        waits.samples += 1;
        for (const row of rows)
          waits.byWait[row.wait] = (waits.byWait[row.wait] ?? 0) + Number(row.n);
        await Promise.race([
          finished,
          new Promise((resolve) => setTimeout(resolve, WAIT_SAMPLE_MS)),
        ]);
      }
    });
    return { result: await finished, waits };
  }

  /** The postmaster's CPU (with its reaped children's) and that of every live backend. */
  private postgresCpu(postmaster: number): number {
    let total = processCpuSeconds(postmaster, true);
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const fields = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ');
        if (Number(fields[1]) === postmaster) total += processCpuSeconds(Number(entry));
      } catch {
        // gone since the listing
      }
    }
    return total;
  }
}

export function spent(before: Reading, after: Reading): Spent {
  const cpu: CpuSeconds = {};
  for (const name of Object.keys(after.cpu)) {
    const delta = after.cpu[name] - (before.cpu[name] ?? 0);
    if (Number.isFinite(delta)) cpu[name] = delta;
  }
  return {
    seconds: (after.at - before.at) / 1000,
    cpu,
    machineBusy:
      (after.machine.busy - before.machine.busy) / (after.machine.total - before.machine.total),
    postgres: {
      transactions: after.postgres.transactions - before.postgres.transactions,
      inserted: after.postgres.inserted - before.postgres.inserted,
      walBytes: after.postgres.walBytes - before.postgres.walBytes,
    },
    redis: { commands: after.redis.commands - before.redis.commands },
  };
}
