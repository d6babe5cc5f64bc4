// What the benchmarks that run the built apps as processes share: the environment they run
// with, a player's user and key, an adventure to play, and the CPU the processes spent (from
// /proc, Linux).
import { readFileSync } from 'node:fs';
import type { AppProcess } from '@chronicle/testing';

export const ADMIN_KEY = 'bench-admin-key-not-secret-32-characters';

/** The bench plays faster than any player: the per-key limits must not be what is measured. */
export const BENCH_ENV: Record<string, string> = {
  ADMIN_API_KEY: ADMIN_KEY,
  DEV_KEY_ON_START: 'false',
  RATE_LIMIT_TURNS_PER_MINUTE: '100000',
  RATE_LIMIT_WRITES_PER_MINUTE: '100000',
  RATE_LIMIT_ANON_PER_MINUTE: '100000',
  RATE_LIMIT_READS_PER_MINUTE: '100000',
  // A budget so large it never refuses: the check itself still runs on every turn, as in
  // production.
  DAILY_TOKEN_BUDGET: '2000000000',
  // As on api.openai.com: each adventure's turns go to its own prompt cache (the fake keeps one
  // per key and reports the cached tokens it would serve).
  MODEL_PROMPT_CACHE_KEY: 'true',
  // Production defaults rather than the e2e harness's test-friendly values.
  DATABASE_POOL_SIZE: '10',
  SNAPSHOT_EVERY: '50',
  NARRATE_LOCK_MS: '30000',
  OUTBOX_SWEEP_INTERVAL_MS: '5000',
  LOG_LEVEL: 'info',
  // A build outside the repository (npx tsc --outDir /tmp/…) finds node_modules through it.
  ...(process.env.NODE_PATH ? { NODE_PATH: process.env.NODE_PATH } : {}),
  // BENCH_APP_NODE_OPTIONS: NODE_OPTIONS for the apps only (a --require'd profiler, say).
  ...(process.env.BENCH_APP_NODE_OPTIONS
    ? { NODE_OPTIONS: process.env.BENCH_APP_NODE_OPTIONS }
    : {}),
};

/** The narration the fake model answers with in the turn benchmarks. */
export const REPLY =
  'Rain needles across the harbour roofs and the lamps along the quay gutter. Somewhere ' +
  'below, the tide sucks at the pilings and a bell answers it. You find a chalk mark on the ' +
  "wall, a small number scratched beside it, and the keeper's clock ticks on, patient as ever.";

// Each player action carries a marker, so the model request it caused can be told apart from
// the other adventures' (the prompt replays earlier actions too: the last marker is this turn's).
const MARKER = /\[bench (\d+)\.(\d+)\]/g;

/** The prompt's text, from a chat or a completion request body. */
export function promptOf(body: unknown): string {
  const b = (body ?? {}) as { prompt?: unknown; messages?: Array<{ content?: unknown }> };
  if (typeof b.prompt === 'string') return b.prompt;
  return (b.messages ?? []).map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n');
}

/** `<player>.<turn>` of the last marker in a prompt: the turn the request narrates. */
export function lastMarker(prompt: string): string | null {
  let last: string | null = null;
  for (const match of prompt.matchAll(MARKER)) last = `${match[1]}.${match[2]}`;
  return last;
}

export interface BenchPlayer {
  headers: Record<string, string>;
  /** null when the installation has no auth */
  userId: string | null;
}

/**
 * A user and an API key through the admin routes; no key when the installation has no auth. The
 * user is named `player <index>`, or by the name given.
 */
