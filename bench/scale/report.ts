// The scale bench's report: the three verdicts, the stepped load with where the CPU went, and
// the ceiling it implies on this machine.
import * as os from 'node:os';
import type { HistoryReport } from '@chronicle/testing';
import { ms, summarize } from '../stats';
import type { PlayResult, TurnSample } from './players';
import type { BackendWaits, Spent } from './probes';

export interface ScaleConfig {
  adventures: number;
  seconds: number;
  thinkMs: number;
  steps: number[];
  concurrency: number;
  throughputSeconds: number;
  narrateConcurrency: number;
  setupParallel: number;
  modelLatencyMs: number;
}

/** The adventures played back to back in a.: 8 per narration slot of one worker. */
export const throughputAdventures = (config: ScaleConfig): number => 8 * config.concurrency;

/** One phase's turns and what the processes spent on them. */
export interface Measured {
  play: PlayResult;
  spent: Spent;
  processes: number;
  /** sampled while the step ran (the steps of c. only) */
  waits?: BackendWaits;
}

export const TARGET_RATIO = 1.8;
export const TARGET_TO_MODEL_P99_MS = 100;

interface Inputs {
  config: ScaleConfig;
  setupSeconds: number;
  oneWorker: Measured;
  twoWorkers: Measured;
  steps: Measured[];
  history: HistoryReport;
  /** what the processes spent over a few seconds with no player */
  idle: Spent;
  /** the machine's 1-minute load average at the start and at the end */
  load: [number, number];
  /** the Postgres server's fsync and synchronous_commit, as read */
  durability: string;
}

const verdict = (ok: boolean) => (ok ? 'met' : '**missed**');
const pct = (share: number) => `${(share * 100).toFixed(0)}%`;
const GROUPS = ['api', 'context-worker', 'memory-worker', 'postgres', 'redis'] as const;

/** CPU seconds of a group of processes (`api` = `api 1` + `api 2`). */
function groupCpu(step: Measured, group: string): number {
  return Object.entries(step.spent.cpu)
    .filter(([name]) => name === group || name.startsWith(`${group} `))
    .reduce((sum, [, seconds]) => sum + seconds, 0);
}

const finite = (values: number[]) => values.filter(Number.isFinite);

function stepRow(
  step: Measured,
  adventures: number,
  thinkMs: number,
  modelLatencyMs: number,
): string {
  const all = step.play.all;
  const ok = all.filter((s) => s.ok);
  const toModel = summarize(finite(ok.map((s) => s.toModel)));
  const accepted = summarize(finite(ok.map((s) => s.accepted)));
  const toDone = summarize(finite(ok.map((s) => s.toDone)));
  const model = summarize(finite(ok.map((s) => s.model)));
  const turns = all.length;
  const perTurn = (group: string) => ((groupCpu(step, group) * 1000) / turns).toFixed(1);
  const ours = Object.values(step.spent.cpu).reduce((a, b) => a + b, 0) / step.spent.seconds;
  return [
    `${adventures.toLocaleString('en')}`,
    // what the players ask of a system that keeps up: one turn per think time + model latency
    `${((adventures / (thinkMs + modelLatencyMs)) * 1000).toFixed(0)}`,
    step.play.turnsPerSecond.toFixed(1),
    `${ms(toModel.p50)} / **${ms(toModel.p99)}**`,
    `${ms(accepted.p50)} / ${ms(accepted.p99)}`,
    `${ms(toDone.p50)} / ${ms(toDone.p99)}`,
    ms(model.p50),
    String(all.length - ok.length),
    ...GROUPS.map(perTurn),
    ((step.spent.cpu['bench (client + fake model)'] * 1000) / turns).toFixed(1),
    ours.toFixed(2),
    pct(step.spent.machineBusy),
    (step.spent.postgres.transactions / turns).toFixed(1),
    (step.spent.postgres.inserted / turns).toFixed(1),
    (step.spent.postgres.walBytes / turns / 1024).toFixed(1),
    (step.spent.redis.commands / turns).toFixed(0),
  ].join(' | ');
}

/**
 * What a step's busy Postgres backends were doing: how many were active at a sample, on average,
 * and the share of those backend-samples by what they waited on (CPU: nothing).
 */
