// Recall of a long story's past, measured from outside on a third-party dataset (issue 26).
// LongMemEval's full-history questions (bench/recall/dataset.ts) are each played into a fresh
// adventure of the real API, in process on a scratch database: user turns as `story` actions,
// assistant turns as their narrations, recorded through the command handler with no model call
// (bench/recall/play.ts). The question is then asked as the next action through the dry run
// (`POST …/context/preview {type, text}`) at 4,096, 8,192 and 16,384 tokens, with the memory
// settings on (memory bank + auto summary) and off (history only), and the prompt is searched
// for the turns that hold the answer (bench/recall/evidence.ts).
//
// Reports the share of questions with any of their evidence in the prompt, by budget and by
// question type, and of the evidence turns older than the history window (not in the
// history-only prompt at that budget) the share the memory settings bring back. Nothing writes
// memories here (no model is called): what memory on adds is what the engine recalls from the
// story itself.
//
// Options: --limit N (questions, default 30: all answerable ones of the sample), --concurrency
// N (adventures played at once, default 2), --question NAME (that question's file alone, as
// `47_1568498a`), --diagnose (a table of where recall ranked each question's evidence and why
// a missed one is missing: not ranked, or ranked and cut by the budget; bench/recall/diagnose.ts),
// --recall-share 0.3,0.5,… (the memory-on prompt built again with each share of the history's
// budget for the recalled passages; bench/recall/sweep.ts), --set held-back (the check held back
// from tuning: oracle questions outside the sample, each in a long history of other questions'
// sessions; bench/recall/dataset.ts's loadHeldBack).
import { AccountsRepository } from '@chronicle/accounts';
import { AdventureCommandHandler } from '@chronicle/adventure-store';
import { migrateToLatest } from '@chronicle/event-store';
import {
  EmbeddingRepository,
  IndexStoryPassagesUseCase,
  MEMORY_EMBEDDER,
  MemoryRetrievalService,
  UpdateMemoryUseCase,
} from '@chronicle/memory-store';
import type { Embedder } from '@chronicle/llm';
import { JsonLogger, loadConfig } from '@chronicle/platform';
import {
  createTestDatabase,
  removeQueueKeys,
  testQueuePrefix,
  TEST_REDIS_URL,
} from '@chronicle/testing';
import { startApi } from '../apps/api/src/api.bootstrap';
import { BENCH_ENV } from './apps';
import {
  datasetDirectory,
  FULL_HISTORY_SAMPLE,
  loadHeldBack,
  loadQuestions,
  type Question,
} from './recall/dataset';
import { candidatesFor, diagnose, diagnosisLine, type Diagnosis } from './recall/diagnose';
import { containsTurn, normalizePrompt, turnRuns } from './recall/evidence';
import { parseShares, promptsByShare } from './recall/sweep';
import { playHistory } from './recall/play';
import { extractiveWriter, writeMemoryBank } from './recall/extractive-writer';
import type { BenchOptions } from './run';
import { ms, summarize } from './stats';

const BUDGETS = [4_096, 8_192, 16_384] as const;
const DEFAULT_LIMIT = 30;
const DEFAULT_CONCURRENCY = 2;

/** The issue's targets: share at 4k and 8k, × history only, older evidence brought back at 8k. */
const TARGETS = { at4k: 0.7, at8k: 0.8, overHistory: 1.5, olderAt8k: 0.6 };

/**
 * `history`: the memory settings off. `passages`: the memory bank on with nothing written in it,
 * so recall brings back the story's own passages only. `memory`: the bank and the chaptered
 * summary as the memory worker would have written them, by the extractive writer.
 */
type Mode = 'history' | 'passages' | 'memory';
const MODES: readonly Mode[] = ['history', 'passages', 'memory'];

interface BudgetOutcome {
  /** Some evidence turn is in the prompt, by mode. */
  found: Record<Mode, boolean>;
  /** Evidence turns not in the history-only prompt: older than its window. */
  older: number;
  /** Of those, the ones each mode's prompt holds. */
  broughtBack: Record<Mode, number>;
  /** Tokens the summary (with its chapters) and the memories took with memory on. */
  memoryTokens: { summary: number; memories: number };
  /** The dry run's wall time with the passages (the bank on). */
  previewMs: number;
}

