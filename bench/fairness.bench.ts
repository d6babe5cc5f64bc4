// Fairness between users (issue 19): one user flooding 100 adventures must not make ten other
// users wait. The built API and a context worker run as processes; the fake model streams every
// reply over a fixed 1 s. Ten users each play one adventure, pausing a think time between turns
// (exponential, mean 1 s); the measure is their POST → model request, on this process's clock.
// Three phases on one installation, back to back:
//   1. the ten alone;
//   2. the ten while one more user plays 100 adventures back to back (NARRATE_MAX_PER_USER at
//      its default: that user narrates 4 turns at once, the rest wait in line);
//   3. the same flood with the per-user limit off (NARRATE_MAX_PER_USER=0, the worker restarted),
//      to show what the limit is for.
// The target: phase 2's p99 within 2× of phase 1's.
import { performance } from 'node:perf_hooks';
import { AppSystem, readTurnStream, type AppProcess } from '@chronicle/testing';
import { seededRandom } from '../libs/context/src/testing';
import { BENCH_ENV, benchKey, postAdventure } from './apps';
import { ModelCalls, postMarkedAction } from './model-calls';
import { ms, summarize, type Timing } from './stats';

const PLAYERS = 10;
const FLOOD_ADVENTURES = 100;
const PHASE_SECONDS = 30;
const THINK_MEAN_MS = 1_000;
/** The fake model's reply: 8 chunks 125 ms apart, so 1 s from request to last byte. */
const CHUNKS = 8;
const CHUNK_DELAY_MS = 125;
const TARGET_RATIO = 2;

/** The shared bench settings, with streams enough for every player of the flood at once. */
const FAIRNESS_ENV: Record<string, string> = {
  ...BENCH_ENV,
  RATE_LIMIT_READS_PER_MINUTE: '1000000',
  SSE_MAX_PER_KEY: '1000',
};

const REPLY =
  'The ferryman takes your coin without a word and poles out into the fog. Behind you the ' +
  'lanterns of the town shrink to sparks; ahead, something large turns over in the water.';

class Player {
  private turns = 0;

  constructor(
    private readonly apiUrl: string,
    private readonly headers: Record<string, string>,
    private readonly calls: ModelCalls,
    readonly index: number,
    readonly adventureId: string,
  ) {}

  /** One turn to its `done`; the POST → model request interval. */
  async playTurn(): Promise<number> {
    const marker = `${this.index}.${++this.turns}`;
    const { postedAt, stream: path } = await postMarkedAction(
      this.apiUrl,
      this.headers,
      this.adventureId,
      'pay the ferryman',
      this.index,
      this.turns,
    );
    const stream = await readTurnStream(`${this.apiUrl}${path}`, {
      headers: this.headers,
      timeoutMs: 300_000,
    });
    if (stream.outcome !== 'done') {
      throw new Error(
        `turn ${marker} ended with ${stream.outcome}: ${JSON.stringify(stream.final)}`,
      );
    }
    const request = this.calls.take(marker);
    if (request?.receivedAtPerf === undefined) {
      throw new Error(`turn ${marker}: no model request carried its marker`);
    }
    return request.receivedAtPerf - postedAt;
  }
}

// A small adventure of its own (not bench/apps' createAdventure): what this bench compares is
// the queue in front of the model, so the prompt is kept short.
function createAdventure(
  apiUrl: string,
  headers: Record<string, string>,
  index: number,
): Promise<string> {
  return postAdventure(apiUrl, headers, {
    title: `Ferry ${index}`,
    opening: 'Fog lies thick on the river. A ferryman waits by a lantern, hand out for a coin.',
    placeholders: {},
    storyCards: [],
    settings: { model: 'fake-model', contextTokenBudget: 4096 },
  });
}

interface PhaseResult {
  name: string;
  players: Timing;
  flooderTurns: number;
}