function backendLine(step: Measured, adventures: number): string | null {
  const waits = step.waits;
  if (!waits || waits.samples === 0) return null;
  const total = Object.values(waits.byWait).reduce((sum, n) => sum + n, 0);
  const at = `- Postgres at ${adventures.toLocaleString('en')} adventures (pg_stat_activity every 250 ms, ${waits.samples} samples): `;
  if (total === 0) return `${at}no backend was ever seen active.`;
  const shares = Object.entries(waits.byWait)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([wait, n]) => `${wait} ${pct(n / total)}`)
    .join(', ');
  return `${at}${(total / waits.samples).toFixed(1)} backends active at a time on average; of those, ${shares}.`;
}

/** Every process's share of one core during a step: which one is nearest its own limit. */
function coreShares(step: Measured): string {
  return Object.entries(step.spent.cpu)
    .sort(([, a], [, b]) => b - a)
    .map(([name, seconds]) => `${name} ${pct(seconds / step.spent.seconds)}`)
    .join(', ');
}

function crossInstance(samples: TurnSample[]) {
  const followed = samples.filter((s) => s.postedTo !== null && s.followedOn !== null);
  const crossed = followed.filter((s) => s.postedTo !== s.followedOn);
  const complete = crossed.filter((s) => s.ok && s.everyChunk && s.chunks > 0);
  const sameComplete = followed.filter(
    (s) => s.postedTo === s.followedOn && s.ok && s.everyChunk && s.chunks > 0,
  );
  const chunks = summarize(crossed.map((s) => s.chunks));
  return { followed, crossed, complete, sameComplete, chunks };
}

/**
 * A step where the machine was busy while our processes used a small share of it measured
 * mostly waiting for a core: say so, or the latencies read as the backend's.
 */
function starved(steps: Measured[], cores: number): string[] {
  const shares = steps.map((step) => {
    const ours = Object.values(step.spent.cpu).reduce((a, b) => a + b, 0) / step.spent.seconds;
    return { busy: step.spent.machineBusy, ours: ours / cores };
  });
  const starvedSteps = shares.filter((s) => s.busy > 0.9 && s.ours < 0.6);
  if (starvedSteps.length === 0) return [];
  const others = starvedSteps.map((s) => pct(s.busy - s.ours)).join(', ');
  return [
    `- **The machine was not ours**: in ${starvedSteps.length} of ${steps.length} steps it was over 90% busy while our processes (bench included) used under 60% of it; other work held ${others} of the cores. ` +
      `Latencies measured so are mostly the wait for a core, not the backend's: rerun on a quiet machine and read the CPU per turn (which does not depend on the waiting) for the ceiling.`,
  ];
}

