// The contract between Chronicle and a scenario script (docs/scripting.md §1): what a hook run
// is given, what it hands back, and how its outcome is recorded.

export type HookName = 'input' | 'context' | 'output';
export const HOOK_NAMES: readonly HookName[] = ['input', 'context', 'output'];

/** The AID tab names a script's sources are saved under. */
export interface ScriptSources {
  library: string;
  input: string;
  context: string;
  output: string;
}

/** One attached script at one version, as the chain runs it. */
export interface ScriptDefinition extends ScriptSources {
  id: string;
  name: string;
  /** Bumped on every edit: the sandbox caches compiled code per (owner, id, version). */
  version: number;
  enabled: boolean;
  position: number;
}

/** A story card as a script sees it (AID's shape; `description` is Chronicle's notes). */
export interface SandboxCard {
  id: string;
  title: string;
  /** Comma-separated, as AID hands them to scripts. */
  keys: string;
  type: string;
  entry: string;
  description: string;
  createdAt?: string;
  updatedAt?: string;
  useForCharacterCreation?: boolean;
}

export type HistoryType =
  'start' | 'continue' | 'do' | 'say' | 'story' | 'see' | 'repeat' | 'unknown';

export interface HistoryEntry {
  text: string;
  type: HistoryType;
}

/**
 * `info`, per hook: maxChars and memoryLength only in Context; contextTokens (the prompt's
 * tokens: as built in Context, as the provider counted them in Output) in Context and Output;
 * emptyOutputReason only in Output, and only when the model's reply had no prose.
 */
export interface HookInfo {
  actionCount: number;
  characterNames: string[];
  /**
   * In a room (docs/multiplayer.md §3.6): the players' characters, AID's `info.characters`
   * shape. Absent (one player): the sandbox makes it from `characterNames`, as before. Given,
   * a changed `state.message` is checked: `visibleTo` may name only these characters.
   */
  characters?: { name: string }[];
  /** In a room, the input hook: the name of the character whose action the hook runs for. */
  actor?: string;
  maxChars?: number;
  memoryLength?: number;
  useCacheEfficient?: boolean;
  storyModel?: { name: string; version: string };
  contextTokens?: number;
  emptyOutputReason?: string;
}

/** What one hook run of one script is given; crosses to the sandbox as JSON. */
export interface HookRunRequest {
  /** The adventure's owner: isolates are never shared between owners. */
  owner: string;
  scriptId: string;
  version: number;
  hook: HookName;
  library: string;
  source: string;
  text: string;
  /** The script's private state (a plain object). */
  state: Record<string, unknown>;
  storyCards: SandboxCard[];
  history: HistoryEntry[];
  info: HookInfo;
  /** `memory.context` = Plot Essentials, read-only. */
  memory: { context: string; authorsNote: string };
  timeoutMs: number;
  memoryLimitMb: number;
}

export type HookOutcome =
  'ok' | 'stopped' | 'failed' | 'timeout' | 'memory' | 'invalid' | 'crashed';

/** What the harness inside the isolate serialised after the hook: untrusted until validated. */
export interface HarnessResult {
  /** The resolved result text (`null` allowed: `{text: null, stop: true}`). */
  text: unknown;
  stop: unknown;
  /** JSON of `state`, or absent when it could not be serialised. */
  state: string | undefined;
  /** JSON of `storyCards`. */
  storyCards: string | undefined;
  logs: string[];
  /** Log lines dropped beyond the cap. */
  logsDropped: number;
}

/** The sandbox's answer for one run. */
export interface HookRunResponse {
  outcome: 'ok' | 'failed' | 'timeout' | 'memory' | 'invalid' | 'crashed';
  result?: HarnessResult;
  /** "<message>" without host paths or stack frames. */
  error?: string;
  /** Logs made before a failure (best effort). */
  logs?: string[];
  ms: number;
  cpuMs: number;
}

export type CardOp =
  | { op: 'added'; card: SandboxCard; index: number }
  | { op: 'updated'; id: string; fields: Partial<Omit<SandboxCard, 'id'>> }
  | { op: 'removed'; id: string }
  | { op: 'reordered'; order: string[] };

/** `state.message` in any of its shapes, normalised. */
export interface ScriptMessage {
  text: string;
  visibleTo?: string[];
}

/** The fields of `state.memory` Chronicle reads (only strings count). */
export interface ScriptMemory {
  context?: string;
  authorsNote?: string;
  frontMemory?: string;
}

export type ContextChange = 'unchanged' | 'append' | 'rewrite' | 'discarded';
