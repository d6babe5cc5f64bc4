import type { ModelCallUsage } from './model-call';

// The memory bank's and the summarizer's facts. Model output is a fact: a memory or a summary
// version is written once, as an event, so a replay rebuilds them without calling a model. Use
// counts come from `MemoriesUsed`, which only a real turn appends (beside its `Narrated`).

export type MemoryAuthor = 'worker' | 'player';

export interface MemoryWrittenData {
  memoryId: string;
  text: string;
  /** Depths of the block's first and last action; null for a hand-written memory. */
  sourceStart: number | null;
  sourceEnd: number | null;
  /** The block's last action (a worker memory) or the head (a hand-written one). */
  anchorActionId: string;
  /**
   * The story actions it was written from, oldest first (v2); empty for a hand-written memory.
   * null on a v1 event (upcast): those blocks are found again from the anchor and the depths.
   */
  sourceActionIds: string[] | null;
  createdBy: MemoryAuthor;
  /** What the worker's model call cost; absent for a hand-written memory (and before it was recorded). */
  usage?: ModelCallUsage;
}

export interface SummaryWrittenData {
  summaryId: string;
  text: string;
  /** The tip recorded before the summarizer was called, or the head for a player's edit. */
  anchorActionId: string;
  /** Depths of the actions this version newly covers; null for a player's edit. */
  sourceStart: number | null;
  sourceEnd: number | null;
  handEdited: boolean;
  /** A player's edit at the current version's anchor rewrites that version in place. */
  replacesSummaryId: string | null;
  /**
   * The chapters this version folded in, oldest first (v2): a version written from chapters is
   * the short summary of those that no longer fit beside the newer ones. Empty for one written
   * from memories or raw story, or by the player; a v1 event is upcast to empty.
   */
  chapterIds: string[];
  /** What the model calls that wrote it cost; absent for a player's edit (and before it was recorded). */
  usage?: ModelCallUsage;
}

/**
 * One chapter of the story, summarised from that span's own story text (not from memories,
 * which already dropped most of it), so a long story keeps a summary that grows with it
 * instead of one text squeezed into a fixed length.
 */
export interface ChapterWrittenData {
  chapterId: string;
  text: string;
  /** The span's last action. */
  anchorActionId: string;
  /** Depths of the span's first and last action. */
  sourceStart: number;
  sourceEnd: number;
  /** The story actions it was written from, oldest first. */
  sourceActionIds: string[];
  /** What the model call cost; absent for the offline (extractive) summariser. */
  usage?: ModelCallUsage;
}

export type MemoryWritten = { type: 'MemoryWritten'; data: MemoryWrittenData };
export type MemoryEdited = { type: 'MemoryEdited'; data: { memoryId: string; text: string } };
export type MemoryPinned = { type: 'MemoryPinned'; data: { memoryId: string } };
export type MemoryUnpinned = { type: 'MemoryUnpinned'; data: { memoryId: string } };
/**
 * Forgotten by the player: kept, but never retrieved again. `capacity` is the old LRU
 * eviction's, which no build writes any more and the projection no longer honours.
 */
export type MemoryForgotten = {
  type: 'MemoryForgotten';
  data: { memoryIds: string[]; reason: 'capacity' | 'player' };
};
export type MemoryDeleted = { type: 'MemoryDeleted'; data: { memoryId: string } };
export type MemoriesUsed = { type: 'MemoriesUsed'; data: { turnId: string; memoryIds: string[] } };
export type SummaryWritten = { type: 'SummaryWritten'; data: SummaryWrittenData };
export type ChapterWritten = { type: 'ChapterWritten'; data: ChapterWrittenData };

export type MemoryEvent =
  | MemoryWritten
  | MemoryEdited
  | MemoryPinned
  | MemoryUnpinned
  | MemoryForgotten
  | MemoryDeleted
  | MemoriesUsed
  | SummaryWritten
  | ChapterWritten;

export type MemoryEventType = MemoryEvent['type'];
