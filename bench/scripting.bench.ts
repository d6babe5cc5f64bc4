// The script sandbox (docs/scripting.md §4.3, issue 17): Chronicle's overhead per hook with
// empty scripts, an Auto-Cards-sized script with card and state churn, what an endless loop
// costs its turn, and whether one hostile script among 50 concurrent turns slows the others.
// Each figure is a hook run as the turn path makes it: `runHookChain` over the real pool of
// isolated-vm child processes, validation and card diff included. `scriptMs` (the time inside
// the isolate, its CPU) is reported apart from the overhead, as the spec asks.
import {
  SCRIPT_LIMITS,
  runHookChain,
  type HookChainInput,
  type HookName,
  type SandboxCard,
  type ScriptDefinition,
} from '@chronicle/scripting';
import { ScriptSandboxPool } from '@chronicle/script-sandbox';
import { autoCardsScript } from '../libs/script-sandbox/src/testing/auto-cards-fixture';
import { ms, summarize, type Timing } from './stats';

const PROCESSES = 4;
const EMPTY_RUNS = 400;
const AUTO_CARDS_TURNS = 60;
const CONCURRENT_TURNS = 50;

const TARGET_EMPTY_P50 = 2;
const TARGET_EMPTY_P99 = 10;
const TARGET_AUTO_CARDS_P50 = 15;
const TARGET_LOOP_EXTRA = 100;
const TARGET_HOSTILE_RATIO = 2;

let ids = 0;
function chainInput(
  hook: HookName,
  scripts: ScriptDefinition[],
  states: Record<string, Record<string, unknown>>,
  cards: SandboxCard[],
  turn: number,
): HookChainInput {
  const history = [];
  for (let i = 0; i < Math.min(100, turn * 2 + 1); i++) {
    history.push({
      text:
        i % 2 === 0
          ? `Mira and Captain Voss walk toward Saltmarch, where Tobias waits by the lighthouse. (${i})`
          : `\n> You ask Anwen about the drowned chapel.\n`,
      type: (i === 0 ? 'start' : i % 2 === 0 ? 'continue' : 'do') as 'start' | 'continue' | 'do',
    });
  }
  return {
    owner: 'bench-owner',
    hook,
    scripts,
    text: hook === 'input' ? '\n> You climb the stairs.\n' : 'Recent Story:\nThe lamp flickers.',
    states,
    cards,
    history,
    info: { actionCount: turn * 2 + 1, characterNames: ['Ada'] },
    memory: { context: 'You keep the last lighthouse.', authorsNote: '' },
    budgetMs: SCRIPT_LIMITS.turnBudgetMs,
    newCardId: () => `bench-${++ids}`,
  };
}

const emptyScript: ScriptDefinition = {
  id: 'empty',
  name: 'empty',
  version: 1,
  enabled: true,
  position: 1,
  library: '',
  input: 'void 0',
  context: 'void 0',
  output: 'void 0',
};

async function emptyHooks(pool: ScriptSandboxPool): Promise<{ wall: Timing; script: Timing }> {
  const wall: number[] = [];
  const script: number[] = [];
  for (let i = 0; i < EMPTY_RUNS + 20; i++) {
    const started = performance.now();
    const result = await runHookChain(pool, chainInput('input', [emptyScript], {}, [], 5));
    if (i < 20) continue;
    wall.push(performance.now() - started);
    script.push(result.runs[0].cpuMs);
  }
  return { wall: summarize(wall), script: summarize(script) };
}

async function autoCards(
  pool: ScriptSandboxPool,
): Promise<{ wall: Timing; script: Timing; cards: number }> {
  const script = autoCardsScript();
  let states: Record<string, Record<string, unknown>> = {};
  let cards: SandboxCard[] = [];
  const wall: number[] = [];
  const inside: number[] = [];
  for (let turn = 0; turn < AUTO_CARDS_TURNS + 3; turn++) {
    for (const hook of ['input', 'context', 'output'] as const) {
      const started = performance.now();
      const result = await runHookChain(pool, chainInput(hook, [script], states, cards, turn));
      const elapsed = performance.now() - started;
      if (result.runs[0].outcome !== 'ok') throw new Error(`auto-cards: ${result.runs[0].error}`);
      states = { ...states, ...result.states };
      cards = result.cards;
      if (turn < 3) continue; // the first turns compile the Library and warm the isolate
      wall.push(elapsed);
      inside.push(result.runs[0].ms);
    }
  }
  return { wall: summarize(wall), script: summarize(inside), cards: cards.length };
}

