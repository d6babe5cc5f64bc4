// Folds the memory events into `state.memory`, and withdraws what an edit or an erase made
// stale. Like the main projector, it never changes a nested value: `draft.memory` is replaced
// with a new object whose arrays are new, so the state it came from stays untouched. The rules
// are functions of the bank and a way to find a story node (`NodeLookup`), so the fast fold
// (its bucketed tree) and the plain `evolve` (one record of nodes) share them.

import { nodeOf, type ActionNode, type AdventureState } from './adventure.state';
import type { MemoryEvent } from './memory.events';
import type { ChapterRecord, MemoryBankState, MemoryRecord, SummaryVersion } from './memory.state';

export class MemoryProjectionError extends Error {
  constructor(
    message: string,
    readonly version: number,
  ) {
    super(`event at version ${version}: ${message}`);
    this.name = 'MemoryProjectionError';
  }
}

function indexOfMemory(bank: MemoryBankState, memoryId: string, version: number): number {
  const index = bank.memories.findIndex((memory) => memory.id === memoryId);
  if (index < 0) throw new MemoryProjectionError(`unknown memory ${memoryId}`, version);
  return index;
}

function withMemory(
  bank: MemoryBankState,
  memoryId: string,
  version: number,
  change: (memory: MemoryRecord) => MemoryRecord,
): MemoryBankState {
  const index = indexOfMemory(bank, memoryId, version);
  const memories = bank.memories.slice();
  memories[index] = change(memories[index]);
  return { ...bank, memories };
}

/** How the memory rules find a story node by id (undefined when the tree has none). */
export type NodeLookup = (id: string) => ActionNode | undefined;

export function evolveMemory(
  draft: AdventureState,
  event: MemoryEvent & { version: number },
): void {
  draft.memory = memoryAfter(draft.memory, event, (id) => nodeOf(draft, id));
}

/** The bank after one memory event. */
// eslint-disable-next-line max-lines-per-function -- one switch over the memory events, like the adventure projector's
export function memoryAfter(
  bank: MemoryBankState,
  event: MemoryEvent & { version: number },
  nodeAt: NodeLookup,
): MemoryBankState {
  const { version } = event;
  switch (event.type) {
    case 'MemoryWritten': {
      const d = event.data;
      if (bank.memories.some((memory) => memory.id === d.memoryId)) {
        throw new MemoryProjectionError(`memory ${d.memoryId} already exists`, version);
      }
      const memory: MemoryRecord = {
        id: d.memoryId,
        text: d.text,
        sourceStart: d.sourceStart,
        sourceEnd: d.sourceEnd,
        anchorActionId: d.anchorActionId,
        sourceActionIds: d.sourceActionIds ?? sourcesOnAnchorLine(nodeAt, d),
        createdBy: d.createdBy,
        createdAtVersion: version,
        pinned: false,
        forgotten: false,
        withdrawn: false,
        useCount: 0,
        lastUsedVersion: null,
      };
      return {
        ...bank,
        memories: [...bank.memories, memory],
        // Only the worker's blocks move the cursor: a hand-written memory covers nothing.
        memoryCursor: d.createdBy === 'worker' ? d.anchorActionId : bank.memoryCursor,
      };
    }
    case 'MemoryEdited':
      return withMemory(bank, event.data.memoryId, version, (m) => ({
        ...m,
        text: event.data.text,
      }));
    case 'MemoryPinned':
    case 'MemoryUnpinned': {
      const pinned = event.type === 'MemoryPinned';
      // Pinning a forgotten memory brings it back: a pin overrides capacity.
      return withMemory(bank, event.data.memoryId, version, (m) => ({
        ...m,
        pinned,
        forgotten: pinned ? false : m.forgotten,
      }));
    }
    case 'MemoryForgotten': {
      const ids = new Set(event.data.memoryIds);
      for (const id of ids) indexOfMemory(bank, id, version);
      // The bank no longer evicts: what an old least-recently-used capacity forgot is a
      // candidate again (only the player's forgetting holds), so an old story gets its past back.
      if (event.data.reason === 'capacity') return bank;
      return {
        ...bank,
        memories: bank.memories.map((m) => (ids.has(m.id) ? { ...m, forgotten: true } : m)),
      };
    }
    case 'MemoryDeleted': {
      const index = indexOfMemory(bank, event.data.memoryId, version);
      const memories = bank.memories.slice();
      memories.splice(index, 1);
      return { ...bank, memories };
    }
    case 'MemoriesUsed': {
      // A memory deleted between retrieval and the narration's append is simply not counted.
      const ids = new Set(event.data.memoryIds);
      return {
        ...bank,
        memories: bank.memories.map((m) =>
          ids.has(m.id) ? { ...m, useCount: m.useCount + 1, lastUsedVersion: version } : m,
        ),
      };
    }
    case 'SummaryWritten': {
      const d = event.data;
      const written: SummaryVersion = {
        id: d.summaryId,
        text: d.text,
        anchorActionId: d.anchorActionId,
        sourceStart: d.sourceStart,
        sourceEnd: d.sourceEnd,
        handEdited: d.handEdited,
        chapterIds: d.chapterIds,
        writtenAtVersion: version,
        withdrawn: false,
      };
      let summaries: SummaryVersion[];
      if (d.replacesSummaryId !== null) {
        const index = bank.summaries.findIndex((s) => s.id === d.replacesSummaryId);
        if (index < 0) {
          throw new MemoryProjectionError(`unknown summary ${d.replacesSummaryId}`, version);
        }
        summaries = bank.summaries.slice();
        summaries[index] = { ...written, id: summaries[index].id };
      } else {
        if (bank.summaries.some((s) => s.id === d.summaryId)) {
          throw new MemoryProjectionError(`summary ${d.summaryId} already exists`, version);
        }
        summaries = [...bank.summaries, written];
      }
      return {
        ...bank,
        summaries,
        summaryCursor: d.handEdited ? bank.summaryCursor : d.anchorActionId,
      };
    }
    case 'ChapterWritten': {
      const d = event.data;
      if (bank.chapters.some((chapter) => chapter.id === d.chapterId)) {
        throw new MemoryProjectionError(`chapter ${d.chapterId} already exists`, version);
      }
      const chapter: ChapterRecord = {
        id: d.chapterId,
        text: d.text,
        anchorActionId: d.anchorActionId,
        sourceStart: d.sourceStart,
        sourceEnd: d.sourceEnd,
        sourceActionIds: d.sourceActionIds,
        writtenAtVersion: version,
        withdrawn: false,
      };
      return { ...bank, chapters: [...bank.chapters, chapter] };
    }
  }
}

