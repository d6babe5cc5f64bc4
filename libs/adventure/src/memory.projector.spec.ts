import {
  activeMemories,
  canonicalJson,
  currentSummary,
  decideMemory,
  memoryCursorDepth,
  memorySourcesOnPath,
  NotFoundError,
  project,
  summaryCursorDepth,
  type MemoryCommand,
  type MemoryWrittenData,
} from './index';
import { AdventureHistory } from './testing';

/** An adventure of `turns` turns: 1 + 2 × turns story actions. */
function played(turns: number): AdventureHistory {
  const history = AdventureHistory.create();
  for (let turn = 1; turn <= turns; turn++) history.turn('do', `step ${turn}`);
  return history;
}

function workerMemory(history: AdventureHistory, from: number, to: number, id = `m-${to}`) {
  const data: MemoryWrittenData = {
    memoryId: id,
    text: `memory of ${from}-${to}`,
    sourceStart: from,
    sourceEnd: to,
    anchorActionId: history.state.path[to].id,
    sourceActionIds: history.state.path.slice(from, to + 1).map((entry) => entry.id),
    createdBy: 'worker',
  };
  history.append({ type: 'MemoryWritten', data });
  return data;
}

function summary(history: AdventureHistory, id: string, from: number, to: number) {
  history.append({
    type: 'SummaryWritten',
    data: {
      summaryId: id,
      text: `summary ${id}`,
      anchorActionId: history.state.path[to].id,
      sourceStart: from,
      sourceEnd: to,
      handEdited: false,
      replacesSummaryId: null,
      chapterIds: [],
    },
  });
}

describe('memory projection', () => {
  it('given worker memories, the cursor stands on the last block and every memory is active', () => {
    const history = played(9); // 19 actions
    workerMemory(history, 0, 5);
    workerMemory(history, 6, 11);
    workerMemory(history, 12, 17);
    expect(memoryCursorDepth(history.state)).toBe(17);
    expect(activeMemories(history.state).map((m) => m.id)).toEqual(['m-5', 'm-11', 'm-17']);
  });

  it('when an undo takes a memory’s anchor off the path, it is withdrawn at once and the cursor rewinds; redo restores both', () => {
    const history = played(9);
    workerMemory(history, 0, 5);
    workerMemory(history, 6, 11);
    workerMemory(history, 12, 17);
    history.undo(); // head back to depth 16
    expect(activeMemories(history.state).map((m) => m.id)).toEqual(['m-5', 'm-11']);
    expect(memoryCursorDepth(history.state)).toBe(11);
    history.redo();
    expect(activeMemories(history.state).map((m) => m.id)).toEqual(['m-5', 'm-11', 'm-17']);
    expect(memoryCursorDepth(history.state)).toBe(17);
  });

  it('when a source action is edited, the memory is withdrawn for good and the cursors rewind before what it came from', () => {
    const history = played(9);
    workerMemory(history, 0, 5);
    workerMemory(history, 6, 11);
    summary(history, 's-1', 0, 14);
    history.edit(history.state.path[8].id, 'a rewritten step');
    expect(activeMemories(history.state).map((m) => m.id)).toEqual(['m-5']);
    expect(history.state.memory.memories[1].withdrawn).toBe(true);
    expect(memoryCursorDepth(history.state)).toBe(5);
    // The summary covered depth 8 from 0: the summarizer starts over.
    expect(summaryCursorDepth(history.state)).toBe(-1);
    expect(currentSummary(history.state)).toBeNull();
  });

  it('when an action outside every block is erased, nothing is withdrawn', () => {
    const history = played(9);
    workerMemory(history, 0, 5);
    history.erase(history.state.path[18].id);
    expect(activeMemories(history.state).map((m) => m.id)).toEqual(['m-5']);
    expect(memoryCursorDepth(history.state)).toBe(5);
  });

  it('the current summary is the deepest version on the path; a retry of its anchor withdraws it', () => {
    const history = played(8); // 17 actions, head is an AI action at 16
    summary(history, 's-1', 0, 14);
    summary(history, 's-2', 15, 16);
    expect(currentSummary(history.state)?.id).toBe('s-2');
    history.retry();
    expect(currentSummary(history.state)?.id).toBe('s-1');
    expect(summaryCursorDepth(history.state)).toBe(14);
  });

  it('given a memory written with its sources, it keeps them, and they expand to the story actions on the path', () => {
    const history = played(9);
    workerMemory(history, 6, 11);
    const memory = history.state.memory.memories[0];
    const ids = history.state.path.slice(6, 12).map((entry) => entry.id);
    expect(memory.sourceActionIds).toEqual(ids);
    expect(memorySourcesOnPath(history.state, memory).map((s) => [s.id, s.depth])).toEqual(
      ids.map((id, i) => [id, 6 + i]),
    );
  });

  it('given a v1 memory (sources not recorded), its sources are the actions at its depths on its anchor’s line', () => {
    const history = played(9);
    const data = { ...workerMemory(history, 6, 11), memoryId: 'v1', sourceActionIds: null };
    history.append({ type: 'MemoryWritten', data });
    expect(history.state.memory.memories[1].sourceActionIds).toEqual(
      history.state.path.slice(6, 12).map((entry) => entry.id),
    );
  });

  it('when the path moves off the sources (undo), they no longer expand; a hand-written memory has none', () => {
    const history = played(9);
    workerMemory(history, 12, 17);
    history.undo();
    history.undo();
    const memory = history.state.memory.memories[0];
    expect(memorySourcesOnPath(history.state, memory).map((s) => s.depth)).toEqual([12, 13, 14]);
    history.append({
      type: 'MemoryWritten',
      data: {
        memoryId: 'mine',
        text: 'Mira owes Tom.',
        sourceStart: null,
        sourceEnd: null,
        anchorActionId: history.state.head ?? '',
        sourceActionIds: [],
        createdBy: 'player',
      },
    });
    expect(memorySourcesOnPath(history.state, history.state.memory.memories[1])).toEqual([]);
  });

  it('given an old log where the LRU capacity forgot a memory, it is a candidate again; the player’s forgetting holds', () => {
    const history = played(9);
    workerMemory(history, 0, 5);
    workerMemory(history, 6, 11);
    history.append({ type: 'MemoryForgotten', data: { memoryIds: ['m-5'], reason: 'capacity' } });
    expect(activeMemories(history.state).map((m) => m.id)).toEqual(['m-5', 'm-11']);
    history.append({ type: 'MemoryForgotten', data: { memoryIds: ['m-11'], reason: 'player' } });
    expect(activeMemories(history.state).map((m) => m.id)).toEqual(['m-5']);
  });

  it('use counts come from MemoriesUsed, with the event’s version as the LRU clock', () => {
    const history = played(6);
    workerMemory(history, 0, 5);
    history.append({ type: 'MemoriesUsed', data: { turnId: 't', memoryIds: ['m-5', 'gone'] } });
    const memory = history.state.memory.memories[0];
    expect(memory.useCount).toBe(1);
    expect(memory.lastUsedVersion).toBe(history.version);
  });

  it('a replay of the log reproduces the memory bank exactly', () => {
    const history = played(9);
    workerMemory(history, 0, 5);
    history.append({ type: 'MemoryPinned', data: { memoryId: 'm-5' } });
    summary(history, 's-1', 0, 14);
    history.undo();
    expect(canonicalJson(project(history.events))).toBe(canonicalJson(history.state));
  });
});

