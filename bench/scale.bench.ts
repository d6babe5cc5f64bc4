// Horizontal scale, measured from outside (issue 19): the built apps run as processes, several
// of each, against one Postgres and one Redis; the players reach the two API processes through
// a round-robin proxy (no stickiness); the model is a fake that answers every generation in a
// fixed 1 s, streamed in chunks. Three questions:
//   a. throughput: do 2 context workers narrate ≥ 1.8× the turns/s of 1 at the same per-process
//      concurrency? The model's latency, not the CPU, bounds a worker here, as with a real
//      provider: adventures are played back to back, 4 per narration slot of one worker;
//   b. any instance: does an SSE follower on the other API than the one that accepted the POST
//      get every chunk? (Round robin sends about half the turns' streams to the other one.)
//   c. many players: 2,000 adventures whose players pause ~10 s (exponential: Poisson
//      arrivals) between actions, held 60 s: POST → model request p99 ≤ 100 ms, no lost turn.
//      The load is stepped (¼, ½, 1, 1.5 × the adventures) with the CPU of every process, the
//      Postgres and Redis servers' included, read from /proc around each step: where the
//      ceiling is on this machine, and which part meets it first.
// Every turn of every phase goes into one history ledger, checked against the whole log at the
// end (no acknowledged turn lost or doubled, versions contiguous, one terminal event a turn).
//
// `npm run bench -- scale [--adventures 2000] [--seconds 60] [--think 10] [--steps 500,1000]
//  [--concurrency 16] [--throughput-seconds 20] [--narrate-concurrency 256] [--setup-parallel 8]`
import * as os from 'node:os';
import { AppSystem, checkHistory, HistoryLedger, type HistoryReport } from '@chronicle/testing';
import { BENCH_ENV, benchKey, createAdventure, drainOutput } from './apps';
import type { BenchOptions } from './run';
import { play, ModelTimes, ScalePlayer, type PlayResult } from './scale/players';
import { Probes, spent, type BackendWaits } from './scale/probes';
import { scaleReport, throughputAdventures, type Measured, type ScaleConfig } from './scale/report';
import { MODEL_LATENCY_MS, startThread, type ModelMessage } from './scale/threads';

/** How long the turns still in flight at the end may take before they count as stuck. */
const SETTLE_MS = 60_000;
const SETUP_ATTEMPTS = 5;
/** How long the idle processes' CPU is read for, before the steps. */
const IDLE_SECONDS = 5;
/** Played (at the first step's size) before the steps and not counted. */
const WARMUP_SECONDS = 10;

function positive(options: BenchOptions, name: string, fallback: number): number {
  const raw = options[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw new Error(`--${name} must be a positive number, not ${JSON.stringify(raw)}`);
  }
  return value;
}

export function scaleConfig(options: BenchOptions): ScaleConfig {
  const adventures = Math.round(positive(options, 'adventures', 2_000));
  const steps = options.steps
    ? options.steps.split(',').map((s) => Math.round(positive({ s }, 's', 1)))
    : [...new Set([0.25, 0.5, 1, 1.5].map((f) => Math.max(1, Math.round(adventures * f))))];
  return {
    adventures,
    seconds: positive(options, 'seconds', 60),
    thinkMs: positive(options, 'think', 10) * 1000,
    steps: steps.sort((a, b) => a - b),
    concurrency: Math.round(positive(options, 'concurrency', 16)),
    throughputSeconds: positive(options, 'throughput-seconds', 20),
    narrateConcurrency: Math.round(positive(options, 'narrate-concurrency', 256)),
    setupParallel: Math.round(positive(options, 'setup-parallel', 8)),
    modelLatencyMs: MODEL_LATENCY_MS,
  };
}

/** Runs `task(i)` for 0 ≤ i < count, at most `parallel` at once. */
async function inParallel<T>(
  count: number,
  parallel: number,
  task: (i: number) => Promise<T>,
): Promise<T[]> {
  const results: T[] = new Array<T>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, count) }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}

/**
 * Setup is not what is measured: a 503 (Postgres or Redis slow to answer on a loaded machine)
 * or 429 is tried again, a few times, before the bench gives up.
 */
async function retried<T>(step: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      const transient = /: (503|429|502) /.test((error as Error).message);
      if (!transient || attempt >= SETUP_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
    }
  }
}

async function measured(
  probes: Probes,
  run: () => Promise<PlayResult>,
  sampleWaits = false,
): Promise<Measured> {
  const before = await probes.read();
  let waits: BackendWaits | undefined;
  let result: PlayResult;
  if (sampleWaits) ({ result, waits } = await probes.sampleWaits(run()));
  else result = await run();
  // Postgres counts a transaction when it reports its statistics (about once a second)
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  const after = await probes.read();
  return {
    play: result,
    spent: spent(before, after),
    processes: Object.keys(after.cpu).length,
    ...(waits && { waits }),
  };
}

