// What the backend adds to a turn, measured from outside as a client sees it: the built API,
// context worker and (idle) memory worker run as real processes against a scratch database and
// queue prefix, and the model is a fake OpenAI-compatible server that answers at once. Two
// intervals per turn, both on this process's clock (the client and the fake model share it):
//   1. POST …/actions sent → the model request arriving at the fake server
//      (auth, load, decide, append + outbox, the BullMQ handoff, the worker's pickup,
//       projection load, context assembly, the model client's request),
//   2. the model response's last byte written → `done` read from the turn's SSE stream
//      (stream parsing, referee, the Narrated append, the Redis stream publish, the API's
//       blocking read and the SSE write).
// Phases: one adventure alone, a young one and one 5,000 turns long (a turn must not cost more as
// the story grows); 16 adventures whose players pause between turns (the latency
// targets); 16 and then 64 adventures played back to back (saturation, and the sustained
// throughput target).
//
// Why the latency targets are read with players who pause: played back to back, N adventures
// keep N turns in the system at every moment, so by Little's law each turn takes N ÷ throughput.
// At the ≥ 100 turns/s the issue asks for, 16 back-to-back adventures wait ≥ 160 ms a turn
// whatever the backend does, and the two targets could only both hold at ≥ 500 turns/s on
// 2 cores. The added latency is what a player meets when their turn arrives among others, so
// the 16 players here each wait a think time before their next action: exponentially
// distributed (independent players make Poisson arrivals, bursts included) with a mean of
// THINK_MEAN_MS, ten to fifty times faster than people read a narration and type. The
// back-to-back phases stay in the table, so the queueing at saturation is visible too.
import { randomUUID } from 'node:crypto';
import { type AdventureCreated } from '@chronicle/adventure';
import { playedAdventure } from '@chronicle/adventure/testing';
import { EventStoreRepository } from '@chronicle/event-store';
import * as os from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { AppSystem, readTurnStream, withAdminClient, type AppProcess } from '@chronicle/testing';
import { seededRandom } from '../libs/context/src/testing';
import {
  BENCH_ENV,
  benchKey,
  cpuSpent,
  cpuTimes,
  createAdventure,
  drainOutput,
  machineTimes,
  REPLY,
  type BenchPlayer,
  type CpuSeconds,
} from './apps';
import { appendHistory } from './history';
import { ModelCalls, postMarkedAction } from './model-calls';
import { ms, summarize, type Timing } from './stats';

const SINGLE_TURNS = 200;
/** The long adventure: turns already in its log, and turns played on it. */
const LONG_HISTORY_TURNS = 5_000;
const LONG_TURNS = 100;
const CONCURRENT_ADVENTURES = 16;
const PACED_SECONDS = 20;
const THINK_MEAN_MS = 1_000;
const CONCURRENT_SECONDS = 12;
const SUSTAINED_ADVENTURES = 64;
const SUSTAINED_SECONDS = 20;
const WARMUP_TURNS = 3;

const TARGET_P50_MS = 15;
const TARGET_P99_MS = 60;
const TARGET_TURNS_PER_SECOND = 100;

interface TurnSample {
  /** POST sent → model request received */
  toModel: number;
  /** model response finished → done read from the SSE stream */
  toDone: number;
  /** POST sent → 202 read */
  accepted: number;
  /** POST sent → done read */
  total: number;
  doneAt: number;
}

class Player {
  private turns = 0;

  constructor(
    private readonly apiUrl: string,
    private readonly headers: Record<string, string>,
    private readonly calls: ModelCalls,
    readonly index: number,
    readonly adventureId: string,
  ) {}

  async playTurn(): Promise<TurnSample> {
    const marker = `${this.index}.${++this.turns}`;
    const {
      postedAt,
      acceptedAt,
      stream: path,
    } = await postMarkedAction(
      this.apiUrl,
      this.headers,
      this.adventureId,
      'read the chalk mark by the door',
      this.index,
      this.turns,
    );
    let doneAt = 0;
    const stream = await readTurnStream(`${this.apiUrl}${path}`, {
      headers: this.headers,
      timeoutMs: 30_000,
      onFrame: (frame) => {
        if (frame.event === 'done') doneAt = performance.now();
      },
    });
    if (stream.outcome !== 'done') {
      throw new Error(
        `turn ${marker} ended with ${stream.outcome}: ${JSON.stringify(stream.final)}`,
      );
    }
    const request = this.calls.take(marker);
    if (request?.receivedAtPerf === undefined || request.finishedAtPerf === undefined) {
      throw new Error(`turn ${marker}: no finished model request carried its marker`);
    }
    return {
      toModel: request.receivedAtPerf - postedAt,
      toDone: doneAt - request.finishedAtPerf,
      accepted: acceptedAt - postedAt,
      total: doneAt - postedAt,
      doneAt,
    };
  }
}