/** The ten play paced for PHASE_SECONDS; the flood, if any, plays back to back meanwhile. */
async function runPhase(name: string, players: Player[], flood: Player[]): Promise<PhaseResult> {
  const samples: number[] = [];
  let flooderTurns = 0;
  const deadline = performance.now() + PHASE_SECONDS * 1000;
  let stop = false;
  const flooding = Promise.all(
    flood.map(async (player) => {
      while (!stop) {
        await player.playTurn();
        flooderTurns += 1;
      }
    }),
  );
  // the flood's first turns fill the queue before the ten start
  if (flood.length > 0) await new Promise((resolve) => setTimeout(resolve, 2_000));
  await Promise.all(
    players.map(async (player) => {
      const random = seededRandom(player.index + 1);
      for (;;) {
        await new Promise((resolve) =>
          setTimeout(resolve, -Math.log(1 - random()) * THINK_MEAN_MS),
        );
        if (performance.now() >= deadline) break;
        samples.push(await player.playTurn());
      }
    }),
  );
  stop = true;
  await flooding;
  return { name, players: summarize(samples), flooderTurns };
}

function drainOutput(processes: AppProcess[]): void {
  for (const proc of processes) {
    proc.child.stdout?.removeAllListeners('data');
    proc.child.stdout?.on('data', () => undefined);
  }
}

export default async function fairnessBench(): Promise<string> {
  const calls = new ModelCalls({ text: REPLY, chunks: CHUNKS, delayMs: CHUNK_DELAY_MS });
  const system = await AppSystem.start({
    apps: ['api', 'context-worker'],
    env: FAIRNESS_ENV,
    fake: { defaultReply: calls.reply, maxRecorded: 256 },
    database: { empty: true },
  });
  try {
    return await system.explainFailure(async () => {
      drainOutput(system.running());
      const players: Player[] = [];
      for (let i = 0; i < PLAYERS; i++) {
        const { headers } = await benchKey(system.apiUrl, i);
        players.push(
          new Player(
            system.apiUrl,
            headers,
            calls,
            i,
            await createAdventure(system.apiUrl, headers, i),
          ),
        );
      }
      const { headers: flooderHeaders } = await benchKey(system.apiUrl, 'flooder');
      const flood: Player[] = [];
      for (let i = 0; i < FLOOD_ADVENTURES; i++) {
        const index = PLAYERS + i;
        flood.push(
          new Player(
            system.apiUrl,
            flooderHeaders,
            calls,
            index,
            await createAdventure(system.apiUrl, flooderHeaders, index),
          ),
        );
      }
      // warm-up: every adventure's first turn
      await Promise.all([...players, ...flood].map((p) => p.playTurn()));

      const alone = await runPhase('10 users alone', players, []);
      const fair = await runPhase(
        `10 users + 1 flooding ${FLOOD_ADVENTURES} adventures (NARRATE_MAX_PER_USER=4)`,
        players,
        flood,
      );
      const worker = system.process('context-worker');
      await worker.stop();
      drainOutput([await system.startApp('context-worker', { NARRATE_MAX_PER_USER: '0' })]);
      const unfair = await runPhase(
        `10 users + 1 flooding ${FLOOD_ADVENTURES} adventures (NARRATE_MAX_PER_USER=0: no limit)`,
        players,
        flood,
      );
      return report(alone, fair, unfair);
    });
  } finally {
    await system.close();
  }
}

function report(alone: PhaseResult, fair: PhaseResult, unfair: PhaseResult): string {
  const row = (phase: PhaseResult) =>
    `| ${phase.name} | ${phase.players.samples} | ${ms(phase.players.p50)} | ${ms(phase.players.p99)} | ${(phase.players.p99 / alone.players.p99).toFixed(2)}× | ${phase.flooderTurns} |`;
  const ratio = fair.players.p99 / alone.players.p99;
  return [
    '## Fairness: one user flooding 100 adventures, ten users playing one each',
    '',
    `The fake model streams each reply over ${(CHUNKS * CHUNK_DELAY_MS) / 1000} s; the ten pause ~${THINK_MEAN_MS / 1000} s (exponential) between turns; ${PHASE_SECONDS} s per phase; one API, one context worker (NARRATE_CONCURRENCY 16).`,
    '',
    "| phase | the ten's turns | POST → model request p50 | p99 | p99 vs alone | flooder's turns |",
    '|---|---|---|---|---|---|',
    row(alone),
    row(fair),
    row(unfair),
    '',
    `- The ten's p99 with the flood, per-user limit on: ${ratio.toFixed(2)}× of alone (target ≤ ${TARGET_RATIO}×): ${ratio <= TARGET_RATIO ? 'met' : '**missed**'}.`,
  ].join('\n');
}
