// The memory bank's part of the projection. Plain JSON like the rest of it (see
// adventure.state.ts): arrays in the order things happened, null for absent values.

import type { MemoryAuthor } from './memory.events';

export interface MemoryRecord {
  id: string;
  text: string;
  sourceStart: number | null;
  sourceEnd: number | null;
  anchorActionId: string;
  /**
   * The story actions it was written from, oldest first; empty for a hand-written memory. The
   * source a player can expand it to (`memorySources`), and what the context report cites.
   */
  sourceActionIds: string[];
  createdBy: MemoryAuthor;
  /** Stream version of the MemoryWritten event: the LRU clock's creation time. */
  createdAtVersion: number;
  pinned: boolean;
  /** Forgotten by the player: kept, never retrieved (pin it to bring it back). */
  forgotten: boolean;
  /** An action it was written from was edited or erased since: stale, never used again. */
  withdrawn: boolean;
  useCount: number;
  /** Stream version of the last MemoriesUsed naming it; null when never used. */
  lastUsedVersion: number | null;
}

export interface SummaryVersion {
  id: string;
  text: string;
  anchorActionId: string;
  sourceStart: number | null;
  sourceEnd: number | null;
  handEdited: boolean;
  /** The chapters it folded in (a summary of chapters); empty otherwise. */
  chapterIds: string[];
  /** Stream version of the event that wrote (or last rewrote) it: the tie-break, newest wins. */
  writtenAtVersion: number;
  withdrawn: boolean;
}

/** One chapter summary (see ChapterWritten). */
export interface ChapterRecord {
  id: string;
  text: string;
  anchorActionId: string;
  sourceStart: number;
  sourceEnd: number;
  sourceActionIds: string[];
  writtenAtVersion: number;
  /** An action of its span was edited or erased since: stale, written again. */
  withdrawn: boolean;
}

export interface MemoryBankState {
  /** In the order they were written; a deleted memory is removed. */
  memories: MemoryRecord[];
  /** Every version ever written, never pruned; which one is current depends on the path. */
  summaries: SummaryVersion[];
  /**
   * Anchors, not counts: the action the last worker memory (summary) was hung on. Where the
   * anchor has left the path the queries rewind it, so the work is redone (memory.queries.ts).
   */
  memoryCursor: string | null;
  summaryCursor: string | null;
  /**
   * Every chapter written, in writing order; which ones count depends on the path. No cursor:
   * what is left to tell is what no chapter on the path covers, so a withdrawn chapter's span
   * is told again without the ones after it.
   */
  chapters: ChapterRecord[];
}

export function emptyMemoryBank(): MemoryBankState {
  return {
    memories: [],
    summaries: [],
    memoryCursor: null,
    summaryCursor: null,
    chapters: [],
  };
}