// Over 80 lines on purpose: the phases in the order they run on one system (a. changes the
// worker count, c. restarts the workers), which reads best as one script.
export default async function scaleBench(options: BenchOptions = {}): Promise<string> {
  const config = scaleConfig(options);
  const loadAtStart = os.loadavg()[0];
  const times = new ModelTimes();
  const model = await startThread<ModelMessage>({ role: 'model' }, times.onMessage);
  let proxy: Awaited<ReturnType<typeof startThread>> | undefined;
  let probes: Probes | undefined;
  const system = await AppSystem.start({
    apps: [],
    env: {
      ...BENCH_ENV,
      MODEL_BASE_URL: model.url,
      MODEL_TIMEOUT_MS: '60000',
    },
    // the harness's own fake stays idle: the model thread answers
    fake: { instant: true, maxRecorded: 1 },
    database: { empty: true },
  });
  try {
    return await system.explainFailure(async () => {
      const started = async (...args: Parameters<AppSystem['startApp']>) => {
        const proc = await system.startApp(...args);
        drainOutput([proc]);
        return proc;
      };
      const apis = [await started('api'), await started('api')];
      proxy = await startThread({ role: 'proxy', upstreams: apis.map((a) => a.url ?? '') });
      await started('memory-worker');
      const narrate = (concurrency: number) => ({ NARRATE_CONCURRENCY: String(concurrency) });
      await started('context-worker', narrate(config.concurrency));

      const ledger = new HistoryLedger();
      const total = Math.max(config.steps[config.steps.length - 1], throughputAdventures(config));
      const setupStarted = Date.now();
      const proxyUrl = proxy.url;
      const players = await inParallel(total, config.setupParallel, async (i) => {
        const key = await retried(() => benchKey(proxyUrl, i));
        const id = await retried(() => createAdventure(proxyUrl, key.headers, i));
        ledger.created(id);
        return new ScalePlayer(proxyUrl, key.headers, times, ledger, i, id);
      });
      const setupSeconds = (Date.now() - setupStarted) / 1000;
      probes = await Probes.open(system.database.name, system.redisUrl, () => system.running());
      const probe = probes;

      // a. 1 then 2 context workers, back to back, at the same per-process concurrency: 8
      // adventures per slot of one worker (4 per slot of two), so the slots stay full even when
      // the rest of a turn's path (POST, follow, the next POST) takes as long as the model
      const busy = players.slice(0, throughputAdventures(config));
      const throughput = (seed: number) =>
        measured(probe, () =>
          play(busy, {
            seconds: config.throughputSeconds,
            thinkMeanMs: 0,
            warmupSeconds: 3,
            seed,
          }),
        );
      const oneWorker = await throughput(1);
      await started('context-worker', narrate(config.concurrency));
      const twoWorkers = await throughput(2);

      // c. two workers with the slots thousands of paced players need, the load stepped
      for (const worker of system.running('context-worker')) await worker.stop();
      for (let i = 0; i < 2; i++)
        await started('context-worker', narrate(config.narrateConcurrency));
      // warm-up, not counted: the new workers' first turns (JIT, pools, scripts' sandboxes)
      await play(players.slice(0, config.steps[0]), {
        seconds: WARMUP_SECONDS,
        thinkMeanMs: config.thinkMs,
        seed: 9,
      });
      // what the processes spend with no player at all (reconciler, polls, heartbeats): the
      // report takes it off each step's CPU, so a step of few turns is not charged for it
      // (after a pause: the warm-up's memory jobs and snapshots end after its last turn)
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const idleBefore = await probe.read();
      await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
      const idle = spent(idleBefore, await probe.read());
      const steps: Measured[] = [];
      for (const [i, adventures] of config.steps.entries()) {
        steps.push(
          await measured(
            probe,
            () =>
              play(players.slice(0, adventures), {
                seconds: config.seconds,
                thinkMeanMs: config.thinkMs,
                seed: 10 + i,
              }),
            true,
          ),
        );
      }

      const history: HistoryReport = await checkHistory(system.database.connectionString, ledger, {
        settleTimeoutMs: SETTLE_MS,
      });
      return scaleReport({
        config,
        setupSeconds,
        oneWorker,
        twoWorkers,
        steps,
        history,
        idle,
        load: [loadAtStart, os.loadavg()[0]],
        durability: probe.durability,
      });
    });
  } finally {
    await probes?.close();
    await system.close();
    await proxy?.worker.terminate();
    await model.worker.terminate();
  }
}