/**
 * A v1 memory's sources, which it did not record: the actions at its source depths on its
 * anchor's line. Its block skipped erased actions, which this cannot tell, so they may be
 * named too; the expansion reads only the story actions among them.
 */
function sourcesOnAnchorLine(
  nodeAt: NodeLookup,
  data: { sourceStart: number | null; sourceEnd: number | null; anchorActionId: string },
): string[] {
  if (data.sourceStart === null || data.sourceEnd === null) return [];
  const ids: string[] = [];
  let node = nodeAt(data.anchorActionId);
  while (node && node.depth >= data.sourceStart) {
    if (node.depth <= data.sourceEnd) ids.unshift(node.id);
    node = node.parentId === null ? undefined : nodeAt(node.parentId);
  }
  return ids;
}

/** The ancestor of `actionId` at `depth` (itself at its own depth), or null. */
function ancestorAt(nodeAt: NodeLookup, actionId: string, depth: number): string | null {
  let node = nodeAt(actionId);
  while (node && node.depth > depth) {
    node = node.parentId === null ? undefined : nodeAt(node.parentId);
  }
  return node && node.depth === depth ? node.id : null;
}

function covers(
  nodeAt: NodeLookup,
  item: { sourceStart: number | null; sourceEnd: number | null; anchorActionId: string },
  actionId: string,
  depth: number,
): boolean {
  if (item.sourceStart === null || item.sourceEnd === null) return false;
  if (depth < item.sourceStart || depth > item.sourceEnd) return false;
  return ancestorAt(nodeAt, item.anchorActionId, depth) === actionId;
}

/**
 * After `actionId` was edited or erased: the memories and summary versions written from it are
 * stale. They are withdrawn for good (a redo cannot make them fresh again), and both cursors
 * that stand at or below the action rewind to just before the earliest withdrawn source, so the
 * cadence writes them again.
 */
export function withdrawCovering(draft: AdventureState, actionId: string): void {
  draft.memory = withdrawnCovering(draft.memory, actionId, (id) => nodeOf(draft, id));
}

/** The bank with what was written from `actionId` withdrawn (see `withdrawCovering`). */
export function withdrawnCovering(
  bank: MemoryBankState,
  actionId: string,
  nodeAt: NodeLookup,
): MemoryBankState {
  const node = nodeAt(actionId);
  if (!node) return bank;
  let earliestMemory = Number.POSITIVE_INFINITY;
  let earliest = Number.POSITIVE_INFINITY;
  let changed = false;
  const memories = bank.memories.map((memory) => {
    if (memory.withdrawn || !covers(nodeAt, memory, actionId, node.depth)) return memory;
    changed = true;
    earliestMemory = Math.min(earliestMemory, memory.sourceStart ?? earliestMemory);
    earliest = Math.min(earliest, earliestMemory);
    return { ...memory, withdrawn: true };
  });
  const summaries = bank.summaries.map((version) => {
    if (version.withdrawn || !covers(nodeAt, version, actionId, node.depth)) return version;
    changed = true;
    earliest = Math.min(earliest, version.sourceStart ?? earliest);
    return { ...version, withdrawn: true };
  });
  const chapters = bank.chapters.map((chapter) => {
    if (chapter.withdrawn || !covers(nodeAt, chapter, actionId, node.depth)) return chapter;
    changed = true;
    return { ...chapter, withdrawn: true };
  });
  if (!changed) return bank;
  // Only a cursor on the edited action's line, and past the target, moves: never forwards. The
  // summaries' sources rewind the summarizer only; memories rewind both (the summary is made
  // from them).
  const rewind = (cursor: string | null, target: number): string | null => {
    const at = cursor === null ? undefined : nodeAt(cursor);
    if (cursor === null || !at || at.depth <= target) return cursor;
    const shared = Math.min(at.depth, node.depth);
    if (ancestorAt(nodeAt, cursor, shared) !== ancestorAt(nodeAt, actionId, shared)) return cursor;
    return target < 0 ? null : ancestorAt(nodeAt, cursor, target);
  };
  return {
    memories,
    summaries,
    memoryCursor: rewind(bank.memoryCursor, earliestMemory - 1),
    summaryCursor: rewind(bank.summaryCursor, earliest - 1),
    chapters,
  };
}
