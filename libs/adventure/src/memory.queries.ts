// Reads over the memory bank's projection. Validity is decided at read time from the path, so
// undo, retry, a take or branch switch withdraws memories and summary versions at once, and a
// redo brings them back, without any event of their own.

import { nodeOf, type AdventureState, type PathEntry } from './adventure.state';
import type { ChapterRecord, MemoryRecord, SummaryVersion } from './memory.state';

function nodeOnPath(state: AdventureState, actionId: string | null): number | null {
  if (actionId === null) return null;
  const node = nodeOf(state, actionId);
  return node && state.path[node.depth]?.id === actionId ? node.depth : null;
}

/** The depth of `actionId` when it is on the path at the head, else null. */
export function depthOnPath(state: AdventureState, actionId: string | null): number | null {
  return nodeOnPath(state, actionId);
}

/** On the path and not stale: it may reach a prompt (unless forgotten). */
export function isMemoryOnPath(state: AdventureState, memory: MemoryRecord): boolean {
  return !memory.withdrawn && nodeOnPath(state, memory.anchorActionId) !== null;
}

/** Every memory valid on the current path (forgotten ones included), in writing order. */
export function memoriesOnPath(state: AdventureState): MemoryRecord[] {
  return state.memory.memories.filter((memory) => isMemoryOnPath(state, memory));
}

/** The retrieval candidates: valid on the path and not forgotten. */
export function activeMemories(state: AdventureState): MemoryRecord[] {
  return state.memory.memories.filter(
    (memory) => !memory.forgotten && isMemoryOnPath(state, memory),
  );
}

/**
 * The story actions a memory was written from, as they stand on the current path, with their
 * depths, oldest first: a source that left the path (undo, a take or branch switch) or was
 * erased is not there to expand to. Empty for a hand-written memory.
 */
export function memorySourcesOnPath(
  state: AdventureState,
  memory: MemoryRecord,
): (PathEntry & { depth: number })[] {
  const sources: (PathEntry & { depth: number })[] = [];
  for (const id of memory.sourceActionIds) {
    const depth = nodeOnPath(state, id);
    if (depth === null) continue;
    const entry = state.path[depth];
    if (!entry.erased) sources.push({ ...entry, depth });
  }
  return sources;
}

export function findMemory(state: AdventureState, memoryId: string): MemoryRecord | undefined {
  return state.memory.memories.find((memory) => memory.id === memoryId);
}

/**
 * How far the memories cover the path, as a depth (-1: nothing). The cursor's own depth while
 * it is on the path; once it has left (undo, retry, switch), the deepest valid worker memory's
 * anchor, so the blocks past it are written again rather than skipped.
 */
export function memoryCursorDepth(state: AdventureState): number {
  const own = nodeOnPath(state, state.memory.memoryCursor);
  if (own !== null) return own;
  let deepest = -1;
  for (const memory of state.memory.memories) {
    if (memory.createdBy !== 'worker' || memory.withdrawn) continue;
    const depth = nodeOnPath(state, memory.anchorActionId);
    if (depth !== null && depth > deepest) deepest = depth;
  }
  return deepest;
}

/** The summary's version on the path: the deepest valid one, the newest on a tie. */
export function currentSummary(state: AdventureState): SummaryVersion | null {
  let best: SummaryVersion | null = null;
  let bestDepth = -1;
  for (const version of state.memory.summaries) {
    if (version.withdrawn) continue;
    const depth = nodeOnPath(state, version.anchorActionId);
    if (depth === null) continue;
    if (
      best === null ||
      depth > bestDepth ||
      (depth === bestDepth && version.writtenAtVersion > best.writtenAtVersion)
    ) {
      best = version;
      bestDepth = depth;
    }
  }
  return best;
}

/** The summary text the prompt carries ('' when there is none on this path). */
export function storySummary(state: AdventureState): string {
  return currentSummary(state)?.text ?? '';
}

/** Like `memoryCursorDepth`, for the summarizer: falls back to the current version's anchor. */
export function summaryCursorDepth(state: AdventureState): number {
  const own = nodeOnPath(state, state.memory.summaryCursor);
  if (own !== null) return own;
  const current = currentSummary(state);
  return current ? (nodeOnPath(state, current.anchorActionId) ?? -1) : -1;
}

/** The chapters valid on the path, in story order (a rewritten span's newest chapter only). */
export function chaptersOnPath(state: AdventureState): ChapterRecord[] {
  const bySpanStart = new Map<number, ChapterRecord>();
  for (const chapter of state.memory.chapters) {
    if (chapter.withdrawn || nodeOnPath(state, chapter.anchorActionId) === null) continue;
    // Chapters on the path never overlap: one past an undo is written from the cursor's rewound
    // depth, and the one it replaced has left the path. A tie is the newer one's.
    const held = bySpanStart.get(chapter.sourceStart);
    if (!held || chapter.writtenAtVersion > held.writtenAtVersion) {
      bySpanStart.set(chapter.sourceStart, chapter);
    }
  }
  return [...bySpanStart.values()].sort((a, b) => a.sourceStart - b.sourceStart);
}

/**
 * The chapters past the current summary version, in story order: a version tells the story up
 * to its anchor (folded from chapters, from memories, or the player's own words), so the
 * chapters that end there or before are already in it.
 */
export function chaptersPastSummary(state: AdventureState): ChapterRecord[] {
  const current = currentSummary(state);
  const told = current ? (nodeOnPath(state, current.anchorActionId) ?? -1) : -1;
  return chaptersOnPath(state).filter((chapter) => chapter.sourceEnd > told);
}