export async function benchKey(apiUrl: string, who: number | string): Promise<BenchPlayer> {
  const post = (path: string, body: unknown) =>
    fetch(`${apiUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const name = typeof who === 'number' ? `player ${who}` : who;
  const user = await post('/v1/admin/users', { name });
  if (user.status === 404) return { headers: {}, userId: null };
  if (user.status !== 201) throw new Error(`create user: ${user.status} ${await user.text()}`);
  const { id } = (await user.json()) as { id: string };
  const key = await post(`/v1/admin/users/${id}/keys`, { name: 'bench' });
  if (key.status !== 201) throw new Error(`create key: ${key.status} ${await key.text()}`);
  const secret = ((await key.json()) as { key: string }).key;
  return { headers: { authorization: `Bearer ${secret}` }, userId: id };
}

/** Creates an adventure with the given body through the API; its id. */
export async function postAdventure(
  apiUrl: string,
  headers: Record<string, string>,
  adventure: Record<string, unknown>,
): Promise<string> {
  const response = await fetch(`${apiUrl}/v1/adventures`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(adventure),
  });
  const body = (await response.json()) as { id?: string };
  if (response.status !== 201 || !body.id) {
    throw new Error(`create adventure: ${response.status} ${JSON.stringify(body)}`);
  }
  return body.id;
}

/** The bench's adventure: an opening, a persona and two story cards, on the fake model. */
export function createAdventure(
  apiUrl: string,
  headers: Record<string, string>,
  index: number,
): Promise<string> {
  return postAdventure(apiUrl, headers, {
    title: `Bench ${index}`,
    opening:
      'You are ${Name}, keeper of the Saltmarch light. The lamp has been dark for three ' +
      'nights, and the harbour master has stopped answering your letters.',
    placeholders: { Name: 'Ada Quill' },
    plotEssentials: 'The harbour master owes Ada money.',
    authorsNote: 'Keep the weather hostile.',
    persona: { name: 'Ada Quill', pronouns: 'she/her', description: 'A keeper with a debt.' },
    storyCards: [
      { name: 'Mira', keys: 'Mira', entry: 'Mira smuggles lamp oil.', type: 'character' },
      { name: 'Chalk', keys: 'chalk', entry: 'Chalk marks count the days.', type: 'item' },
    ],
    settings: { model: 'fake-model', contextTokenBudget: 8192 },
  });
}

/** Keeps reading the apps' output (so the pipes never fill) without keeping it in memory. */
export function drainOutput(processes: AppProcess[]): void {
  for (const proc of processes) {
    proc.child.stdout?.removeAllListeners('data');
    proc.child.stdout?.on('data', () => undefined);
  }
}

/** Busy and total jiffies of the whole machine (every process, ours or not), from /proc/stat. */
export function machineTimes(): { busy: number; total: number } {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/\s+/).slice(1).map(Number);
    const total = cpu.reduce((sum, v) => sum + (Number.isFinite(v) ? v : 0), 0);
    const idle = cpu[3] + cpu[4];
    return { busy: total - idle, total };
  } catch {
    return { busy: NaN, total: NaN };
  }
}

/** CPU seconds (user + system) spent, by process name */
export type CpuSeconds = Record<string, number>;

/**
 * User + system CPU seconds of one process from /proc/<pid>/stat (utime and stime are fields
 * 14 and 15, in clock ticks: 100 a second on Linux); with `children`, also those of its waited-for
 * children (cutime, cstime). NaN when it cannot be read (not Linux, or the process is gone).
 */
export function processCpuSeconds(pid: number, children = false): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    const own = Number(fields[11]) + Number(fields[12]);
    return (children ? own + Number(fields[13]) + Number(fields[14]) : own) / 100;
  } catch {
    return NaN;
  }
}

/** User + system CPU seconds of this process and of each app, keyed by app (or `name(proc)`). */
export function cpuTimes(
  processes: AppProcess[],
  name: (proc: AppProcess) => string = (proc) => proc.app,
): CpuSeconds {
  const times: CpuSeconds = {};
  const self = process.cpuUsage();
  times['bench (client + fake model)'] = (self.user + self.system) / 1e6;
  for (const proc of processes) {
    const seconds = processCpuSeconds(proc.pid);
    if (!Number.isNaN(seconds)) times[name(proc)] = seconds;
  }
  return times;
}

export function cpuSpent(before: CpuSeconds, after: CpuSeconds): CpuSeconds {
  const spent: CpuSeconds = {};
  for (const name of Object.keys(after)) {
    if (before[name] !== undefined) spent[name] = after[name] - before[name];
  }
  return spent;
}