interface PhaseResult {
  adventures: number;
  samples: TurnSample[];
  seconds: number;
  /** turns finished inside the window, per second */
  turnsPerSecond: number;
  cpu: CpuSeconds;
  /** wall seconds from the first turn to the last one's end */
  elapsed: number;
  /** the share of the machine's cores busy (all processes) */
  machineBusy: number;
  /** Postgres transactions (a statement outside one counts as one) per turn */
  transactionsPerTurn: number;
  loopDelayP99: number;
}

/**
 * Every player plays until `turnsEach` turns or the deadline, back to back or, with
 * `thinkMeanMs`, pausing a random think time before each action; turns that finish after the
 * deadline are waited for but not counted in the rate.
 */
async function runPhase(
  players: Player[],
  until: { turnsEach?: number; seconds?: number; thinkMeanMs?: number },
  probes: Probes,
): Promise<PhaseResult> {
  const samples: TurnSample[] = [];
  const loop = monitorEventLoopDelay({ resolution: 5 });
  const statementsBefore = await probes.statements();
  const machineBefore = machineTimes();
  const cpuBefore = cpuTimes(probes.processes);
  loop.enable();
  const started = performance.now();
  const deadline = until.seconds === undefined ? Infinity : started + until.seconds * 1000;
  await Promise.all(
    players.map(async (player) => {
      // the same think times on every run, different for each player
      const random = seededRandom(player.index + 1);
      for (let turn = 0; turn < (until.turnsEach ?? Infinity); turn++) {
        if (until.thinkMeanMs !== undefined) {
          // exponential: the gaps of a Poisson process
          const think = -Math.log(1 - random()) * until.thinkMeanMs;
          await new Promise((resolve) => setTimeout(resolve, think));
        }
        if (performance.now() >= deadline) break;
        samples.push(await player.playTurn());
      }
    }),
  );
  loop.disable();
  const end = Math.min(deadline, performance.now());
  const seconds = (end - started) / 1000;
  const inWindow = samples.filter((s) => s.doneAt <= end).length;
  const elapsed = (performance.now() - started) / 1000;
  const cpu = cpuSpent(cpuBefore, cpuTimes(probes.processes));
  const machine = machineTimes();
  // Postgres counts a statement's transaction when it reports its statistics (about once a
  // second): give the last ones time to land.
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  return {
    adventures: players.length,
    samples,
    seconds,
    turnsPerSecond: inWindow / seconds,
    cpu,
    elapsed,
    machineBusy: (machine.busy - machineBefore.busy) / (machine.total - machineBefore.total),
    transactionsPerTurn: ((await probes.statements()) - statementsBefore) / samples.length,
    loopDelayP99: loop.percentile(99) / 1e6,
  };
}

interface Probes {
  processes: AppProcess[];
  /** committed + rolled back transactions of the bench database so far */
  statements: () => Promise<number>;
}

async function transactionCount(database: string): Promise<number> {
  return withAdminClient(async (client) => {
    await client.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await client.query<{ n: string }>(
      'SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1',
      [database],
    );
    return Number(rows[0]?.n ?? 0);
  });
}

/**
 * An adventure of LONG_HISTORY_TURNS turns (with retries), written straight into the log: played
 * through the API it would take minutes. Its first turn folds the whole log and leaves a snapshot.
 */
async function longAdventure(system: AppSystem, ownerId: string | null): Promise<string> {
  const history = playedAdventure(LONG_HISTORY_TURNS, 600);
  const adventureId = randomUUID();
  const [created, ...rest] = history.events;
  const events = [
    {
      ...created,
      data: { ...(created as AdventureCreated).data, adventureId, ownerId: ownerId ?? '' },
    },
    ...rest,
  ];
  await appendHistory(new EventStoreRepository(system.database.db), adventureId, events);
  return adventureId;
}