interface QuestionOutcome {
  question: Question;
  actions: number;
  byBudget: Map<number, BudgetOutcome>;
  /** With --recall-share: whether evidence is in the memory-on prompt, by share and budget. */
  byShare: Map<number, Map<number, boolean>>;
  /** With --diagnose: where recall placed the evidence, by budget. */
  diagnoses: Diagnosis[];
}

interface Api {
  request(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
}

export default async function recallBench(options: BenchOptions): Promise<string> {
  const limit = positive(options.limit, DEFAULT_LIMIT, 'limit');
  const concurrency = positive(options.concurrency, DEFAULT_CONCURRENCY, 'concurrency');
  const directory = datasetDirectory();
  const heldBack = options.set === 'held-back';
  if (options.set !== undefined && !heldBack) {
    throw new Error(
      `--set takes held-back (or nothing: the full-history sample); got ${options.set}`,
    );
  }
  const questions = heldBack
    ? loadHeldBack(directory, limit)
    : loadQuestions(directory, limit, options.question);

  const database = await createTestDatabase('bench_recall', { empty: true });
  await migrateToLatest(database.db);
  const queuePrefix = testQueuePrefix('bench-recall');
  const config = {
    ...loadConfig({
      ...BENCH_ENV,
      DATABASE_URL: database.connectionString,
      REDIS_URL: TEST_REDIS_URL,
      QUEUE_PREFIX: queuePrefix,
      LOG_LEVEL: 'error',
      // The machine is shared and loaded while the histories are written; a slow statement is
      // not what this bench measures, and a 503 would end it.
      DATABASE_QUERY_TIMEOUT_MS: '60000',
    }),
    host: '127.0.0.1',
    port: 0,
  };
  const app = await startApi(config, new JsonLogger('api', 'error'));
  const started = Date.now();
  try {
    const accounts = app.get(AccountsRepository);
    const user = await accounts.createUser({ name: 'recall bench' });
    const key = (await accounts.createKey(user.id))!.key;
    const { port } = app.getHttpServer().address() as { port: number };
    const api = client(`http://127.0.0.1:${port}`, key);
    const adventures = app.get(AdventureCommandHandler);
    const indexer = app.get(IndexStoryPassagesUseCase);
    // The memory worker's pass, with the app's embedder (retrieval reads what it embeds).
    const writer = new UpdateMemoryUseCase(
      adventures,
      { memory: extractiveWriter, summary: extractiveWriter },
      app.get<Embedder>(MEMORY_EMBEDDER),
      app.get(EmbeddingRepository),
      { defaultModel: 'extractive' },
    );
    const shares = parseShares(options['recall-share']);
    const retrieval =
      options.diagnose || shares.length > 0 ? app.get(MemoryRetrievalService) : null;
    const wants = { diagnose: options.diagnose !== undefined, shares };

    const outcomes: QuestionOutcome[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(concurrency, questions.length) }, async () => {
        while (next < questions.length) {
          const question = questions[next++];
          outcomes.push(
            await measure(api, { adventures, indexer, writer, retrieval }, question, wants),
          );
        }
      }),
    );
    outcomes.sort((a, b) => a.question.name.localeCompare(b.question.name));
    return report(outcomes, directory, concurrency, (Date.now() - started) / 1000, heldBack);
  } finally {
    await app.close();
    await database.drop();
    await removeQueueKeys(queuePrefix).catch(() => undefined);
  }
}

function positive(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) {
    throw new Error(`--${name} must be a whole number of at least 1; got ${raw}`);
  }
  return value;
}

function client(baseUrl: string, key: string): Api {
  return {
    async request(method, path, body) {
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text === '' ? null : JSON.parse(text) };
    },
  };
}

