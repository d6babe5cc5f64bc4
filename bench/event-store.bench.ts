// The event store against its physical baseline, in one run on one scratch
// database: appends (one event + one outbox row each) at 1 and 8 clients next
// to a bare one-row INSERT per transaction through `pg`, and reading a
// 10,000-event stream through the repository next to the same rows through a
// raw `pg` query.
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { JobName, outboxRow } from '@chronicle/queue';
import {
  createDatabase,
  EventStoreRepository,
  migrateToLatest,
  type Database,
  type NewEvent,
} from '@chronicle/event-store';
import { type Kysely, sql } from 'kysely';
import { Client, Pool } from 'pg';
import { ms, summarize, type Timing } from './stats';

const ADMIN_URL =
  process.env.BENCH_POSTGRES_URL ??
  process.env.TEST_POSTGRES_URL ??
  'postgres://postgres@127.0.0.1:5432/postgres';
const PHASE_MS = Number(process.env.BENCH_PHASE_MS ?? 4_000);
const WARMUP_MS = 500;
const CLIENTS = [1, 8];
const STREAM_EVENTS = 10_000;
const READ_RUNS = 12;

interface Throughput extends Timing {
  perSecond: number;
  /** every operation run, the warm-up's included (what a CPU reading over both divides by) */
  operations: number;
}

