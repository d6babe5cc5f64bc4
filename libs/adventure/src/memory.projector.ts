// Folds the memory events into `state.memory`, and withdraws what an edit or an erase made
// stale. Like the main projector, it never changes a nested value: `draft.memory` is replaced
// with a new object whose arrays are new, so the state it came from stays untouched.

import { nodeOf, type AdventureState } from './adventure.state';
import type { MemoryEvent } from './memory.events';
import type { MemoryBankState, MemoryRecord, SummaryVersion } from './memory.state';

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

// eslint-disable-next-line max-lines-per-function -- one switch over the memory events, like the adventure projector's
export function evolveMemory(
  draft: AdventureState,
  event: MemoryEvent & { version: number },
): void {
  const bank = draft.memory;
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
        sourceActionIds: d.sourceActionIds ?? sourcesOnAnchorLine(draft, d),
        createdBy: d.createdBy,
        createdAtVersion: version,
        pinned: false,
        forgotten: false,
        withdrawn: false,
        useCount: 0,
        lastUsedVersion: null,
      };
      draft.memory = {
        ...bank,
        memories: [...bank.memories, memory],
        // Only the worker's blocks move the cursor: a hand-written memory covers nothing.
        memoryCursor: d.createdBy === 'worker' ? d.anchorActionId : bank.memoryCursor,
      };
      return;
    }
    case 'MemoryEdited':
      draft.memory = withMemory(bank, event.data.memoryId, version, (m) => ({
        ...m,
        text: event.data.text,
      }));
      return;
    case 'MemoryPinned':
    case 'MemoryUnpinned': {
      const pinned = event.type === 'MemoryPinned';
      // Pinning a forgotten memory brings it back: a pin overrides capacity.
      draft.memory = withMemory(bank, event.data.memoryId, version, (m) => ({
        ...m,
        pinned,
        forgotten: pinned ? false : m.forgotten,
      }));
      return;
    }
    case 'MemoryForgotten': {
      const ids = new Set(event.data.memoryIds);
      for (const id of ids) indexOfMemory(bank, id, version);
      // The bank no longer evicts: what an old least-recently-used capacity forgot is a
      // candidate again (only the player's forgetting holds), so an old story gets its past back.
      if (event.data.reason === 'capacity') return;
      draft.memory = {
        ...bank,
        memories: bank.memories.map((m) => (ids.has(m.id) ? { ...m, forgotten: true } : m)),
      };
      return;
    }
    case 'MemoryDeleted': {
      const index = indexOfMemory(bank, event.data.memoryId, version);
      const memories = bank.memories.slice();
      memories.splice(index, 1);
      draft.memory = { ...bank, memories };
      return;
    }
    case 'MemoriesUsed': {
      // A memory deleted between retrieval and the narration's append is simply not counted.
      const ids = new Set(event.data.memoryIds);
      draft.memory = {
        ...bank,
        memories: bank.memories.map((m) =>
          ids.has(m.id) ? { ...m, useCount: m.useCount + 1, lastUsedVersion: version } : m,
        ),
      };
      return;
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
      draft.memory = {
        ...bank,
        summaries,
        summaryCursor: d.handEdited ? bank.summaryCursor : d.anchorActionId,
      };
      return;
    }
  }
}

/**
 * A v1 memory's sources, which it did not record: the actions at its source depths on its
 * anchor's line. Its block skipped erased actions, which this cannot tell, so they may be
 * named too; the expansion reads only the story actions among them.
 */
function sourcesOnAnchorLine(
  state: AdventureState,
  data: { sourceStart: number | null; sourceEnd: number | null; anchorActionId: string },
): string[] {
  if (data.sourceStart === null || data.sourceEnd === null) return [];
  const ids: string[] = [];
  let node = nodeOf(state, data.anchorActionId);
  while (node && node.depth >= data.sourceStart) {
    if (node.depth <= data.sourceEnd) ids.unshift(node.id);
    node = node.parentId === null ? undefined : nodeOf(state, node.parentId);
  }
  return ids;
}

/** The ancestor of `actionId` at `depth` (itself at its own depth), or null. */
function ancestorAt(state: AdventureState, actionId: string, depth: number): string | null {
  let node = nodeOf(state, actionId);
  while (node && node.depth > depth) {
    node = node.parentId === null ? undefined : nodeOf(state, node.parentId);
  }
  return node && node.depth === depth ? node.id : null;
}

function covers(
  state: AdventureState,
  item: { sourceStart: number | null; sourceEnd: number | null; anchorActionId: string },
  actionId: string,
  depth: number,
): boolean {
  if (item.sourceStart === null || item.sourceEnd === null) return false;
  if (depth < item.sourceStart || depth > item.sourceEnd) return false;
  return ancestorAt(state, item.anchorActionId, depth) === actionId;
}

/**
 * After `actionId` was edited or erased: the memories and summary versions written from it are
 * stale. They are withdrawn for good (a redo cannot make them fresh again), and both cursors
 * that stand at or below the action rewind to just before the earliest withdrawn source, so the
 * cadence writes them again.
 */
export function withdrawCovering(draft: AdventureState, actionId: string): void {
  const node = nodeOf(draft, actionId);
  if (!node) return;
  const bank = draft.memory;
  let earliestMemory = Number.POSITIVE_INFINITY;
  let earliest = Number.POSITIVE_INFINITY;
  let changed = false;
  const memories = bank.memories.map((memory) => {
    if (memory.withdrawn || !covers(draft, memory, actionId, node.depth)) return memory;
    changed = true;
    earliestMemory = Math.min(earliestMemory, memory.sourceStart ?? earliestMemory);
    earliest = Math.min(earliest, earliestMemory);
    return { ...memory, withdrawn: true };
  });
  const summaries = bank.summaries.map((version) => {
    if (version.withdrawn || !covers(draft, version, actionId, node.depth)) return version;
    changed = true;
    earliest = Math.min(earliest, version.sourceStart ?? earliest);
    return { ...version, withdrawn: true };
  });
  if (!changed) return;
  // Only a cursor on the edited action's line, and past the target, moves: never forwards. The
  // summaries' sources rewind the summarizer only; memories rewind both (the summary is made
  // from them).
  const rewind = (cursor: string | null, target: number): string | null => {
    const at = cursor === null ? undefined : nodeOf(draft, cursor);
    if (cursor === null || !at || at.depth <= target) return cursor;
    const shared = Math.min(at.depth, node.depth);
    if (ancestorAt(draft, cursor, shared) !== ancestorAt(draft, actionId, shared)) return cursor;
    return target < 0 ? null : ancestorAt(draft, cursor, target);
  };
  draft.memory = {
    memories,
    summaries,
    memoryCursor: rewind(bank.memoryCursor, earliestMemory - 1),
    summaryCursor: rewind(bank.summaryCursor, earliest - 1),
  };
}
