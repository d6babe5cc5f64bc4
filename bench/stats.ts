// Shared measurement helpers for the benchmarks: one way to time and to
// report percentiles.
export function percentile(sortedMs: number[], p: number): number {
  if (sortedMs.length === 0) return NaN;
  const index = Math.min(sortedMs.length - 1, Math.ceil((p / 100) * sortedMs.length) - 1);
  return sortedMs[Math.max(0, index)];
}

export interface Timing {
  samples: number;
  p50: number;
  p99: number;
  mean: number;
}

export function summarize(durationsMs: number[]): Timing {
  const sorted = [...durationsMs].sort((a, b) => a - b);
  const mean = sorted.reduce((s, v) => s + v, 0) / Math.max(1, sorted.length);
  return { samples: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), mean };
}

/** Times `fn` `runs` times after `warmup` untimed runs; milliseconds per run. */
export async function timeRuns(
  runs: number,
  fn: () => unknown | Promise<unknown>,
  warmup = Math.min(10, runs),
): Promise<Timing> {
  for (let i = 0; i < warmup; i++) await fn();
  const durations: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    await fn();
    durations.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return summarize(durations);
}

export const ms = (value: number): string => `${value.toFixed(value < 10 ? 2 : 1)} ms`;