export default async function eventStoreBench(): Promise<string> {
  const name = `chronicle_bench_${randomBytes(4).toString('hex')}`;
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const db = createDatabase(url.toString(), 8);
  const pool = new Pool({ connectionString: url.toString(), max: 8 });
  // pool.end() resolves before its sockets have closed: the scratch database's DROP … FORCE
  // may still reach one, and an idle client's error would otherwise end the process.
  pool.on('error', () => undefined);
  try {
    await migrateToLatest(db);
    await pool.query(
      'CREATE TABLE baseline (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, data jsonb NOT NULL)',
    );
    const store = new EventStoreRepository(db);
    // Every append through the append_to_stream function: what the one-event statement saves.
    const functionOnly = new EventStoreRepository(db, { oneEventStatement: false });

    const rows: string[] = [];
    const appendAt: Record<number, Throughput> = {};
    const baselineAt: Record<number, Throughput> = {};
    const preparedAt: Record<number, Throughput> = {};
    const functionAt: Record<number, Throughput> = {};
    for (const clients of CLIENTS) {
      baselineAt[clients] = await measure(clients, () => {
        const data = JSON.stringify(playerActed(0).data);
        return () => pool.query('INSERT INTO baseline (data) VALUES ($1)', [data]);
      });
      const appending = (through: EventStoreRepository) => () => {
        const streamId = `adventure-${randomUUID()}`;
        let version = 0;
        return async () => {
          const event = playerActed(version);
          const result = await through.appendToStream(streamId, [event], {
            expectedVersion: version === 0 ? 'no_stream' : version,
            outbox: [
              outboxRow({
                jobName: JobName.NarrateTurn,
                payload: { adventureId: streamId, turnId: event.id },
              }),
            ],
          });
          version = result.nextVersion;
        };
      };
      appendAt[clients] = await measure(clients, appending(store));
      functionAt[clients] = await measure(clients, appending(functionOnly));
      // The append runs as a named prepared statement (database.ts): the same INSERT prepared
      // shows how much of the gap that alone closes. The verdict keeps the issue's baseline.
      preparedAt[clients] = await measure(clients, () => {
        const data = JSON.stringify(playerActed(0).data);
        return () =>
          pool.query({
            name: 'baseline_insert',
            text: 'INSERT INTO baseline (data) VALUES ($1)',
            values: [data],
          });
      });
      rows.push(row(`bare INSERT, ${clients} client(s)`, baselineAt[clients]));
      rows.push(row(`bare INSERT prepared, ${clients} client(s)`, preparedAt[clients]));
      rows.push(row(`appendToStream + outbox, ${clients} client(s)`, appendAt[clients]));
      rows.push(
        row(`the same through append_to_stream only, ${clients} client(s)`, functionAt[clients]),
      );
    }

    const read = await measureRead(store, pool);
    const upkeep = await measureUpkeep(db, store);

    const at8 = appendAt[8];
    const share = at8.perSecond / baselineAt[8].perSecond;
    const readRatio = read.store.p50 / read.raw.p50;
    const verdict = (ok: boolean): string => (ok ? '**pass**' : '**FAIL**');
    return [
      '## Event store',
      '',
      `Scratch database, ${PHASE_MS / 1000} s per phase after ${WARMUP_MS} ms warm-up; pool of 8; one event (~0.3 KB) and one outbox row per append; each client on its own stream.`,
      '',
      '| workload | ops/s | p50 | p99 | mean |',
      '|---|---:|---:|---:|---:|',
      ...rows,
      '',
      `| read a ${STREAM_EVENTS.toLocaleString('en')}-event stream (1–3 KB narrations, ${read.megabytes.toFixed(1)} MB of data), ${READ_RUNS} runs | p50 | p99 |`,
      '|---|---:|---:|',
      `| raw \`pg\` query | ${ms(read.raw.p50)} | ${ms(read.raw.p99)} |`,
      `| readStream | ${ms(read.store.p50)} | ${ms(read.store.p99)} |`,
      '',
      `- Appends at 8 clients: ${at8.perSecond.toFixed(0)}/s = ${(share * 100).toFixed(0)}% of the bare INSERT's ${baselineAt[8].perSecond.toFixed(0)}/s (target ≥ 50%): ${verdict(share >= 0.5)}`,
      `- Append p99 at 8 clients: ${ms(at8.p99)} (target ≤ 15 ms): ${verdict(at8.p99 <= 15)}`,
      `- For comparison, not a target: appends at 8 clients are ${((at8.perSecond / preparedAt[8].perSecond) * 100).toFixed(0)}% of the same INSERT run as a prepared statement (${preparedAt[8].perSecond.toFixed(0)}/s), as the append is.`,
      ...CLIENTS.map(
        (clients) =>
          `- The one-event statement at ${clients} client(s): ${(appendAt[clients].perSecond / functionAt[clients].perSecond).toFixed(2)}× the appends/s of append_to_stream alone, p50 ${ms(appendAt[clients].p50)} against ${ms(functionAt[clients].p50)} (not a target: whether the second path earns its place).`,
      ),
      `- readStream / raw query (p50): ${readRatio.toFixed(2)}× (target ≤ 1.5×): ${verdict(readRatio <= 1.5)}`,
      '',
      ...upkeep,
    ].join('\n');
  } finally {
    await db.destroy();
    await pool.end();
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

/**
 * Runs `clients` loops, each with its own operation (its own stream), for a
 * warm-up and then PHASE_MS; every operation's latency is recorded.
 */
async function measure(
  clients: number,
  makeOperation: () => () => Promise<unknown>,
): Promise<Throughput> {
  const operations = Array.from({ length: clients }, makeOperation);
  const latencies: number[] = [];
  let recording = false;
  let all = 0;
  let stopAt = Date.now() + WARMUP_MS;
  const loop = async (op: () => Promise<unknown>): Promise<void> => {
    while (Date.now() < stopAt) {
      const start = process.hrtime.bigint();
      await op();
      all++;
      if (recording) latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  };
  await Promise.all(operations.map(loop));
  recording = true;
  const started = process.hrtime.bigint();
  stopAt = Date.now() + PHASE_MS;
  await Promise.all(operations.map(loop));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { ...summarize(latencies), perSecond: latencies.length / seconds, operations: all };
}

async function measureRead(store: EventStoreRepository, pool: Pool) {
  const streamId = `adventure-${randomUUID()}`;
  let version = 0;
  let bytes = 0;
  for (let i = 0; i < STREAM_EVENTS; i += 500) {
    const batch = Array.from({ length: 500 }, (_, j) => narrated(i + j));
    bytes += batch.reduce((sum, e) => sum + JSON.stringify(e.data).length, 0);
    version = (await store.appendToStream(streamId, batch, { expectedVersion: version }))
      .nextVersion;
  }
  await pool.query('VACUUM ANALYZE events');

  const rawQuery = () =>
    pool.query(
      `SELECT position, stream_id, version, event_id, type, schema_version, data, metadata, recorded_at
         FROM events WHERE stream_id = $1 ORDER BY version`,
      [streamId],
    );
  const storeQuery = () => store.readStream(streamId);
  const check = await storeQuery();
  if (check.length !== STREAM_EVENTS)
    throw new Error(`read ${check.length} events, wrote ${STREAM_EVENTS}`);

  // Alternate the two so drift on a shared machine hits both alike.
  const raw: number[] = [];
  const viaStore: number[] = [];
  for (let i = 0; i < READ_RUNS + 2; i++) {
    for (const [fn, into] of [
      [rawQuery, raw],
      [storeQuery, viaStore],
    ] as const) {
      const start = process.hrtime.bigint();
      await fn();
      if (i >= 2) into.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  }
  return { raw: summarize(raw), store: summarize(viaStore), megabytes: bytes / 1e6 };
}

/** How many times each is measured, in turn, so drift on a shared machine hits both alike. */
const UPKEEP_ROUNDS = 4;

/**
 * Appends of whole turns (a PlayerActed with its narrate job, then its Narrated) at 8 clients,
 * without read models and with the rows the command handler writes beside such a turn (the turn
 * in flight, the narration's model call; 20261205210000): what keeping them costs an append.
 * (Before that migration a trigger kept turns_in_flight; its row in BENCHMARKS.md is the
 * comparison.)
 */
async function measureUpkeep(db: Kysely<Database>, store: EventStoreRepository): Promise<string[]> {
  const upkeeps = ['none', 'read models with the events (20261205210000)'];
  const results: Record<string, (Throughput & { serverCpuUs: number | null })[]> = {};
  for (let round = 0; round < UPKEEP_ROUNDS; round++) {
    // Each round in the other order: the log grows through the run, and a later phase appends
    // to a larger table.
    const order = round % 2 === 0 ? upkeeps : [...upkeeps].reverse();
    for (const name of order) {
      await sql`TRUNCATE turns_in_flight`.execute(db);
      const cpuBefore = await serverCpuMs(db);
      const phase = await measure(8, turnOperation(store, name !== upkeeps[0]));
      const cpuAfter = await serverCpuMs(db);
      (results[name] ??= []).push({
        ...phase,
        serverCpuUs:
          cpuBefore === null || cpuAfter === null
            ? null
            : (cpuBetween(cpuBefore, cpuAfter) * 1000) / phase.operations,
      });
    }
  }

  const median = <T>(values: T[], by: (value: T) => number) =>
    [...values].sort((a, b) => by(a) - by(b))[Math.floor(values.length / 2)];
  const none = median(results[upkeeps[0]], (t) => t.perSecond).perSecond;
  const noneCpu = median(results[upkeeps[0]], (t) => t.serverCpuUs ?? 0).serverCpuUs;
  const cpu = (us: number | null) => (us === null ? '–' : `${us.toFixed(0)} µs`);
  return [
    `| read-model upkeep: appends of whole turns at 8 clients (median of ${UPKEEP_ROUNDS} phases each, measured in turn) | ops/s | ÷ none | Postgres CPU per append | ÷ none | p50 | p99 |`,
    '|---|---:|---:|---:|---:|---:|---:|',
    ...upkeeps.map((name) => {
      const ts = results[name];
      const m = median(ts, (t) => t.perSecond);
      const c = median(ts, (t) => t.serverCpuUs ?? 0).serverCpuUs;
      const cpuShare = c === null || !noneCpu ? '–' : `${((c / noneCpu) * 100).toFixed(0)}%`;
      return `| ${name} | ${m.perSecond.toFixed(0)} | ${((m.perSecond / none) * 100).toFixed(0)}% | ${cpu(c)} | ${cpuShare} | ${ms(m.p50)} | ${ms(m.p99)} |`;
    }),
    '',
    `- Every phase in the order run, ops/s and Postgres CPU per append: ${Object.entries(results)
      .map(
        ([name, ts]) =>
          `${name.split(' ')[0]} ${ts.map((t) => `${t.perSecond.toFixed(0)} (${cpu(t.serverCpuUs)})`).join(' / ')}`,
      )
      .join('; ')}.`,
    '- Postgres CPU per append: the user + system time of every process of the database server (from /proc, so only with the server on this machine) over the phase, divided by the appends. On a shared machine it is steadier than ops/s, which waits for cores.',
  ];
}

/**
 * CPU time (ms) each of the database server's processes has used so far: its backends and
 * background processes as pg_stat_activity lists them, read from /proc. Null when the server is
 * not on this machine (no such processes to read).
 */
async function serverCpuMs(db: Kysely<Database>): Promise<Map<number, number> | null> {
  const { rows } = await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity`.execute(db);
  const msPerTick = 1000 / 100; // Linux's USER_HZ
  const used = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      used.set(pid, (Number(fields[11]) + Number(fields[12])) * msPerTick);
    } catch {
      // ended meanwhile, or not on this machine
    }
  }
  return used.size === 0 ? null : used;
}

/** CPU ms between two readings: each process's own difference (one started meanwhile from 0). */
function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

/** One client's turns on its own stream: the player's action with its job, then the narration. */
function turnOperation(
  store: EventStoreRepository,
  withReadModels = false,
): () => () => Promise<unknown> {
  return () => {
    const streamId = `adventure-${randomUUID()}`;
    let version = 0;
    let turnId = '';
    return async () => {
      const acting = version % 2 === 0;
      const event = acting ? playerActed(version) : narrated(version);
      if (acting) turnId = (event.data as { turnId: string }).turnId;
      else (event.data as { turnId: string }).turnId = turnId;
      const result = await store.appendToStream(streamId, [event], {
        expectedVersion: version === 0 ? 'no_stream' : version,
        outbox: acting
          ? [
              outboxRow({
                jobName: JobName.NarrateTurn,
                payload: { adventureId: streamId, turnId },
              }),
            ]
          : [],
        ...(withReadModels && {
          readModels: acting
            ? { turnInFlight: turnId, ...(version === 0 && { owner: 'bench-user' }) }
            : {
                turnInFlight: null,
                modelCalls: [
                  {
                    offset: 1,
                    userId: 'bench-user',
                    purpose: 'narration',
                    model: 'bench-model',
                    promptTokens: 1000,
                    completionTokens: 100,
                    cachedTokens: 0,
                  },
                ],
              },
        }),
      });
      version = result.nextVersion;
    };
  };
}

function row(label: string, t: Throughput): string {
  return `| ${label} | ${t.perSecond.toFixed(0)} | ${ms(t.p50)} | ${ms(t.p99)} | ${ms(t.mean)} |`;
}

function playerActed(version: number): NewEvent {
  return {
    id: randomUUID(),
    type: 'PlayerActed',
    schemaVersion: 1,
    data: {
      turnId: randomUUID(),
      actionId: randomUUID(),
      type: 'do',
      text: `You search the ${version % 2 ? 'cellar' : 'library'} for the hidden passage behind the shelves.`,
    },
    metadata: { correlationId: randomUUID(), actor: 'player' },
  };
}

const WORDS =
  'the lantern flickers as wind slips through the broken shutters and somewhere below a door groans open while Mara counts her arrows and listens'.split(
    ' ',
  );

/** A narration of 1–3 KB, varied by index, as the context worker would store it. */
function narrated(index: number): NewEvent {
  const target = 1_000 + ((index * 7919) % 2_000);
  const words: string[] = [];
  let length = 0;
  for (let i = index; length < target; i++) {
    const word = WORDS[(i * 31 + index) % WORDS.length];
    words.push(word);
    length += word.length + 1;
  }
  return {
    id: randomUUID(),
    type: 'Narrated',
    schemaVersion: 1,
    data: {
      turnId: randomUUID(),
      actionId: randomUUID(),
      text: words.join(' '),
      stateEvents: [{ kind: 'location', value: 'the old keep' }],
    },
    metadata: {
      correlationId: randomUUID(),
      model: 'offline-narrator',
      usage: { promptTokens: 1800, completionTokens: 240, cachedTokens: 1024 },
      latencyMs: 850,
    },
  };
}

async function admin(statement: string): Promise<void> {
  const client = new Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
