// docs/scripting.md §4.2: hostile scripts against the real sandbox (built child; `npm run build`
// first). Every case must end as a recorded outcome within its limit, with the host untouched.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HookRunRequest } from '@chronicle/scripting';
import { ScriptSandboxPool } from './sandbox.pool';
import { aHookRequest } from './testing/hook-request';

let pool: ScriptSandboxPool;
beforeAll(async () => {
  pool = new ScriptSandboxPool({ processes: 2 });
  // Both children up and warm: the cases time the script, not a cold start.
  await Promise.all([run({}), run({})]);
});
afterAll(() => pool.close());

const run = (overrides: Partial<HookRunRequest>) => pool.run(aHookRequest(overrides));

/** Counts the host's timer ticks while `work` runs: a blocked event loop would count none. */
async function heartbeat<T>(work: () => Promise<T>): Promise<{ value: T; ticks: number }> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 20);
  try {
    return { value: await work(), ticks };
  } finally {
    clearInterval(timer);
  }
}

describe('S1: endless work times out within 2× the limit, the host keeps beating', () => {
  it.each([
    ['for (;;) {}', 'an endless loop'],
    ['/(a+)+$/.test("a".repeat(40) + "!")', 'a catastrophic regex'],
    ['(function spin() { Promise.resolve().then(spin); })(); ({ text })', 'a microtask loop'],
  ])('%s (%s)', async (source) => {
    const started = Date.now();
    const { value, ticks } = await heartbeat(() => run({ source, timeoutMs: 300 }));
    expect(value.outcome).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(600);
    expect(ticks).toBeGreaterThan(5);
  });
});

describe('S2, S8: memory bombs end as memory (or invalid), and the pool serves on', () => {
  it.each([
    ['const a = []; for (;;) a.push("x".repeat(1024) + Math.random());', 'an array of strings'],
    ['let s = "x"; for (;;) s = s + s;', 'a doubling string'],
    ['const a = []; for (;;) a.push(new Uint8Array(1 << 20));', 'typed arrays'],
    [
      'const big = "[" + "[".repeat(1) + Array(2e6).fill("1").join(",") + "]]"; const all = []; for (;;) all.push(JSON.parse(big));',
      'JSON.parse',
    ],
    ['({ text: "x".repeat(100 * 1024 * 1024) })', 'a 100 MB result (S8)'],
  ])('%s (%s)', async (source) => {
    const hostBefore = process.memoryUsage().rss;
    const value = await run({ source, memoryLimitMb: 32, timeoutMs: 5000 });
    expect(['memory', 'invalid', 'crashed']).toContain(value.outcome);
    // The host's memory does not grow with the bomb.
    expect(process.memoryUsage().rss - hostBefore).toBeLessThan(50 * 1024 * 1024);
    expect((await run({ source: '({ text: "alive" })' })).outcome).toBe('ok');
  });
});

describe('S3: nothing of the host or the platform is there', () => {
  it('WebAssembly, SharedArrayBuffer, Atomics, process, require, fetch, setTimeout are undefined; import is rejected', async () => {
    const value = await run({
      source: `log([typeof WebAssembly, typeof SharedArrayBuffer, typeof Atomics, typeof process,
        typeof require, typeof fetch, typeof setTimeout, typeof setInterval, typeof queueMicrotask,
        typeof ivm, typeof __in, typeof module, typeof global].join(","));
        let imported = "none";
        import("fs").then(() => { imported = "yes"; }, () => { imported = "rejected"; });
        ({ text })`,
    });
    expect(value.result?.logs[0]).toBe(Array(13).fill('undefined').join(','));
    const statically = await run({ source: 'import fs from "fs";' });
    expect(statically.outcome).toBe('failed');
  });

  it('the global property list equals an allow-list', async () => {
    const value = await run({
      source: '({ text: Object.getOwnPropertyNames(globalThis).sort().join(",") })',
    });
    const ecma = `Object Function Array Number parseFloat parseInt Infinity NaN undefined Boolean String
      Symbol Date Promise RegExp Error AggregateError EvalError RangeError ReferenceError SyntaxError
      TypeError URIError globalThis JSON Math Intl ArrayBuffer Uint8Array Int8Array Uint16Array
      Int16Array Uint32Array Int32Array Float32Array Float64Array Uint8ClampedArray BigUint64Array
      BigInt64Array DataView Map BigInt Set WeakMap WeakSet Proxy Reflect FinalizationRegistry
      WeakRef decodeURI decodeURIComponent encodeURI encodeURIComponent escape unescape eval isFinite
      isNaN`;
    const aid = `console text stop state storyCards history info memory log sandboxConsole addStoryCard
      updateStoryCard removeStoryCard addWorldEntry updateWorldEntry removeWorldEntry worldInfo
      worldEntries`;
    const allowed = `${ecma} ${aid}`.split(/\s+/).filter(Boolean).sort();
    expect(String(value.result?.text).split(',')).toEqual(allowed);
  });
});