export default async function turnsBench(): Promise<string> {
  // cached_tokens from the prefix the fake saw (OpenAI's rule, per prompt_cache_key)
  const calls = new ModelCalls({ text: REPLY, chunks: 8 });
  const system = await AppSystem.start({
    apps: ['api', 'context-worker', 'memory-worker'],
    env: BENCH_ENV,
    fake: { instant: true, maxRecorded: 256, defaultReply: calls.reply },
    // no jest run has necessarily built the migrated template: the api migrates on start
    database: { empty: true },
  });
  try {
    return await system.explainFailure(async () => {
      const apps = system.running();
      // Captured output is for start-up failures; at 100 turns a second, keeping it would
      // cost this process more than the measurement.
      drainOutput(apps);
      // One player (user and key) per adventure, as in play: the per-key limits and the
      // per-user daily budget then count what one player would.
      const players: Player[] = [];
      const keys: BenchPlayer[] = [];
      for (let i = 0; i < SUSTAINED_ADVENTURES; i++) {
        const key = await benchKey(system.apiUrl, i);
        keys.push(key);
        const id = await createAdventure(system.apiUrl, key.headers, i);
        players.push(new Player(system.apiUrl, key.headers, calls, i, id));
      }
      const authenticated = keys[0].userId !== null;
      const long = new Player(
        system.apiUrl,
        keys[0].headers,
        calls,
        SUSTAINED_ADVENTURES,
        await longAdventure(system, keys[0].userId),
      );
      const probes: Probes = {
        processes: apps,
        statements: () => transactionCount(system.database.name),
      };

      // The share of prompt tokens the fake model's prefix cache served in each phase.
      const cached: number[] = [];
      const observed = async (phase: Promise<PhaseResult>) => {
        const before = { ...system.fake.cacheTotals };
        const result = await phase;
        const prompt = system.fake.cacheTotals.promptTokens - before.promptTokens;
        cached.push((system.fake.cacheTotals.cachedTokens - before.cachedTokens) / prompt);
        return result;
      };
      await runPhase(players, { turnsEach: WARMUP_TURNS }, probes);
      const single = await observed(
        runPhase(players.slice(0, 1), { turnsEach: SINGLE_TURNS }, probes),
      );
      await runPhase([long], { turnsEach: WARMUP_TURNS }, probes);
      const longer = await observed(runPhase([long], { turnsEach: LONG_TURNS }, probes));
      const paced = await observed(
        runPhase(
          players.slice(0, CONCURRENT_ADVENTURES),
          { seconds: PACED_SECONDS, thinkMeanMs: THINK_MEAN_MS },
          probes,
        ),
      );
      const concurrent = await observed(
        runPhase(players.slice(0, CONCURRENT_ADVENTURES), { seconds: CONCURRENT_SECONDS }, probes),
      );
      const sustained = await observed(runPhase(players, { seconds: SUSTAINED_SECONDS }, probes));
      return report(single, longer, paced, concurrent, sustained, authenticated, cached);
    });
  } finally {
    await system.close();
  }
}

const pct = (share: number) => `${(share * 100).toFixed(0)}%`;