async function endlessLoop(pool: ScriptSandboxPool): Promise<number> {
  const hostile = { ...emptyScript, id: 'loop', version: 2, input: 'for (;;) {}' };
  const started = performance.now();
  const result = await runHookChain(pool, chainInput('input', [hostile], {}, [], 1));
  if (result.runs[0].outcome !== 'timeout') throw new Error('the loop did not time out');
  return performance.now() - started;
}

/** 50 turns at once, each Input → Context → Output; optionally one of them hostile. */
async function concurrentTurns(pool: ScriptSandboxPool, hostile: boolean): Promise<Timing> {
  const benign = {
    ...emptyScript,
    id: 'benign',
    input: 'state.n = (state.n || 0) + 1; ({ text })',
  };
  const loop = { ...emptyScript, id: 'hostile', version: 3, input: 'for (;;) {}' };
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: CONCURRENT_TURNS }, async (_, i) => {
      const script = hostile && i === 0 ? loop : benign;
      const started = performance.now();
      for (const hook of ['input', 'context', 'output'] as const) {
        await runHookChain(pool, chainInput(hook, [script], {}, [], 3));
      }
      if (!(hostile && i === 0)) latencies.push(performance.now() - started);
    }),
  );
  return summarize(latencies);
}

export default async function run(): Promise<string> {
  const pool = new ScriptSandboxPool({ processes: PROCESSES });
  try {
    const empty = await emptyHooks(pool);
    const ac = await autoCards(pool);
    const loops: number[] = [];
    for (let i = 0; i < 3; i++) loops.push(await endlessLoop(pool));
    const worstLoop = Math.max(...loops);
    // Warm both shapes, then alternate the runs so drift on the shared machine hits both.
    await concurrentTurns(pool, false);
    const calm: number[] = [];
    const stormy: number[] = [];
    for (let round = 0; round < 3; round++) {
      calm.push((await concurrentTurns(pool, false)).p99);
      stormy.push((await concurrentTurns(pool, true)).p99);
    }
    const median = (values: number[]) =>
      [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
    const calmP99 = median(calm);
    const stormyP99 = median(stormy);
    const ratio = stormyP99 / calmP99;
    const verdict = (ok: boolean) => (ok ? 'met' : '**missed**');
    const loopLimit = SCRIPT_LIMITS.hookTimeoutMs;
    return [
      '## Scripting: the sandbox per hook',
      '',
      `Pool of ${PROCESSES} isolated-vm child processes; each hook is \`runHookChain\` over the pool (IPC, isolate, harness, validation, card diff).`,
      '',
      '| measure | p50 | p99 | target | verdict |',
      '|---|---|---|---|---|',
      `| empty script, per hook (warm), wall | ${ms(empty.wall.p50)} | ${ms(empty.wall.p99)} | p50 ≤ ${TARGET_EMPTY_P50} ms, p99 ≤ ${TARGET_EMPTY_P99} ms | ${verdict(empty.wall.p50 <= TARGET_EMPTY_P50 && empty.wall.p99 <= TARGET_EMPTY_P99)} |`,
      `| empty script, scriptMs (isolate CPU) | ${ms(empty.script.p50)} | ${ms(empty.script.p99)} | reported apart | |`,
      `| Auto-Cards-sized fixture (${(autoCardsScript().library.length / 1024).toFixed(0)} KB Library, ${ac.cards} cards at the end), per hook, wall | ${ms(ac.wall.p50)} | ${ms(ac.wall.p99)} | p50 ≤ ${TARGET_AUTO_CARDS_P50} ms | ${verdict(ac.wall.p50 <= TARGET_AUTO_CARDS_P50)} |`,
      `| Auto-Cards-sized fixture, time in the child (scriptMs) | ${ms(ac.script.p50)} | ${ms(ac.script.p99)} | reported apart | |`,
      `| endless loop, its turn's hook (worst of 3) | ${ms(worstLoop)} | | ≤ ${loopLimit} + ${TARGET_LOOP_EXTRA} ms | ${verdict(worstLoop <= loopLimit + TARGET_LOOP_EXTRA)} |`,
      `| ${CONCURRENT_TURNS} concurrent turns (3 hooks each), others' p99, no hostile script (median of 3 rounds) | | ${ms(calmP99)} | | |`,
      `| the same with one endless-loop script among them (median of 3 rounds) | | ${ms(stormyP99)} | ≤ ${TARGET_HOSTILE_RATIO}× (${ratio.toFixed(2)}×) | ${verdict(ratio <= TARGET_HOSTILE_RATIO)} |`,
      '',
      `Rounds, calm / hostile p99: ${calm.map(ms).join(', ')} / ${stormy.map(ms).join(', ')}. Endless loops: ${loops.map(ms).join(', ')}.`,
    ].join('\n');
  } finally {
    await pool.close();
  }
}
