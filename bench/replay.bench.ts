// Replay against its physical baseline, in one run on one scratch database: a 10,000-event
// adventure (narrations of about 2 KB, state events every turn) rebuilt from its first event
// next to a raw `pg` read of the same rows, a load from the latest snapshot, and the projection
// at a version in the middle of the log.
import { randomBytes } from 'node:crypto';
import { adventureStreamId, project, projectorVersion } from '@chronicle/adventure';
import { playedAdventure } from '@chronicle/adventure/testing';
import { AdventureCommandHandler, encodeSnapshot, toRecorded } from '@chronicle/adventure-store';
import {
  createDatabase,
  EventStoreRepository,
  migrateToLatest,
  SnapshotRepository,
} from '@chronicle/event-store';
import { Client, Pool } from 'pg';
import { appendHistory } from './history';
import { ms, timeRuns } from './stats';

const ADMIN_URL =
  process.env.BENCH_POSTGRES_URL ??
  process.env.TEST_POSTGRES_URL ??
  'postgres://postgres@127.0.0.1:5432/postgres';
const TURNS = 4_545; // playedAdventure writes 2.2 events a turn on average: about 10,000 events
const NARRATION_CHARS = 2_000;
const FULL_RUNS = 8;
const SNAPSHOT_RUNS = 60;
const AT_RUNS = 12;

export default async function replayBench(): Promise<string> {
  const name = `chronicle_bench_${randomBytes(4).toString('hex')}`;
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const db = createDatabase(url.toString(), 4);
  const pool = new Pool({ connectionString: url.toString(), max: 2 });
  // pool.end() resolves before its sockets have closed: the scratch database's DROP … FORCE
  // may still reach one, and an idle client's error would otherwise end the process.
  pool.on('error', () => undefined);
  try {
    await migrateToLatest(db);
    const events = new EventStoreRepository(db);
    const snapshots = new SnapshotRepository(db);
    const history = playedAdventure(TURNS, NARRATION_CHARS);
    const adventureId = history.state.id as string;
    const streamId = adventureStreamId(adventureId);
    await appendHistory(events, adventureId, history.events);
    const total = history.events.length;
    const middle = Math.floor(total / 2);
    // A fresh repository per run: no process cache, only what is stored.
    const repository = (snapshotEvery: number) =>
      new AdventureCommandHandler(events, snapshots, { snapshotEvery });

    const rawRead = await timeRuns(
      FULL_RUNS,
      async () => {
        const { rows } = await pool.query(
          'SELECT position, stream_id, version, event_id, type, schema_version, data, metadata, recorded_at FROM events WHERE stream_id = $1 ORDER BY version',
          [streamId],
        );
        if (rows.length !== total) throw new Error('raw read is short');
      },
      2,
    );
    const rows = await events.readStream(streamId);
    const foldOnly = await timeRuns(FULL_RUNS, () => project(rows.map(toRecorded)), 2);
    const fullRebuild = await timeRuns(
      FULL_RUNS,
      async () => {
        const state = await repository(Number.MAX_SAFE_INTEGER).load(adventureId);
        if (state?.version !== total) throw new Error('rebuild is short');
      },
      2,
    );

    // The snapshot an append at a multiple of 50 leaves, one event behind the head.
    const atSnapshot = project(rows.slice(0, total - 1).map(toRecorded));
    await snapshots.saveSnapshot(streamId, projectorVersion, total - 1, encodeSnapshot(atSnapshot));
    const leanBytes = encodeSnapshot(atSnapshot).byteLength;
    const wholeBytes = JSON.stringify(atSnapshot).length;
    const snapshotLoad = await timeRuns(SNAPSHOT_RUNS, async () => {
      const state = await repository(50).load(adventureId);
      if (state?.version !== total) throw new Error('snapshot load is short');
    });
    const atMiddle = await timeRuns(
      AT_RUNS,
      async () => {
        const state = await repository(50).loadAt(adventureId, middle);
        if (state.version !== middle) throw new Error('loadAt is off');
      },
      2,
    );

    const ratio = fullRebuild.p50 / rawRead.p50;
    const verdict = (ok: boolean) => (ok ? 'met' : '**missed**');
    return [
      `## Replay (${total} events, narrations ${NARRATION_CHARS} chars)`,
      '',
      '| measurement | p50 | p99 | runs |',
      '|---|---|---|---|',
      `| raw \`pg\` read of the rows | ${ms(rawRead.p50)} | ${ms(rawRead.p99)} | ${rawRead.samples} |`,
      `| full rebuild (read + upcast + fold) | ${ms(fullRebuild.p50)} | ${ms(fullRebuild.p99)} | ${fullRebuild.samples} |`,
      `| fold alone (rows in memory) | ${ms(foldOnly.p50)} | ${ms(foldOnly.p99)} | ${foldOnly.samples} |`,
      `| load from the latest snapshot (+1 event) | ${ms(snapshotLoad.p50)} | ${ms(snapshotLoad.p99)} | ${snapshotLoad.samples} |`,
      `| at/:version ${middle} (no snapshot below it) | ${ms(atMiddle.p50)} | ${ms(atMiddle.p99)} | ${atMiddle.samples} |`,
      '',
      `- Full rebuild ${ratio.toFixed(2)}× the raw read (target ≤ 2×): ${verdict(ratio <= 2)}.`,
      `- Snapshot load p50 ${ms(snapshotLoad.p50)} (target ≤ 10 ms): ${verdict(snapshotLoad.p50 <= 10)}. Lean snapshot ${(leanBytes / 1024).toFixed(0)} KiB; the whole projection as JSON would be ${(wholeBytes / 1024).toFixed(0)} KiB.`,
      `- at/:version p50 ${ms(atMiddle.p50)} (target ≤ 150 ms): ${verdict(atMiddle.p50 <= 150)}.`,
    ].join('\n');
  } finally {
    await pool.end();
    await db.destroy();
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

async function admin(statement: string): Promise<void> {
  const client = new Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