/** The reply's body, when the status is the one expected. */
async function expectStatus<T>(
  api: Api,
  status: number,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const reply = await api.request(method, path, body);
  if (reply.status !== status) {
    throw new Error(`${method} ${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
  }
  return reply.body as T;
}

interface Services {
  adventures: AdventureCommandHandler;
  indexer: IndexStoryPassagesUseCase;
  writer: UpdateMemoryUseCase;
  retrieval: MemoryRetrievalService | null;
}

interface Preview {
  system: string;
  story: string;
  report: {
    passages?: { budget: number };
    sections: { label: string; tokens: number }[];
  };
}

/** The dry run asking `question` at `budget` with `settings`. */
async function preview(
  api: Api,
  adventureId: string,
  question: Question,
  budget: number,
  settings: { memoryBankEnabled: boolean; autoSummarize: boolean },
): Promise<{ body: Preview; ms: number }> {
  await expectStatus(api, 200, 'PATCH', `/v1/adventures/${adventureId}`, {
    settings: { contextTokenBudget: budget, ...settings },
  });
  const startedAt = performance.now();
  const body = await expectStatus<Preview>(
    api,
    200,
    'POST',
    `/v1/adventures/${adventureId}/context/preview`,
    { type: 'story', text: question.question },
  );
  return { body, ms: performance.now() - startedAt };
}

const sectionTokens = (body: Preview, label: string): number =>
  body.report.sections.find((section) => section.label === label)?.tokens ?? 0;

/**
 * One question: its history played, its dry runs at every budget with the memory settings off
 * and with the passages alone, then the memory bank and the chaptered summary written and the
 * dry runs again with them. Memory is written last (it cannot be unwritten) and from the
 * largest budget down: the summary folds its oldest chapters as the budget shrinks, as an
 * adventure whose budget was lowered would.
 */
async function measure(
  api: Api,
  services: Services,
  question: Question,
  wants: { diagnose: boolean; shares: readonly number[] },
): Promise<QuestionOutcome> {
  const { adventures, indexer, writer, retrieval } = services;
  const created = await expectStatus<{ id: string }>(api, 201, 'POST', '/v1/adventures', {
    title: `LongMemEval ${question.id}`,
    opening:
      'What follows is a long conversation between you and an assistant, session after session.',
  });
  const adventureId = created.id;
  const actions = await playHistory(adventures, adventureId, question.turns);
  // The memory worker indexes the story after every narration; the histories are recorded here
  // without it, so its pass runs once at the end (a turn itself catches up only a bounded
  // number of passages: asking at once would measure a story half indexed).
  await expectStatus(api, 200, 'PATCH', `/v1/adventures/${adventureId}`, {
    settings: { memoryBankEnabled: true },
  });
  await indexer.execute({ adventureId });
  const evidence = question.evidence.map((i) => turnRuns(question.turns[i].content));
  const newest = turnRuns(question.turns.at(-1)?.content ?? '').slice(-1);
  const byBudget = new Map<number, BudgetOutcome>();
  const diagnoses: Diagnosis[] = [];
  const byShare = new Map<number, Map<number, boolean>>(wants.shares.map((s) => [s, new Map()]));
  const inPrompt = new Map<number, Record<Mode, boolean[]>>();
  for (const budget of BUDGETS) {
    const prompts = {} as Record<Mode, ReturnType<typeof normalizePrompt>>;
    const history = await preview(api, adventureId, question, budget, {
      memoryBankEnabled: false,
      autoSummarize: false,
    });
    const passages = await preview(api, adventureId, question, budget, {
      memoryBankEnabled: true,
      autoSummarize: false,
    });
    prompts.history = normalizePrompt(history.body.system, history.body.story);
    prompts.passages = normalizePrompt(passages.body.system, passages.body.story);
    // The newest turn is in every history window: if the search cannot find it, it is the
    // search that is broken, and no figure below would mean anything.
    if (!containsTurn(prompts.history, newest)) {
      throw new Error(
        `${question.name} at ${budget}: the newest turn is not found in the history-only prompt; the evidence search is broken (looked for "${newest[0]}" in …${prompts.history.text.slice(-600)})`,
      );
    }
    inPrompt.set(budget, {
      history: evidence.map((runs) => containsTurn(prompts.history, runs)),
      passages: evidence.map((runs) => containsTurn(prompts.passages, runs)),
      memory: [],
    });
    byBudget.set(budget, {
      found: { history: false, passages: false, memory: false },
      older: 0,
      broughtBack: { history: 0, passages: 0, memory: 0 },
      memoryTokens: { summary: 0, memories: 0 },
      previewMs: passages.ms,
    });
    if (retrieval && wants.shares.length > 0) {
      const prompts = await promptsByShare(
        adventures,
        retrieval,
        adventureId,
        question.question,
        budget,
        wants.shares,
      );
      for (const [share, prompt] of prompts) {
        byShare.get(share)!.set(
          budget,
          evidence.some((runs) => containsTurn(prompt, runs)),
        );
      }
    }
    if (retrieval && wants.diagnose) {
      const candidates = await candidatesFor(adventures, retrieval, adventureId, question.question);
      const turns = question.evidence.map((turn, i) => ({
        turn,
        runs: evidence[i],
        inPrompt: inPrompt.get(budget)!.passages[i],
      }));
      const recallBudget = passages.body.report.passages?.budget ?? 0;
      diagnoses.push(diagnose(budget, recallBudget, candidates, turns));
    }
  }
  for (const budget of [...BUDGETS].reverse()) {
    await expectStatus(api, 200, 'PATCH', `/v1/adventures/${adventureId}`, {
      settings: { contextTokenBudget: budget, memoryBankEnabled: true, autoSummarize: true },
    });
    await writeMemoryBank(writer, adventureId);
    const memory = await preview(api, adventureId, question, budget, {
      memoryBankEnabled: true,
      autoSummarize: true,
    });
    const prompt = normalizePrompt(memory.body.system, memory.body.story);
    const found = inPrompt.get(budget)!;
    found.memory = evidence.map((runs) => containsTurn(prompt, runs));
    const outcome = byBudget.get(budget)!;
    const older = found.history.flatMap((present, i) => (present ? [] : [i]));
    outcome.older = older.length;
    for (const mode of MODES) {
      outcome.found[mode] = found[mode].some(Boolean);
      outcome.broughtBack[mode] = older.filter((i) => found[mode][i]).length;
    }
    outcome.memoryTokens = {
      summary: sectionTokens(memory.body, 'story_summary'),
      memories: sectionTokens(memory.body, 'used_memories'),
    };
  }
  return { question, actions, byBudget, byShare, diagnoses };
}

const percent = (part: number, whole: number): string =>
  whole === 0 ? '–' : `${((100 * part) / whole).toFixed(1)}%`;

function share(outcomes: readonly QuestionOutcome[], budget: number, mode: Mode): number {
  return outcomes.filter((o) => o.byBudget.get(budget)!.found[mode]).length;
}

function report(
  outcomes: readonly QuestionOutcome[],
  directory: string,
  concurrency: number,
  seconds: number,
  heldBack: boolean,
): string {
  const n = outcomes.length;
  const actions = outcomes.map((o) => o.actions);
  const evidenceTurns = outcomes.reduce((sum, o) => sum + o.question.evidence.length, 0);
  const lines = [
    '## Issue 26: recall (LongMemEval)',
    '',
    `${n} answerable questions of LongMemEval's ${heldBack ? `\`oracle\`, held back from tuning (each question's evidence sessions among other questions' sessions; see loadHeldBack)` : `\`${FULL_HISTORY_SAMPLE}\` (full histories; file-name order)`} read from \`${directory}\`; ` +
      `${Math.min(...actions)}–${Math.max(...actions)} story actions each, ${evidenceTurns} evidence turns; ` +
      `${concurrency} adventures at a time, ${seconds.toFixed(0)} s in all. A question counts when any of its evidence turns ` +
      `has a run of 12 of its words (or all of a shorter turn) verbatim in the prompt of the dry run that asks it. ` +
      `"Passages only": the memory bank on with nothing written in it (recall of the story's own passages); ` +
      `"memory on": the memory bank and the chaptered summary too, as the memory worker's pass writes them, ` +
      `answered by an extractive writer (bench/recall/extractive-writer.ts; verbatim sentences, no model).`,
    '',
    '| budget | memory on | passages only | history only | memory on ÷ history only | lost by memory (found with passages only) | evidence older than the window | older evidence brought back: passages only / memory on | summary / memories tokens p50 (max) | dry run p50 / p99 (passages only) |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  const verdicts: string[] = [];
  const pass = (ok: boolean) => (ok ? 'met' : 'NOT met');
  for (const budget of BUDGETS) {
    const memory = share(outcomes, budget, 'memory');
    const passages = share(outcomes, budget, 'passages');
    const history = share(outcomes, budget, 'history');
    const at = (o: QuestionOutcome) => o.byBudget.get(budget)!;
    const lost = outcomes.filter((o) => at(o).found.passages && !at(o).found.memory).length;
    const older = outcomes.reduce((sum, o) => sum + at(o).older, 0);
    const back = (mode: Mode) => outcomes.reduce((sum, o) => sum + at(o).broughtBack[mode], 0);
    const timing = summarize(outcomes.map((o) => at(o).previewMs));
    const tokens = (part: 'summary' | 'memories') => {
      const all = outcomes.map((o) => at(o).memoryTokens[part]);
      return `${summarize(all).p50.toFixed(0)} (${Math.max(...all)})`;
    };
    const ratio = history === 0 ? (memory === 0 ? '–' : '∞') : `${(memory / history).toFixed(2)}×`;
    lines.push(
      `| ${budget.toLocaleString('en')} | ${percent(memory, n)} | ${percent(passages, n)} | ${percent(history, n)} | ${ratio} | ${lost} | ${percent(older, evidenceTurns)} | ${percent(back('passages'), older)} / ${percent(back('memory'), older)} | ${tokens('summary')} / ${tokens('memories')} | ${ms(timing.p50)} / ${ms(timing.p99)} |`,
    );
    verdicts.push(
      `- ${budget.toLocaleString('en')}: memory on ${percent(memory, n)} ≥ passages only ${percent(passages, n)} and ≥ history only ${percent(history, n)}, no question lost (${lost}): ${pass(memory >= passages && memory >= history && lost === 0)}.`,
    );
    const target = budget === 4_096 ? TARGETS.at4k : budget === 8_192 ? TARGETS.at8k : null;
    if (target !== null) {
      verdicts.push(
        `- ${budget.toLocaleString('en')}: ${percent(memory, n)} with memory on (target ≥ ${target * 100}%): ${pass(memory >= target * n)}.`,
      );
    }
    verdicts.push(
      `- ${budget.toLocaleString('en')}: memory on ÷ history only ${ratio} (target ≥ ${TARGETS.overHistory}×): ${pass(memory >= TARGETS.overHistory * history && memory > 0)}.`,
    );
    if (budget === 8_192) {
      verdicts.push(
        `- 8,192: older evidence brought back with memory on ${percent(back('memory'), older)} (target ≥ ${TARGETS.olderAt8k * 100}%): ${pass(older > 0 && back('memory') >= TARGETS.olderAt8k * older)}.`,
      );
    }
  }
  lines.push(
    '',
    '| question type | questions | ' +
      BUDGETS.map((b) => `${b / 1024}k memory on / passages only / history only`).join(' | ') +
      ' |',
  );
  lines.push('|---|---|' + BUDGETS.map(() => '---|').join(''));
  const types = [...new Set(outcomes.map((o) => o.question.type))].sort();
  for (const type of types) {
    const ofType = outcomes.filter((o) => o.question.type === type);
    const cells = BUDGETS.map((budget) =>
      MODES.slice()
        .reverse()
        .map((mode) => percent(share(ofType, budget, mode), ofType.length))
        .join(' / '),
    );
    lines.push(`| ${type} | ${ofType.length} | ${cells.join(' | ')} |`);
  }
  lines.push('', ...verdicts);
  const shares = [...(outcomes[0]?.byShare.keys() ?? [])];
  if (shares.length > 0) {
    lines.push(
      '',
      '| recall share | ' + BUDGETS.map((b) => `${b / 1024}k memory on`).join(' | ') + ' |',
      '|---|' + BUDGETS.map(() => '---|').join(''),
      ...shares.map((share) => {
        const cells = BUDGETS.map((budget) =>
          percent(outcomes.filter((o) => o.byShare.get(share)!.get(budget)).length, n),
        );
        return `| ${share} | ${cells.join(' | ')} |`;
      }),
    );
  }
  if (outcomes.some((o) => o.diagnoses.length > 0)) {
    lines.push(
      '',
      '| question | type | budget | recall budget | evidence | best-placed evidence turn |',
      '|---|---|---|---|---|---|',
      ...outcomes.flatMap((o) =>
        o.diagnoses.map((d) => diagnosisLine(o.question.name, o.question.type, d)),
      ),
    );
  }
  return lines.join('\n');
}