describe('decideMemory', () => {
  const when = (history: AdventureHistory, command: MemoryCommand) =>
    decideMemory(command, history.state);

  it('given a player memory, it is anchored on the head with no source and moves no cursor', () => {
    const history = played(2);
    const events = when(history, {
      type: 'AddMemory',
      data: { memoryId: 'p-1', text: ' Mira lies. ' },
    });
    expect(events).toEqual([
      {
        type: 'MemoryWritten',
        data: {
          memoryId: 'p-1',
          text: 'Mira lies.',
          sourceStart: null,
          sourceEnd: null,
          anchorActionId: history.head,
          sourceActionIds: [],
          createdBy: 'player',
        },
      },
    ]);
    history.append(...events);
    expect(memoryCursorDepth(history.state)).toBe(-1);
  });

  it('given an unknown memory, pin is a not-found error', () => {
    expect(() => when(played(1), { type: 'PinMemory', data: { memoryId: 'nope' } })).toThrow(
      NotFoundError,
    );
  });

  it('given a pinned memory, pin again appends nothing; forget a forgotten one appends nothing', () => {
    const history = played(6);
    workerMemory(history, 0, 5);
    history.append(...when(history, { type: 'PinMemory', data: { memoryId: 'm-5' } }));
    expect(when(history, { type: 'PinMemory', data: { memoryId: 'm-5' } })).toEqual([]);
    history.append(...when(history, { type: 'ForgetMemory', data: { memoryId: 'm-5' } }));
    expect(history.state.memory.memories[0]).toMatchObject({ pinned: true, forgotten: true });
    expect(when(history, { type: 'ForgetMemory', data: { memoryId: 'm-5' } })).toEqual([]);
  });

  it('when the summary is edited at its own anchor, that version is rewritten in place', () => {
    const history = played(8);
    summary(history, 's-1', 0, 16);
    const events = when(history, {
      type: 'EditSummary',
      data: { summaryId: 'new', text: 'Hand.' },
    });
    expect(events[0]).toMatchObject({ data: { summaryId: 's-1', replacesSummaryId: 's-1' } });
    history.append(...events);
    expect(history.state.memory.summaries).toHaveLength(1);
    expect(currentSummary(history.state)).toMatchObject({ text: 'Hand.', handEdited: true });
    // The summarizer's cursor stays where the worker left it.
    expect(history.state.memory.summaryCursor).toBe(history.state.path[16].id);
  });

  it('when the summary is edited elsewhere, a new version is anchored on the head', () => {
    const history = played(8);
    summary(history, 's-1', 0, 14);
    history.append(
      ...when(history, { type: 'EditSummary', data: { summaryId: 'new', text: 'Hand.' } }),
    );
    expect(history.state.memory.summaries.map((s) => s.id)).toEqual(['s-1', 'new']);
    expect(currentSummary(history.state)?.id).toBe('new');
  });
});
