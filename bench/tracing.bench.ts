// What tracing costs a turn: the built API and context worker as processes, an instant fake
// model, one player playing back to back, with OTEL_EXPORTER_OTLP_ENDPOINT unset (tracing off:
// no SDK) and set to a fake OTLP collector on loopback (every span of every turn exported).
// The modes alternate (off, on, off, on: a fresh system each round) so a drift of the machine
// lands on both; each mode's turns are pooled over its rounds. One run, so the ratios compare
// like with like.
import { performance } from 'node:perf_hooks';
import { AppSystem, FakeOtlpCollector, readTurnStream } from '@chronicle/testing';
import {
  BENCH_ENV,
  benchKey,
  cpuSpent,
  cpuTimes,
  createAdventure,
  drainOutput,
  REPLY,
} from './apps';
import { ModelCalls, postMarkedAction } from './model-calls';
import type { BenchOptions } from './run';
import { ms, summarize } from './stats';

const WARMUP_TURNS = 10;
const ROUNDS = 2;

type Mode = 'off' | 'on';

interface RoundResult {
  toModel: number[];
  toDone: number[];
  total: number[];
  /** CPU ms per turn, by process */
  cpuPerTurn: Record<string, number>;
  spans: number;
}

async function playRound(mode: Mode, turns: number): Promise<RoundResult> {
  const collector = mode === 'on' ? await FakeOtlpCollector.start() : null;
  const calls = new ModelCalls({ text: REPLY, chunks: 8 });
  const system = await AppSystem.start({
    apps: ['api', 'context-worker'],
    env: { ...BENCH_ENV, ...(collector ? { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url } : {}) },
    fake: { instant: true, maxRecorded: 256, defaultReply: calls.reply },
    database: { empty: true },
  });
  try {
    return await system.explainFailure(async () => {
      const apps = system.running();
      drainOutput(apps);
      const key = await benchKey(system.apiUrl, 0);
      const adventureId = await createAdventure(system.apiUrl, key.headers, 0);
      const result: RoundResult = { toModel: [], toDone: [], total: [], cpuPerTurn: {}, spans: 0 };
      const play = async (turn: number) => {
        const posted = await postMarkedAction(
          system.apiUrl,
          key.headers,
          adventureId,
          'read the chalk mark by the door',
          0,
          turn,
        );
        let doneAt = 0;
        const stream = await readTurnStream(`${system.apiUrl}${posted.stream}`, {
          headers: key.headers,
          timeoutMs: 30_000,
          onFrame: (frame) => {
            if (frame.event === 'done') doneAt = performance.now();
          },
        });
        if (stream.outcome !== 'done') throw new Error(`turn ${turn} ended ${stream.outcome}`);
        const request = calls.take(`0.${turn}`);
        if (request?.receivedAtPerf === undefined || request.finishedAtPerf === undefined) {
          throw new Error(`turn ${turn}: no finished model request carried its marker`);
        }
        return {
          toModel: request.receivedAtPerf - posted.postedAt,
          toDone: doneAt - request.finishedAtPerf,
          total: doneAt - posted.postedAt,
        };
      };
      for (let turn = 1; turn <= WARMUP_TURNS; turn++) await play(turn);
      const spansBefore = collector?.spans.length ?? 0;
      const before = cpuTimes(apps);
      for (let turn = WARMUP_TURNS + 1; turn <= WARMUP_TURNS + turns; turn++) {
        const sample = await play(turn);
        result.toModel.push(sample.toModel);
        result.toDone.push(sample.toDone);
        result.total.push(sample.total);
      }
      const spent = cpuSpent(before, cpuTimes(apps));
      for (const app of ['api', 'context-worker']) {
        result.cpuPerTurn[app] = ((spent[app] ?? NaN) * 1000) / turns;
      }
      // The batches still in the processes: stopped below, which flushes them.
      await system.close();
      result.spans = (collector?.spans.length ?? 0) - spansBefore;
      return result;
    });
  } finally {
    await system.close();
    await collector?.close();
  }
}

export default async function tracingBench(options: BenchOptions): Promise<string> {
  const turns = Number(options.turns ?? 150);
  const pooled: Record<Mode, RoundResult[]> = { off: [], on: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of ['off', 'on'] as const) pooled[mode].push(await playRound(mode, turns));
  }
  const pool = (mode: Mode, pick: (r: RoundResult) => number[]) =>
    summarize(pooled[mode].flatMap(pick));
  const cpu = (mode: Mode, app: string) =>
    pooled[mode].reduce((sum, r) => sum + r.cpuPerTurn[app], 0) / pooled[mode].length;
  const ratio = (on: number, off: number) => `${(on / off).toFixed(2)}×`;
  const rows: string[] = [];
  const measures: Array<[string, (r: RoundResult) => number[]]> = [
    ['POST → model request arrives', (r) => r.toModel],
    ['model last byte → `done` on SSE', (r) => r.toDone],
    ['POST → `done` (whole turn)', (r) => r.total],
  ];
  for (const [name, pick] of measures) {
    const off = pool('off', pick);
    const on = pool('on', pick);
    rows.push(
      `| ${name} p50 / p99 | ${ms(off.p50)} / ${ms(off.p99)} | ${ms(on.p50)} / ${ms(on.p99)} | ${ratio(on.p50, off.p50)} / ${ratio(on.p99, off.p99)} |`,
    );
  }
  for (const app of ['api', 'context-worker']) {
    const off = cpu('off', app);
    const on = cpu('on', app);
    rows.push(
      `| CPU per turn, ${app} | ${off.toFixed(2)} ms | ${on.toFixed(2)} ms | ${ratio(on, off)} |`,
    );
  }
  const spans = pooled.on.reduce((sum, r) => sum + r.spans, 0) / (ROUNDS * turns);
  return [
    `## Tracing: its cost on a turn (built API and context worker, instant fake model, one player back to back)`,
    '',
    `${ROUNDS} rounds of each mode, alternating (off, on, off, on), ${turns} turns a round after ${WARMUP_TURNS} of warm-up; ` +
      `off: OTEL_EXPORTER_OTLP_ENDPOINT unset (no SDK started); on: set to a fake OTLP collector on loopback, ` +
      `every span exported (${spans.toFixed(1)} spans a turn).`,
    '',
    '| measure | tracing off | tracing on | on ÷ off |',
    '|---|---|---|---|',
    ...rows,
  ].join('\n');
}
