// One hook across every enabled script of an adventure, in position order (docs/scripting.md §3.4): text
// flows from one script to the next, `stop` ends the chain, each script keeps a private `state`
// while the story cards are one shared array, a later script wins per `state.memory` field, and
// a failed script contributes nothing. A per-turn budget caps the time all of it may take.
import { diffCards } from './card-diff';
import { judgeHookResult } from './hook-result';
import {
  changedMessages,
  checkState,
  mergeScriptMemory,
  messageChanged,
  messageError,
  scriptMemoryOf,
} from './script-state';
import { SCRIPT_LIMITS } from './scripting.limits';
import type {
  CardOp,
  HistoryEntry,
  HookInfo,
  HookName,
  HookOutcome,
  HookRunRequest,
  HookRunResponse,
  SandboxCard,
  ScriptDefinition,
  ScriptMemory,
  ScriptMessage,
} from './scripting.types';

/** The sandbox, as the chain needs it. */
export interface HookRunner {
  run(request: HookRunRequest): Promise<HookRunResponse>;
}

export interface HookChainInput {
  owner: string;
  hook: HookName;
  scripts: readonly ScriptDefinition[];
  text: string;
  /** Each script's state at the head, by script id (absent: `{}`). */
  states: Readonly<Record<string, Record<string, unknown>>>;
  cards: readonly SandboxCard[];
  history: readonly HistoryEntry[];
  info: HookInfo;
  memory: { context: string; authorsNote: string };
  /** What is left of the turn's budget. */
  budgetMs: number;
  hookTimeoutMs?: number;
  memoryLimitMb?: number;
  newCardId: () => string;
}

export interface HookRunRecord {
  scriptId: string;
  hook: HookName;
  outcome: HookOutcome;
  textChanged: boolean;
  ms: number;
  cpuMs: number;
  logs: string[];
  error?: string;
}

export interface ScriptCardOp {
  scriptId: string;
  op: CardOp;
}

export interface HookChainResult {
  text: string;
  stopped: boolean;
  /** Why the turn stopped, for the `stopped` event: the script's message or AID's wording. */
  stopMessage?: string;
  runs: HookRunRecord[];
  /** New states of scripts whose state changed, by script id. */
  states: Record<string, Record<string, unknown>>;
  cards: SandboxCard[];
  cardOps: ScriptCardOp[];
  memory: ScriptMemory;
  messages: { scriptId: string; message: ScriptMessage }[];
  spentMs: number;
}

/** "<script> (<hook>): <message>", the owner-facing error (no host paths, docs/scripting.md, S12). */
export function ownerError(script: { name: string }, hook: HookName, message: string): string {
  return `${script.name} (${hook}): ${message}`;
}

// eslint-disable-next-line max-lines-per-function -- the chain's one loop: each script's run, its time budget, and what it hands the next (text, cards, memory, messages), in the scripts' position order
export async function runHookChain(
  runner: HookRunner,
  input: HookChainInput,
): Promise<HookChainResult> {
  const hookTimeoutMs = input.hookTimeoutMs ?? SCRIPT_LIMITS.hookTimeoutMs;
  const result: HookChainResult = {
    text: input.text,
    stopped: false,
    runs: [],
    states: {},
    cards: [...input.cards],
    cardOps: [],
    memory: {},
    messages: [],
    spentMs: 0,
  };
  const ordered = [...input.scripts]
    .filter((script) => script.enabled && script[input.hook].trim() !== '')
    .sort((a, b) => a.position - b.position);

  for (const script of ordered) {
    const previousState = input.states[script.id] ?? {};
    const left = input.budgetMs - result.spentMs;
    const base = { scriptId: script.id, hook: input.hook, textChanged: false, cpuMs: 0 };
    if (left <= 0) {
      result.runs.push({
        ...base,
        outcome: 'timeout',
        ms: 0,
        logs: [],
        error: ownerError(script, input.hook, "the turn's script time budget is spent"),
      });
      continue;
    }
    const response = await runner.run({
      owner: input.owner,
      scriptId: script.id,
      version: script.version,
      hook: input.hook,
      library: script.library,
      source: script[input.hook],
      text: result.text,
      state: previousState,
      storyCards: result.cards,
      history: [...input.history],
      info: input.info,
      memory: input.memory,
      timeoutMs: Math.min(hookTimeoutMs, left),
      memoryLimitMb: input.memoryLimitMb ?? SCRIPT_LIMITS.memoryLimitMb,
    });
    result.spentMs += response.ms;
    const record: HookRunRecord = {
      ...base,
      outcome: response.outcome,
      ms: response.ms,
      cpuMs: response.cpuMs,
      logs: response.result?.logs ?? response.logs ?? [],
    };
    const fail = (outcome: HookOutcome, message: string) => {
      record.outcome = outcome;
      record.error = ownerError(script, input.hook, message);
      result.runs.push(record);
    };
    if (response.outcome !== 'ok' || !response.result) {
      fail(response.outcome === 'ok' ? 'crashed' : response.outcome, response.error ?? 'failed');
      continue;
    }
    const harness = response.result;
    const verdict = judgeHookResult(input.hook, result.text, harness);
    if (verdict.kind === 'invalid' || verdict.kind === 'failed') {
      fail(verdict.kind, verdict.error);
      continue;
    }
    const state = checkState(previousState, harness.state);
    if (state.kind === 'invalid') {
      fail('invalid', state.error);
      continue;
    }
    const badMessage =
      input.info.characters && messageChanged(previousState, state.state)
        ? messageError(
            state.state.message,
            input.info.characters.map((c) => c.name),
          )
        : null;
    if (badMessage) {
      fail('invalid', badMessage);
      continue;
    }
    const cards = diffCards(result.cards, harness.storyCards, input.newCardId);
    if (cards.kind === 'invalid') {
      fail('invalid', cards.error);
      continue;
    }
    // The run counts: apply its effects.
    const notes = [state.note, verdict.note, ...cards.logs].filter((n): n is string => !!n);
    record.logs = [...record.logs, ...notes.map((n) => `[chronicle] ${n}`)];
    if (state.changed) result.states[script.id] = state.state;
    for (const message of changedMessages(previousState, state.state)) {
      result.messages.push({ scriptId: script.id, message });
    }
    result.memory = mergeScriptMemory(result.memory, scriptMemoryOf(state.state));
    result.cards = cards.cards;
    for (const op of cards.ops) result.cardOps.push({ scriptId: script.id, op });
    if (verdict.kind === 'stop') {
      record.outcome = 'stopped';
      result.runs.push(record);
      result.stopped = true;
      const posted = result.messages.filter((m) => m.scriptId === script.id);
      result.stopMessage =
        posted.map((m) => m.message.text).join('\n') || verdict.message || verdict.note || '';
      break;
    }
    record.textChanged = verdict.text !== result.text;
    result.text = verdict.text;
    result.runs.push(record);
  }
  return result;
}