// One long function on purpose: it is the report read top to bottom (the verdicts of a, b and
// c, then the ceiling), each line next to the figures it quotes.
export function scaleReport(inputs: Inputs): string {
  const { config, oneWorker, twoWorkers, steps, history } = inputs;
  const cores = os.cpus().length;
  const ratio = twoWorkers.play.turnsPerSecond / oneWorker.play.turnsPerSecond;
  const allSamples = [oneWorker, twoWorkers, ...steps].flatMap((m) => m.play.all);
  const cross = crossInstance(allSamples);
  const crossOk = cross.crossed.length > 0 && cross.complete.length === cross.crossed.length;
  const historyOk = history.problems.length === 0 && history.lost === 0;
  const targetIndex = config.steps.indexOf(config.adventures);
  const p99 = (step: Measured) =>
    summarize(finite(step.play.all.filter((s) => s.ok).map((s) => s.toModel))).p99;
  const failures = (step: Measured) => step.play.all.filter((s) => !s.ok).length;
  const stepOk = (step: Measured) => p99(step) <= TARGET_TO_MODEL_P99_MS && failures(step) === 0;
  const target = targetIndex >= 0 ? steps[targetIndex] : undefined;
  const targetOk = target !== undefined && stepOk(target) && historyOk;

  // The ceiling: the largest step that held the target, and what the CPU per turn implies.
  const held = steps.filter(stepOk);
  const heldAt = held.length > 0 ? config.steps[steps.indexOf(held[held.length - 1])] : 0;
  // the step that moved the most turns: the nearest to saturation that still ran (a step past
  // the ceiling can move fewer, its CPU going to turns that time out)
  const top = steps.reduce((best, s) =>
    s.play.turnsPerSecond > best.play.turnsPerSecond ? s : best,
  );
  const topAdventures = config.steps[steps.indexOf(top)];
  const topTurns = top.play.all.length;
  // CPU a turn costs beyond what the processes spend idle (over as long as the step lasted)
  const idleRate = (group: string) =>
    groupCpu({ play: top.play, spent: inputs.idle, processes: 0 }, group) / inputs.idle.seconds;
  const cpuMsPerTurn = (step: Measured, groups: readonly string[]) =>
    (groups.reduce(
      (sum, g) => sum + Math.max(0, groupCpu(step, g) - idleRate(g) * step.spent.seconds),
      0,
    ) *
      1000) /
    step.play.all.length;
  const idleCores = GROUPS.reduce((sum, g) => sum + idleRate(g), 0);
  const serverMs = cpuMsPerTurn(top, GROUPS);
  const benchMs = ((top.spent.cpu['bench (client + fake model)'] ?? 0) * 1000) / topTurns;
  const capacity = (cores * 1000) / serverMs;
  const turnSeconds = summarize(finite(top.play.all.map((s) => s.model + s.toDone))).mean / 1000;
  const shares = GROUPS.map((g) => ({ g, ms: cpuMsPerTurn(top, [g]) })).sort((a, b) => b.ms - a.ms);
  const node = cpuMsPerTurn(top, ['api', 'context-worker', 'memory-worker']);
  const firstFailure = steps.find((s) => !stepOk(s));

  // what the failed turns met, the commonest first, each with how many met it
  const problemCounts = new Map<string, number>();
  for (const sample of allSamples) {
    if (sample.ok) continue;
    const problem = sample.problem ?? 'unknown';
    problemCounts.set(problem, (problemCounts.get(problem) ?? 0) + 1);
  }
  const failedProblems = [...problemCounts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([problem, count]) => `${problem} (${count.toLocaleString('en')})`);

  return [
    `## Scale: many processes on one Postgres and one Redis (issue 19)`,
    '',
    `Built apps as processes: 2 API processes behind a round-robin proxy (in the bench, no stickiness), ` +
      `context workers as below, 1 memory worker; one Postgres (${inputs.durability}) and one Redis. ` +
      `The fake model answers every generation in ${config.modelLatencyMs} ms, streamed in chunks; it runs on a thread of its own ` +
      `and the proxy on another, so the players on the main thread do not delay what they measure. ` +
      `${cores} cores, shared with other work (the machine's busy share is in the table). ` +
      `Load average ${inputs.load[0].toFixed(1)} at the start, ${inputs.load[1].toFixed(1)} at the end. ` +
      `Setup: ${steps.length > 0 ? Math.max(...config.steps, throughputAdventures(config)).toLocaleString('en') : 0} users, keys and adventures in ${inputs.setupSeconds.toFixed(0)} s.`,
    '',
    `### a. 1 vs 2 context workers (${config.concurrency} narrations each, ${throughputAdventures(config)} adventures back to back)`,
    '',
    `| context workers | turns/s | POST → model p50 / p99 | CPU: each worker's share of a core |`,
    '|---|---|---|---|',
    ...[oneWorker, twoWorkers].map((m, i) => {
      const toModel = summarize(finite(m.play.all.map((s) => s.toModel)));
      const workers = Object.entries(m.spent.cpu)
        .filter(([name]) => name.startsWith('context-worker'))
        .map(([, s]) => pct(s / m.spent.seconds))
        .join(', ');
      return `| ${i + 1} | ${m.play.turnsPerSecond.toFixed(1)} | ${ms(toModel.p50)} / ${ms(toModel.p99)} | ${workers} |`;
    }),
    '',
    `- Ratio ${ratio.toFixed(2)} (target ≥ ${TARGET_RATIO}): ${verdict(ratio >= TARGET_RATIO)}. ` +
      `Turns counted over ${config.throughputSeconds} s after a 3 s warm-up; a worker's bound is its slots ÷ the model's latency ` +
      `(${config.concurrency} ÷ ${(config.modelLatencyMs / 1000).toFixed(1)} s ≈ ${(config.concurrency / (config.modelLatencyMs / 1000)).toFixed(0)} turns/s), ` +
      `the POST → model time of 1 worker is the queue in front of its slots.`,
    '',
    `### b. SSE follower on the other API instance`,
    '',
    `- Of ${cross.followed.length} turns followed through the proxy, ${cross.crossed.length} were followed on the other API than the one that accepted the POST; ` +
      `${cross.complete.length} of them got every chunk (the chunks' text is the whole narration \`done\` carries; ${ms(cross.chunks.p50).replace(' ms', '')} chunk frames a turn at the median): ${verdict(crossOk)}. ` +
      `Same instance: ${cross.sameComplete.length} of ${cross.followed.length - cross.crossed.length} complete.`,
    '',
    `### c. Many adventures, players pausing ~${config.thinkMs / 1000} s (${config.seconds} s a step, 2 context workers × ${config.narrateConcurrency} narrations)`,
    '',
    `CPU columns are milliseconds of CPU per turn (user + system, from /proc; the Postgres server with all its backends, Redis from INFO); ` +
      `"ours" is the cores our processes kept busy together (bench included); "machine" is the share of all ${cores} cores busy, any process's.`,
    '',
    `| adventures | offered turns/s | turns/s | POST → model p50 / p99 | POST → 202 p50 / p99 | model end → done p50 / p99 | model | failed | api | context workers | memory worker | postgres | redis | bench | ours (cores) | machine | PG xacts/turn | PG rows/turn | WAL KB/turn | Redis cmds/turn |`,
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...steps.map(
      (step, i) => `| ${stepRow(step, config.steps[i], config.thinkMs, config.modelLatencyMs)} |`,
    ),
    '',
    ...starved(steps, cores),
    target
      ? `- ${config.adventures.toLocaleString('en')} adventures for ${config.seconds} s: POST → model p99 ${ms(p99(target))} (target ≤ ${TARGET_TO_MODEL_P99_MS} ms), ${failures(target)} failed turns, history ${historyOk ? 'clean' : 'NOT clean'}: ${verdict(targetOk)}.`
      : `- No step at --adventures ${config.adventures}: the target is not judged.`,
    `- History over every phase: ${history.acknowledged} actions acknowledged, ${history.foundOnce} in the log exactly once, ${history.lost} lost, ${history.duplicated} duplicated; ` +
      `${history.turns} turns (${Object.entries(history.terminals)
        .map(([k, v]) => `${k} ${v}`)
        .join(
          ', ',
        )}); ${history.problems.length} problems${history.problems.length > 0 ? `: ${history.problems.slice(0, 5).join('; ')}` : ''}.`,
    ...(failedProblems.length > 0
      ? [`- What the failed turns met: ${failedProblems.join('; ')}.`]
      : []),
    '',
    `### d. The ceiling on this machine`,
    '',
    `- Held (p99 ≤ ${TARGET_TO_MODEL_P99_MS} ms, nothing failed): up to ${heldAt.toLocaleString('en')} adventures` +
      (firstFailure
        ? `; at ${config.steps[steps.indexOf(firstFailure)].toLocaleString('en')} the p99 was ${ms(p99(firstFailure))} with ${failures(firstFailure)} failed.`
        : ` (every step held).`),
    `- At the busiest step (${topAdventures.toLocaleString('en')} adventures, ${top.play.turnsPerSecond.toFixed(0)} turns/s) a turn cost ${serverMs.toFixed(1)} ms of CPU across the servers beyond what they spend idle (${idleCores.toFixed(2)} cores with no player; the table's columns include it) ` +
      `(${shares.map((s) => `${s.g} ${s.ms.toFixed(1)}`).join(', ')}; the bench's own client and fake model ${benchMs.toFixed(1)} more). ` +
      `${cores} cores with nothing else on them would saturate at about ${capacity.toFixed(0)} turns/s, ≈ ${((capacity * (config.thinkMs / 1000 + turnSeconds)) / 1000).toFixed(1)}k adventures at this pace; ` +
      `the bench's own client takes a share of the same cores, so the real figure on this machine is lower.`,
    `- Where the CPU goes: the Node processes take ${node.toFixed(1)} ms a turn (${pct(node / serverMs)}), Postgres ${cpuMsPerTurn(top, ['postgres']).toFixed(1)} (${pct(cpuMsPerTurn(top, ['postgres']) / serverMs)}), Redis ${cpuMsPerTurn(top, ['redis']).toFixed(1)} (${pct(cpuMsPerTurn(top, ['redis']) / serverMs)}). ` +
      `Each process's share of one core at that step: ${coreShares(top)}. ` +
      `A Node process and the Redis server each run on one core: the first of them to near 100% is the next bottleneck, then more processes (on more cores) move it; Postgres uses a core per busy backend.`,
    ...[...new Set([top, target].filter((s): s is Measured => s !== undefined))]
      .map((step) => backendLine(step, config.steps[steps.indexOf(step)]))
      .filter((line): line is string => line !== null),
  ].join('\n');
}
