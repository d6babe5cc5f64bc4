// The script limits, one number each, read by the save-time validation, the sandbox and the
// hook chain. Defaults follow AI Dungeon (2 s per hook) and what the largest community scripts
// need (Localized Languages' ~2 MB Library, Inner Self's hooks); see docs/scripting.md §3.5.

const KiB = 1024;
const MiB = 1024 * KiB;

export const SCRIPT_LIMITS = Object.freeze({
  /** One script's Library source, in UTF-8 bytes, at save time. */
  libraryBytes: 4 * MiB,
  /** One hook's source (input, context or output), in UTF-8 bytes, at save time. */
  hookBytes: 256 * KiB,
  /** A script's name. */
  nameChars: 200,
  /** Scripts attached to one adventure. */
  scriptsPerAdventure: 20,
  /** Wall time one hook run (Library + hook + result) may take. */
  hookTimeoutMs: 2_000,
  /** Wall time all scripts and hooks of one turn may take together. */
  turnBudgetMs: 5_000,
  /** An isolate's heap limit (isolated-vm's memoryLimit, a guideline it may overshoot). */
  memoryLimitMb: 64,
  /** A script's `state`, JSON-serialised, in characters. */
  stateChars: 256 * KiB,
  /** Story cards a script may leave behind. */
  cards: 5_000,
  /** One card field after a script edited it; longer is truncated with a log line. */
  cardFieldChars: 50_000,
  /** The text an Input hook may return. */
  inputTextChars: 20_000,
  /** The text a Context hook may return. */
  contextTextChars: 400_000,
  /** The text an Output hook may return. */
  outputTextChars: 50_000,
  /** Log lines kept per hook run, and the characters of each. */
  logLines: 200,
  logLineChars: 4 * KiB,
  /** `history` entries a hook sees. */
  historyActions: 100,
  /** A `state.message` text. */
  messageChars: 2_000,
});

export type ScriptLimits = typeof SCRIPT_LIMITS;

/** The limits one turn's hook runs get. */
export interface ScriptRunLimits {
  hookTimeoutMs: number;
  turnBudgetMs: number;
  memoryLimitMb: number;
}

/**
 * An adventure's own script limits (its settings) under the operator's (SCRIPT_HOOK_TIMEOUT_MS,
 * SCRIPT_TURN_BUDGET_MS, SCRIPT_MEMORY_LIMIT_MB): the smaller of each, so an adventure may ask
 * for less than the installation allows, never more.
 */
export function scriptLimitsFor(
  adventure: {
    scriptHookTimeoutMs: number;
    scriptTurnBudgetMs: number;
    scriptMemoryLimitMb: number;
  },
  operator: ScriptRunLimits,
): ScriptRunLimits {
  return {
    hookTimeoutMs: Math.min(adventure.scriptHookTimeoutMs, operator.hookTimeoutMs),
    turnBudgetMs: Math.min(adventure.scriptTurnBudgetMs, operator.turnBudgetMs),
    memoryLimitMb: Math.min(adventure.scriptMemoryLimitMb, operator.memoryLimitMb),
  };
}

/**
 * One budget across the turn (spec §3.5: 5,000 ms "per turn across scripts and hooks"): the API
 * ran onInput before the turn was queued and recorded each run's time in its ScriptHookRan, so
 * the worker's Context and Output hooks get what those left.
 */
export function turnBudgetLeft(
  budgetMs: number,
  runs: readonly { turnId: string; ms: number }[],
  turnId: string,
): number {
  const spent = runs.filter((run) => run.turnId === turnId).reduce((sum, run) => sum + run.ms, 0);
  return Math.max(0, budgetMs - spent);
}
