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
import { IndexStoryPassagesUseCase, MemoryRetrievalService } from '@chronicle/memory-store';
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
import type { BenchOptions } from './run';
import { ms, summarize } from './stats';

const BUDGETS = [4_096, 8_192, 16_384] as const;
const DEFAULT_LIMIT = 30;
const DEFAULT_CONCURRENCY = 2;

/** The issue's targets: share at 4k and 8k, × history only, older evidence brought back at 8k. */
const TARGETS = { at4k: 0.7, at8k: 0.8, overHistory: 1.5, olderAt8k: 0.6 };

type Mode = 'memory' | 'history';

interface BudgetOutcome {
  /** Some evidence turn is in the prompt, by mode. */
  found: Record<Mode, boolean>;
  /** Evidence turns not in the history-only prompt: older than its window. */
  older: number;
  /** Of those, the ones the memory settings' prompt holds. */
  broughtBack: number;
  /** The dry run's wall time with memory on. */
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
          outcomes.push(await measure(api, adventures, question, indexer, retrieval, wants));
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

/** One question: its history played, then its dry runs at every budget in both modes. */
async function measure(
  api: Api,
  adventures: AdventureCommandHandler,
  question: Question,
  indexer: IndexStoryPassagesUseCase,
  retrieval: MemoryRetrievalService | null,
  wants: { diagnose: boolean; shares: readonly number[] },
): Promise<QuestionOutcome> {
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
  for (const budget of BUDGETS) {
    const prompts = {} as Record<Mode, ReturnType<typeof normalizePrompt>>;
    let previewMs = 0;
    let recallBudget = 0;
    for (const mode of ['history', 'memory'] as const) {
      const on = mode === 'memory';
      await expectStatus(api, 200, 'PATCH', `/v1/adventures/${adventureId}`, {
        settings: { contextTokenBudget: budget, memoryBankEnabled: on, autoSummarize: on },
      });
      const startedAt = performance.now();
      const preview = await expectStatus<{
        system: string;
        story: string;
        report: { passages?: { budget: number } };
      }>(api, 200, 'POST', `/v1/adventures/${adventureId}/context/preview`, {
        type: 'story',
        text: question.question,
      });
      if (on) previewMs = performance.now() - startedAt;
      if (on) recallBudget = preview.report.passages?.budget ?? 0;
      prompts[mode] = normalizePrompt(preview.system, preview.story);
    }
    // The newest turn is in every history window: if the search cannot find it, it is the
    // search that is broken, and no figure below would mean anything.
    if (!containsTurn(prompts.history, newest)) {
      throw new Error(
        `${question.name} at ${budget}: the newest turn is not found in the history-only prompt; the evidence search is broken (looked for "${newest[0]}" in …${prompts.history.text.slice(-600)})`,
      );
    }
    const inHistory = evidence.map((runs) => containsTurn(prompts.history, runs));
    const inMemory = evidence.map((runs) => containsTurn(prompts.memory, runs));
    const older = inHistory.flatMap((present, i) => (present ? [] : [i]));
    byBudget.set(budget, {
      found: { history: inHistory.some(Boolean), memory: inMemory.some(Boolean) },
      older: older.length,
      broughtBack: older.filter((i) => inMemory[i]).length,
      previewMs,
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
        inPrompt: inMemory[i],
      }));
      diagnoses.push(diagnose(budget, recallBudget, candidates, turns));
    }
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
      `has a run of 12 of its words (or all of a shorter turn) verbatim in the prompt of the dry run that asks it.`,
    '',
    '| budget | memory on | history only | memory on ÷ history only | evidence older than the window | older evidence brought back | dry run p50 / p99 (memory on) |',
    '|---|---|---|---|---|---|---|',
  ];
  const verdicts: string[] = [];
  const pass = (ok: boolean) => (ok ? 'met' : 'NOT met');
  for (const budget of BUDGETS) {
    const memory = share(outcomes, budget, 'memory');
    const history = share(outcomes, budget, 'history');
    const older = outcomes.reduce((sum, o) => sum + o.byBudget.get(budget)!.older, 0);
    const back = outcomes.reduce((sum, o) => sum + o.byBudget.get(budget)!.broughtBack, 0);
    const timing = summarize(outcomes.map((o) => o.byBudget.get(budget)!.previewMs));
    const ratio = history === 0 ? (memory === 0 ? '–' : '∞') : `${(memory / history).toFixed(2)}×`;
    lines.push(
      `| ${budget.toLocaleString('en')} | ${percent(memory, n)} | ${percent(history, n)} | ${ratio} | ${percent(older, evidenceTurns)} | ${percent(back, older)} | ${ms(timing.p50)} / ${ms(timing.p99)} |`,
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
        `- 8,192: older evidence brought back ${percent(back, older)} (target ≥ ${TARGETS.olderAt8k * 100}%): ${pass(older > 0 && back >= TARGETS.olderAt8k * older)}.`,
      );
    }
  }
  lines.push(
    '',
    '| question type | questions | ' +
      BUDGETS.map((b) => `${b / 1024}k memory on / history only`).join(' | ') +
      ' |',
  );
  lines.push('|---|---|' + BUDGETS.map(() => '---|').join(''));
  const types = [...new Set(outcomes.map((o) => o.question.type))].sort();
  for (const type of types) {
    const ofType = outcomes.filter((o) => o.question.type === type);
    const cells = BUDGETS.map(
      (budget) =>
        `${percent(share(ofType, budget, 'memory'), ofType.length)} / ${percent(share(ofType, budget, 'history'), ofType.length)}`,
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