describe('S4: no host object is reachable', () => {
  const canary = join(tmpdir(), `chronicle-canary-${process.pid}`);
  afterEach(() => rmSync(canary, { force: true }));

  it.each([
    `this.constructor.constructor("return process")().mainModule.require("fs").writeFileSync(${JSON.stringify(canary)}, "x")`,
    `Error.prepareStackTrace = (e, frames) => frames.map((f) => f.getThis && f.getThis());
     const frames = new Error().stack;
     for (const t of frames || []) if (t && t.process) t.process.mainModule.require("fs").writeFileSync(${JSON.stringify(canary)}, "x");
     ({ text })`,
    `const f = storyCards.constructor.constructor; f("return this")().process.binding("fs")`,
    `log.constructor("return process")().exit(1)`,
  ])('%s', async (source) => {
    const value = await run({ source });
    expect(['failed', 'ok']).toContain(value.outcome);
    expect(existsSync(canary)).toBe(false);
    // The child survived: nothing reached process.exit.
    expect((await run({ source: '({ text: "alive" })' })).result?.text).toBe('alive');
  });
});

describe('S5: a script that poisons the builtins cannot change what the harness reports', () => {
  it('JSON.stringify, Array.prototype.push, Object.prototype.toJSON overridden', async () => {
    const value = await run({
      source: `JSON.stringify = () => '{"text":"forged"}';
        Array.prototype.push = function () { return 0; };
        Object.prototype.toJSON = function () { return "forged"; };
        String.prototype.toJSON = function () { return "forged"; };
        state.n = 1;
        log("kept");
        ({ text: "real" })`,
    });
    expect(value.outcome).toBe('ok');
    expect(value.result).toMatchObject({ text: 'real', logs: ['kept'] });
    // toJSON is the script's own choice for its own state: what it returns is what is saved.
    expect(value.result?.state).toBe('"forged"');
  });

  it('getters and Proxies on state and cards run inside the time limit', async () => {
    const looping = await run({
      timeoutMs: 300,
      source: `Object.defineProperty(state, "x", { enumerable: true, get() { for (;;) {} } }); ({ text })`,
    });
    expect(looping.outcome).toBe('timeout');
    const throwing = await run({
      source: `storyCards.push(new Proxy({}, { ownKeys() { throw new Error("no"); } })); ({ text })`,
    });
    // The cards could not be serialised: the host's card diff refuses the run as invalid.
    expect(throwing.outcome).toBe('ok');
    expect(throwing.result?.storyCards ?? null).toBeNull();
  });
});

