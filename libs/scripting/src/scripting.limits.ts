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
