// Scenario scripts attached to an adventure (docs/scripting.md): their sources as the owner
// saved them, and what their runs did. A run's outcome is a fact: a replay never runs a script
// (scripts use Math.random and Date), it folds these events.

/** A script as saved: AI Dungeon's Library/Input/Context/Output tabs. */
export interface ScriptRecord {
  id: string;
  name: string;
  library: string;
  input: string;
  context: string;
  output: string;
  enabled: boolean;
  /** 1 when added, + 1 per edit: the sandbox caches compiled code per version. */
  version: number;
}

export type ScriptChanges = Partial<
  Pick<ScriptRecord, 'name' | 'library' | 'input' | 'context' | 'output' | 'enabled'>
>;

export type ScriptAdded = { type: 'ScriptAdded'; data: { script: ScriptRecord } };
export type ScriptEdited = {
  type: 'ScriptEdited';
  data: { scriptId: string; changes: ScriptChanges };
};
/** Removed from the run order; its sources and runs stay in the log. */
export type ScriptRemoved = { type: 'ScriptRemoved'; data: { scriptId: string } };
export type ScriptsReordered = { type: 'ScriptsReordered'; data: { ids: string[] } };

/**
 * A hook run left a script's private `state` changed. It belongs to the story node the turn
 * wrote (`actionId`: the player action for onInput, the narration for onModelContext and
 * onOutput), so script state follows the head: undo, retry and a branch see the parent's.
 */
export type ScriptStateChanged = {
  type: 'ScriptStateChanged';
  data: { scriptId: string; actionId: string; state: Record<string, unknown> };
};

export type ScriptHookName = 'input' | 'context' | 'output';
export type ScriptRunOutcome =
  'ok' | 'stopped' | 'failed' | 'timeout' | 'memory' | 'invalid' | 'crashed';

/** One script's run of one hook, whatever came of it (docs/scripting.md §3.3). */
export interface ScriptHookRanData {
  turnId: string;
  scriptId: string;
  hook: ScriptHookName;
  outcome: ScriptRunOutcome;
  textChanged: boolean;
  contextChange?: string;
  ms: number;
  cpuMs: number;
  /** Capped (SCRIPT_LOG_LINES_KEPT lines of SCRIPT_LOG_LINE_CHARS). */
  logs: string[];
  /** "<script> (<hook>): <message>", without host paths. */
  error?: string;
}
export type ScriptHookRan = { type: 'ScriptHookRan'; data: ScriptHookRanData };

/** `state.message` changed: shown to the player (SSE `message`). */
export type ScriptMessagePosted = {
  type: 'ScriptMessagePosted';
  data: { turnId: string; scriptId: string; message: string; visibleTo?: string[] };
};

/** A script stopped the turn: no model call (for onInput, no PlayerActed either). */
export type TurnStoppedByScript = {
  type: 'TurnStoppedByScript';
  data: { turnId: string; hook: ScriptHookName; scriptId: string; message: string };
};

/** Which run of which script wrote a card event. */
export interface ScriptSource {
  scriptId: string;
  hook: ScriptHookName;
  turnId: string;
}

/** A script moved story cards (`unshift(splice(i, 1)[0])` pins a config card on top). */
export type StoryCardsReordered = {
  type: 'StoryCardsReordered';
  data: { order: string[]; source: ScriptSource };
};

export type ScriptEvent =
  | ScriptAdded
  | ScriptEdited
  | ScriptRemoved
  | ScriptsReordered
  | ScriptStateChanged
  | ScriptHookRan
  | ScriptMessagePosted
  | TurnStoppedByScript
  | StoryCardsReordered;
export type ScriptEventType = ScriptEvent['type'];

/** Hook runs the projection keeps for the logs route, newest last. */
export const SCRIPT_RUNS_KEPT = 50;
export const SCRIPT_LOG_LINES_KEPT = 100;
export const SCRIPT_LOG_LINE_CHARS = 1_000;
