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
import { tokenizer, type TokenEncoding } from '@chronicle/context';
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

/** The story the worker reads: the path at the head, erased actions and a retried take left out. */
export function storyEntries(state: AdventureState): StoryEntry[] {
  return storyPath(state).map((entry) => ({ ...entry, depth: requireNode(state, entry.id).depth }));
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

/** The summary update due now, or null when fewer than 15 actions lie past its cursor. */
export function summaryPlan(state: AdventureState): SummaryPlan | null {
  const cursor = summaryCursorDepth(state);
  const open = uncovered(storyEntries(state), cursor);
  if (open.length < SUMMARY_INTERVAL) return null;
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
