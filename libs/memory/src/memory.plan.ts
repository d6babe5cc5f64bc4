// What the memory worker has to do for an adventure at its head, decided from the projection
// alone. "Uncovered" means counted after the cursor; a cursor stands on an action, and a cursor
// that has left the path has already been rewound by the queries.

import {
  currentSummary,
  memoriesOnPath,
  memoryCursorDepth,
  requireNode,
  storyPath,
  summaryCursorDepth,
  type AdventureState,
  type PathEntry,
} from '@chronicle/adventure';
import {
  SEPARATOR,
  stableBlockTokens,
  stableStart,
  tokenizer,
  type TokenEncoding,
} from '@chronicle/context';
import {
  MAX_MEMORIES_PER_RUN,
  MEMORY_EXCERPT_TOKENS,
  MEMORY_INTERVAL,
  MEMORY_START,
  RETRIEVAL_WINDOW_ACTIONS,
  RETRIEVAL_WINDOW_TOKENS,
  STORY_SEPARATOR,
  SUMMARY_INTERVAL,
} from './memory.constants';

export interface MemoryBlock {
  /** The block's story actions, oldest first; the last one is the memory's anchor. */
  entries: StoryEntry[];
  sourceStart: number;
  sourceEnd: number;
  anchorActionId: string;
}

/** A story action with its depth (its index on the path). */
export type StoryEntry = PathEntry & { depth: number };

/**
 * The story the worker reads: the path at the head, erased actions and a retried take left out,
 * and so is the action of a turn still in flight with what follows it. A memory pass started by
 * one turn can run after the next turn's action is appended; that action is written into a
 * memory once its narration is in, so the blocks keep their cadence and no memory splits a turn.
 */
export function storyEntries(state: AdventureState): StoryEntry[] {
  const path = storyPath(state);
  // A turn of several actions (a room's round) is left out from its first.
  const first = state.inFlight?.kind === 'action' ? state.inFlight.actionIds[0] : undefined;
  const inFlightAt = first ? path.findIndex((entry) => entry.id === first) : -1;
  const settled = inFlightAt === -1 ? path : path.slice(0, inFlightAt);
  return settled.map((entry) => ({ ...entry, depth: requireNode(state, entry.id).depth }));
}

function uncovered(entries: StoryEntry[], cursorDepth: number): StoryEntry[] {
  let first = entries.length;
  for (let index = entries.length - 1; index >= 0 && entries[index].depth > cursorDepth; index--) {
    first = index;
  }
  return entries.slice(first);
}

/**
 * The blocks that need a memory, oldest first: every 6 actions past the cursor once the story
 * holds 12, at most 5 per run (a long backlog is caught up over several runs).
 */
export function memoryBlocks(state: AdventureState): MemoryBlock[] {
  const entries = storyEntries(state);
  if (entries.length < MEMORY_START) return [];
  const open = uncovered(entries, memoryCursorDepth(state));
  const blocks: MemoryBlock[] = [];
  for (
    let start = 0;
    start + MEMORY_INTERVAL <= open.length && blocks.length < MAX_MEMORIES_PER_RUN;
    start += MEMORY_INTERVAL
  ) {
    const block = open.slice(start, start + MEMORY_INTERVAL);
    const last = block[block.length - 1];
    blocks.push({
      entries: block,
      sourceStart: block[0].depth,
      sourceEnd: last.depth,
      anchorActionId: last.id,
    });
  }
  return blocks;
}

export interface SummaryPlan {
  /** The actions past the summary's cursor, oldest first; the last is the tip it is anchored on. */
  entries: StoryEntry[];
  sourceStart: number;
  sourceEnd: number;
  anchorActionId: string;
  /** The version the update starts from (the player's edit when that is the newest). */
  current: { id: string; text: string } | null;
  /** Memory texts past the cursor, in depth order; empty means "use the raw text". */
  memories: string[];
}

export interface SummaryPlanOptions {
  /**
   * The least the prompt's history may use (its share of the budget once the lore has taken
   * its most), for a `stable` adventure: see `leavesWindowUncovered`. Without it, only the
   * seed's cadence applies.
   */
  historyBudget?: number;
}

/**
 * Whether the next prompt's `stable` history may start past an action the summary does not
 * cover: then what leaves the window would be lost from the prompt, so the summary is brought up
 * to date now, whatever the seed's cadence says.
 *
 * Chosen over a chapter summary per evicted block because the rolling summary already exists,
 * is anchored on the tree and withdrawn with what it covers, and sits after the history, so its
 * updates never re-price the cached history; the eviction rule only has to keep it current.
 * The start is the one `stable` history would take with the least budget it can have, less the
 * newest turn (the next prompt holds one more): a start at least as late as the real one, so
 * an eviction is never missed, at the price of an update a turn or two early.
 */