function report(
  single: PhaseResult,
  long: PhaseResult,
  paced: PhaseResult,
  concurrent: PhaseResult,
  sustained: PhaseResult,
  authenticated: boolean,
  cached: number[],
): string {
  const verdict = (ok: boolean) => (ok ? 'met' : '**missed**');
  const timing = (phase: PhaseResult, pick: (s: TurnSample) => number): Timing =>
    summarize(phase.samples.map(pick));
  const phases = [single, long, paced, concurrent, sustained];
  const rows: string[] = [];
  const measures: Array<[string, (s: TurnSample) => number, boolean]> = [
    ['POST → model request arrives', (s) => s.toModel, true],
    ['model last byte → `done` on SSE', (s) => s.toDone, true],
    ['POST → 202 read', (s) => s.accepted, false],
    ['POST → `done` (whole turn)', (s) => s.total, false],
  ];
  const verdicts: string[] = [];
  for (const [name, pick, targeted] of measures) {
    const timings = phases.map((p) => timing(p, pick));
    const atPace = timings[2];
    const target = targeted
      ? `p50 ≤ ${TARGET_P50_MS} ms, p99 ≤ ${TARGET_P99_MS} ms at 16 (paced)`
      : '—';
    const ok = atPace.p50 <= TARGET_P50_MS && atPace.p99 <= TARGET_P99_MS;
    rows.push(
      `| ${name} | ${timings.map((t) => `${ms(t.p50)} / ${ms(t.p99)}`).join(' | ')} | ${target} | ${targeted ? verdict(ok) : ''} |`,
    );
    if (targeted) {
      verdicts.push(
        `- ${name} at ${paced.adventures} adventures with players pausing ~${THINK_MEAN_MS / 1000} s: p50 ${ms(atPace.p50)}, p99 ${ms(atPace.p99)}: ${verdict(ok)}.`,
      );
    }
  }
  const throughputOk = sustained.turnsPerSecond >= TARGET_TURNS_PER_SECOND;
  // CPU per turn does not depend on what else the machine runs (much): it says what the
  // targets need, where the latencies above may be other processes' queueing.
  const perTurn = (phase: PhaseResult, name: string) =>
    ((phase.cpu[name] ?? NaN) * 1000) / phase.samples.length;
  const ours = (phase: PhaseResult) =>
    Object.values(phase.cpu).reduce((sum, v) => sum + v, 0) / phase.elapsed;
  const cpuRows = Object.keys(sustained.cpu).map(
    (name) =>
      `| ${name} | ${phases.map((p) => `${perTurn(p, name).toFixed(1)} ms (${pct(p.cpu[name] / p.elapsed)})`).join(' | ')} |`,
  );
  const columns = [
    `1 adventure (${single.samples.length} turns)`,
    `1 adventure ${LONG_HISTORY_TURNS.toLocaleString('en')} turns long (${long.samples.length} turns)`,
    `${paced.adventures} adventures, players pausing ~${THINK_MEAN_MS / 1000} s (${paced.samples.length} turns)`,
    `${concurrent.adventures} adventures back to back (${concurrent.samples.length} turns)`,
    `${sustained.adventures} adventures back to back (${sustained.samples.length} turns)`,
  ];
  return [
    `## Turns: what the backend adds (built apps as processes, instant fake model)`,
    '',
    `API + context worker + idle memory worker on ${authenticated ? 'an API key (auth on)' : 'no key (auth not installed)'}. ` +
      `The latency targets are read with ${paced.adventures} players who pause before each action (exponential think time, mean ${THINK_MEAN_MS} ms); ` +
      `back to back, every turn waits behind the others (by Little's law a turn takes adventures ÷ throughput: the back-to-back columns). p50 / p99:`,
    '',
    `| measure | ${columns.join(' | ')} | target | verdict |`,
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    `| turns/s | ${phases.map((p) => p.turnsPerSecond.toFixed(1)).join(' | ')} | ≥ ${TARGET_TURNS_PER_SECOND} at ${SUSTAINED_ADVENTURES} | ${verdict(throughputOk)} |`,
    `| prompt tokens the model's prefix cache served | ${cached.map((share) => `${(share * 100).toFixed(1)}%`).join(' | ')} | — (\`npm run bench -- cache\`) | |`,
    '',
    ...verdicts,
    `- Sustained ${sustained.turnsPerSecond.toFixed(1)} turns/s across ${sustained.adventures} adventures played back to back, over ${sustained.seconds.toFixed(0)} s: ${verdict(throughputOk)}.`,
    '',
    `CPU per turn (user + system; in brackets, the share of one core it kept busy):`,
    '',
    `| process | ${columns.map((c) => c.replace(/ \(\d+ turns\)$/, '')).join(' | ')} |`,
    '|---|---|---|---|---|---|',
    ...cpuRows,
    `| Postgres transactions per turn | ${phases.map((p) => p.transactionsPerTurn.toFixed(1)).join(' | ')} |`,
    `| whole machine busy (${os.cpus().length} cores, every process on it) | ${phases.map((p) => pct(p.machineBusy)).join(' | ')} |`,
    '',
    `Our processes kept ${phases.map((p) => pct(ours(p) / os.cpus().length)).join(' / ')} of the machine busy; Postgres and Redis are not in the table. ` +
      `When the machine is busy near 100% with our share well below it, other work on the machine took the cores and the latencies above are mostly waiting for them. ` +
      `The bench process's event-loop delay p99 was ${phases.map((p) => ms(p.loopDelayP99)).join(' / ')}: the client and the fake model share that loop, so up to that much of a figure may be the harness's.`,
  ].join('\n');
}