describe('S6: __proto__ and constructor keys in state or cards', () => {
  it('leave host objects unpolluted', async () => {
    const value = await run({
      source: `state = JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}');
        ({ text })`,
    });
    expect(value.outcome).toBe('ok');
    const parsed = JSON.parse(value.result!.state!) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual(['__proto__', 'constructor']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('S7: scripts, hooks and owners do not share globals', () => {
  it('a prototype edit is invisible to B, to A next hook and to another owner', async () => {
    const edit = await run({
      scriptId: 'A',
      version: 1,
      source: 'Array.prototype.evil = 1; globalThis.leak = 1; ({ text })',
    });
    expect(edit.outcome).toBe('ok');
    const probe = 'log(typeof [].evil, typeof leak); ({ text })';
    for (const request of [
      { scriptId: 'A', version: 1, hook: 'context' as const },
      { scriptId: 'B', version: 1 },
      { scriptId: 'A', version: 1, owner: 'owner-2' },
    ]) {
      const value = await run({ ...request, source: probe });
      expect(value.result?.logs).toEqual(['undefined undefined']);
    }
  });
});

describe('S9: the child holds no secrets', () => {
  it('its environment is the allow-list', () => {
    for (const pid of pool.pids()) {
      const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
      const names = env.map((line) => line.split('=')[0]).sort();
      // Node's own IPC channel variables, then ours: no database, Redis or model settings.
      expect(names).toEqual([
        'NODE_CHANNEL_FD',
        'NODE_CHANNEL_SERIALIZATION_MODE',
        'SANDBOX_MAX_ISOLATES',
        'SANDBOX_MAX_RSS_MB',
        'SANDBOX_MAX_RUNS',
        'TZ',
      ]);
    }
  });
});

describe('S10: a child killed or stopped mid-hook', () => {
  it('SIGKILL: the run is crashed, the pool respawns and serves', async () => {
    const spawned = pool.spawned;
    const running = run({ source: 'for (;;) {}', timeoutMs: 2000 });
    await new Promise((r) => setTimeout(r, 100));
    for (const pid of pool.busyPids()) process.kill(pid, 'SIGKILL');
    expect((await running).outcome).toBe('crashed');
    expect((await run({ source: '({ text: "alive" })' })).outcome).toBe('ok');
    expect(pool.spawned).toBeGreaterThan(spawned);
  });

  it('SIGSTOP: the parent kills it after the limit + 500 ms', async () => {
    const started = Date.now();
    const running = run({
      source: '({ text })',
      library: 'for (let i = 0; i < 3e8; i++) {}',
      timeoutMs: 400,
    });
    await new Promise((r) => setTimeout(r, 50));
    for (const pid of pool.busyPids()) process.kill(pid, 'SIGSTOP');
    const value = await running;
    expect(value.outcome).toBe('timeout');
    expect(Date.now() - started).toBeGreaterThanOrEqual(850);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('S12: error texts carry no host paths', () => {
  it('a thrown error, a syntax error and a type error', async () => {
    for (const source of [
      'throw new Error(new Error().stack)',
      'null.x',
      'let = ;',
      `throw ${JSON.stringify(__filename)}`,
    ]) {
      const value = await run({ source });
      expect(value.outcome).toBe('failed');
      expect(value.error).not.toMatch(/\/(work|home|usr|tmp|root)\//);
      expect(value.error).not.toContain('node_modules');
    }
  });
});

describe('compile (save-time syntax check)', () => {
  it('answers each broken source with its position', async () => {
    const problems = await pool.compile({ library: 'ok();', input: 'let a = ;', output: 'fine()' });
    expect(problems).toEqual([
      { field: 'input', error: "SyntaxError: Unexpected token ';' [input.js:1:9]" },
    ]);
  });
});

describe('recycling', () => {
  it('a child retires after its runs and a fresh one takes over without a failed run', async () => {
    const small = new ScriptSandboxPool({ processes: 1, maxRunsPerChild: 3 });
    try {
      const outcomes: string[] = [];
      for (let i = 0; i < 7; i++) {
        outcomes.push(
          (await small.run(aHookRequest({ source: `({ text: "run ${i}" })` }))).outcome,
        );
      }
      expect(outcomes).toEqual(Array(7).fill('ok'));
      expect(small.spawned).toBeGreaterThanOrEqual(3);
    } finally {
      await small.close();
    }
  });
});

/** A process's resident set, in MB, from /proc. */
function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1] ?? 0) / 1024;
}

describe('recycling by RSS', () => {
  it('a child whose RSS passed the cap retires after that run; small runs keep it', async () => {
    // The cap sits a little above what a warm child holds on this machine, so small runs stay
    // under it and a run that grows the isolate's heap by ~160 MB goes over.
    const probe = new ScriptSandboxPool({ processes: 1 });
    let baseline: number;
    try {
      await probe.run(aHookRequest({ source: '({ text })' }));
      baseline = rssMb(probe.pids()[0]);
    } finally {
      await probe.close();
    }
    const pool = new ScriptSandboxPool({
      processes: 1,
      maxRunsPerChild: 1_000_000,
      maxRssMb: Math.ceil(baseline + 80),
    });
    try {
      for (let i = 0; i < 5; i++) {
        expect((await pool.run(aHookRequest({ source: `({ text: "small ${i}" })` }))).outcome).toBe(
          'ok',
        );
      }
      expect(pool.spawned).toBe(1);
      const big = await pool.run(
        aHookRequest({
          source:
            'const kept = []; for (let i = 0; i < 160; i++) kept.push(new Array(131072).fill(i)); ({ text: String(kept.length) })',
          memoryLimitMb: 512,
          timeoutMs: 10_000,
        }),
      );
      expect(big.outcome).toBe('ok');
      expect(big.result?.text).toBe('160');
      // The run that crossed the cap was answered; the child retired and a fresh one serves.
      const after = await pool.run(aHookRequest({ source: '({ text: "fresh" })' }));
      expect(after.outcome).toBe('ok');
      expect(pool.spawned).toBe(2);
      expect(rssMb(pool.pids()[0])).toBeLessThan(baseline + 80);
    } finally {
      await pool.close();
    }
  });
});