export function leavesWindowUncovered(
  state: AdventureState,
  entries: readonly StoryEntry[],
  firstUncovered: number,
  historyBudget: number,
): boolean {
  if (state.settings.historyMode !== 'stable' || firstUncovered >= entries.length) return false;
  const separator = tokenizer(state.settings.encoding).countCached(SEPARATOR);
  const costs = entries.map((entry) => entry.tokens + separator);
  const nextTurn = costs.slice(-2).reduce((sum, cost) => sum + cost, 0);
  const budget = Math.max(0, historyBudget - nextTurn);
  const block = stableBlockTokens(state.settings.contextTokenBudget);
  const start = stableStart(costs, 0, block, budget);
  if (start !== null) return start > firstUncovered;
  // No block start fits: the history slides (as the seed's), keeping what fits of the newest.
  let suffix = 0;
  for (let i = costs.length - 1; i >= firstUncovered; i--) suffix += costs[i];
  return suffix > budget;
}

/**
 * The summary update due now, or null: due once 15 actions lie past its cursor (the seed's
 * cadence), or sooner when a `stable` history is about to drop an action it does not cover.
 */
export function summaryPlan(
  state: AdventureState,
  options: SummaryPlanOptions = {},
): SummaryPlan | null {
  const cursor = summaryCursorDepth(state);
  const entries = storyEntries(state);
  const open = uncovered(entries, cursor);
  if (open.length === 0) return null;
  if (
    open.length < SUMMARY_INTERVAL &&
    (options.historyBudget === undefined ||
      !leavesWindowUncovered(state, entries, entries.length - open.length, options.historyBudget))
  ) {
    return null;
  }
  const tip = open[open.length - 1];
  const memories = memoriesOnPath(state)
    .filter(
      (memory) =>
        memory.createdBy === 'worker' && memory.sourceEnd !== null && memory.sourceEnd > cursor,
    )
    .sort((a, b) => (a.sourceEnd ?? 0) - (b.sourceEnd ?? 0))
    .map((memory) => memory.text);
  const current = currentSummary(state);
  return {
    entries: open,
    sourceStart: open[0].depth,
    sourceEnd: tip.depth,
    anchorActionId: tip.id,
    current: current ? { id: current.id, text: current.text } : null,
    memories,
  };
}

/** Texts joined as history joins them, keeping their last `tokens` tokens. */
export function lastTokensOf(
  texts: readonly string[],
  tokens: number,
  encoding?: TokenEncoding,
): string {
  return tokenizer(encoding).lastTokens(texts.join(STORY_SEPARATOR), tokens);
}

/** The retrieval query: the newest 4 story actions (the caller leaves a retried take out), their last 600 tokens. */
export function retrievalQuery(newestTexts: readonly string[], encoding?: TokenEncoding): string {
  return lastTokensOf(
    newestTexts.slice(-RETRIEVAL_WINDOW_ACTIONS),
    RETRIEVAL_WINDOW_TOKENS,
    encoding,
  );
}

/** A block's excerpt for the memory writer: its last 2000 tokens. */
export function memoryExcerpt(blockTexts: readonly string[], encoding?: TokenEncoding): string {
  return lastTokensOf(blockTexts, MEMORY_EXCERPT_TOKENS, encoding);
}

/** Pieces joined as history joins them, cut into chunks of at most `tokens` tokens each. */
export function chunkByTokens(
  pieces: readonly string[],
  tokens: number,
  encoding?: TokenEncoding,
): string[] {
  const chunks: string[] = [];
  let current: string[] = [];
  let size = 0;
  for (const piece of pieces) {
    const cost = tokenizer(encoding).count(piece);
    if (cost > tokens) {
      // A piece longer than a chunk keeps its end, as the excerpts do.
      if (current.length > 0) chunks.push(current.join(STORY_SEPARATOR));
      chunks.push(lastTokensOf([piece], tokens, encoding));
      current = [];
      size = 0;
      continue;
    }
    if (size + cost > tokens && current.length > 0) {
      chunks.push(current.join(STORY_SEPARATOR));
      current = [];
      size = 0;
    }
    current.push(piece);
    size += cost;
  }
  if (current.length > 0) chunks.push(current.join(STORY_SEPARATOR));
  return chunks;
}
