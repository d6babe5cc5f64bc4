import type { Canon, NarrativeState, Rejection } from '@chronicle/narrative';
import type { HistoryMode } from './prompt-cache';
import type { TokenEncoding } from './tokenizer';

export type ActionType = 'start' | 'do' | 'say' | 'story' | 'continue' | 'ai';

/** A story action as the context needs it: prose only, with its cached token count. */
export interface WindowAction {
  id: string;
  type: ActionType;
  /** Prose only; the state block is never stored in it (see the builder's history note). */
  text: string;
  /**
   * `text`'s token count in the adventure's encoding, computed once when the action was stored.
   * Assembly trusts it and never re-encodes the text.
   */
  tokens: number;
  /** The referee's rejections of this AI turn's state block. */
  rejections?: Rejection[];
}

/**
 * Reads the story from its newest end: up to `count` story actions older than the `alreadyRead`
 * newest ones, newest last. Fewer than `count` means the story ran out.
 */
export type ReadOlder = (alreadyRead: number, count: number) => Promise<WindowAction[]>;
export type ReadOlderSync = (alreadyRead: number, count: number) => WindowAction[];

export interface ContextSettings {
  narratorPrompt: string;
  model: string;
  apiMode: 'chat' | 'completion';
  temperature: number;
  maxOutputTokens: number;
  contextTokenBudget: number;
  /** Defaults to cl100k_base. Cached action token counts must be in this encoding. */
  encoding?: TokenEncoding;
  /**
   * How the history window chooses its first action (default `stable`): `stable` moves it only
   * to block starts counted from the story's start (see `stableStart`), `sliding` is the seed's
   * window, whose first action moves on every turn once the story outgrows the budget.
   */
  historyMode?: HistoryMode;
  /**
   * `stable`'s block size as a share of `contextTokenBudget` (default `STABLE_BLOCK_SHARE`). Not
   * an adventure setting: the benchmark sweeps it to show why the default was chosen.
   */
  historyBlockShare?: number;
}

export interface Persona {
  name: string;
  pronouns: string;
  description: string;
}

export interface StoryCard {
  id: string;
  name: string;
  /** Comma-separated trigger keys. */
  keys: string;
  entry: string;
  type: string;
}

export interface UsedMemory {
  id: string;
  text: string;
  similarity: number;
  pinned: boolean;
}

/** The memory bank's retrieval result, reported as-is. */
export interface RetrievedMemories {
  used: UsedMemory[];
  error?: string;
}

/** Everything the context needs from the adventure at its head, except the story window. */
export interface ContextHead {
  settings: ContextSettings;
  persona: Persona | null;
  plotEssentials: string;
  authorsNote: string;
  aiInstructions: string;
  canon: Canon | null;
  storyCards: StoryCard[];
  storySummary: string;
  narrativeState: NarrativeState | null;
  /** The scripts' `state.memory`; only string `context`, `authorsNote`, `frontMemory` count. */
  scriptMemory: Record<string, unknown> | null;
  /**
   * Story actions on the path, the excluded (retried) action not counted. Reported as
   * `history.total`: the whole story, not the window that was read.
   */
  totalActions: number;
  /**
   * The sum of `tokens + separator tokens` over those story actions: where the window's actions
   * lie from the story's start, which `stable` history needs to find its block starts. Without
   * it, `stable` history slides (it cannot place the blocks).
   */
  storyTokens?: number;
  /** null when the memory bank is off. */
  memories: RetrievedMemories | null;
  /** The take being retried: absent from history, card triggers and the rejection lookup. */
  excludeActionId?: string | null;
}

export interface ContextInput extends ContextHead {
  /** The newest story actions, newest last, covering the budget (see `windowCovering`). */
  window: WindowAction[];
}

export interface ContextBudget {
  reserved: number;
  available: number;
}

export interface ReportSection {
  label: string;
  text: string;
  tokens: number;
}

export interface CardRecord {
  id: string;
  name: string;
  keyword: string;
  included: boolean;
}

/** The seed's context report, field for field (hence the snake_case keys). */
export interface ContextReport {
  sections: ReportSection[];
  prompt: { system: string; story: string };
  /**
   * `total` is the sum of the sections' counts plus the separators between them (each costed
   * for the text it follows), not an encode of the joined prompt: the parts' counts are cached,
   * and a test bounds the difference.
   */
  tokens: { total: number; budget: number };
  cards: CardRecord[];
  memories: RetrievedMemories | null;
  history: { included: number; total: number; oldest_truncated: boolean };
  cache: CacheReport;
  settings: {
    model: string;
    api_mode: 'chat' | 'completion';
    temperature: number;
    max_output_tokens: number;
  };
}

/**
 * What the provider's prefix cache can be expected to serve. Chronicle's own figures, beside the
 * seed's report (not a seed field).
 */
export interface CacheReport {
  historyMode: HistoryMode;
  /** Tokens per history block (`stable`); 0 when sliding. */
  blockTokens: number;
  /** Whether the window started at a block start (`stable` and a block fitted). */
  blockAligned: boolean;
  /** History tokens (with separators) over the tokens the history could use. */
  historyFill: number;
  /** The prefix of this prompt the next turn's prompt repeats, if the story only grows. */
  stablePrefixTokens: number;
  /** What OpenAI's rule serves of that prefix, and its share of this prompt's tokens. */
  expectedCachedTokens: number;
  expectedCachedShare: number;
  /**
   * Character offset in the story text of the newest block start inside the history (where an
   * explicit cache breakpoint goes), or null when the history has none.
   */
  breakpoint: number | null;
}

export interface BuiltContext {
  system: string;
  story: string;
  report: ContextReport;
}
