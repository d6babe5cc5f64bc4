import {
  chaptersOnPath,
  chaptersPastSummary,
  canonicalJson,
  currentSummary,
  plainProject,
  project,
  type ChapterWrittenData,
} from './index';
import { AdventureHistory } from './testing';

// Given an adventure, when chapters of its story are written, then the chaptered summary holds
// them on the path, withdraws them with what they were written from, and the summary's fold
// tells the older ones.

function played(turns: number): AdventureHistory {
  const history = AdventureHistory.create();
  for (let turn = 1; turn <= turns; turn++) history.turn('do', `step ${turn}`);
  return history;
}

function chapter(history: AdventureHistory, from: number, to: number, id = `c-${to}`) {
  const data: ChapterWrittenData = {
    chapterId: id,
    text: `chapter ${from}-${to}`,
    anchorActionId: history.state.path[to].id,
    sourceStart: from,
    sourceEnd: to,
    sourceActionIds: history.state.path.slice(from, to + 1).map((entry) => entry.id),
  };
  history.append({ type: 'ChapterWritten', data });
  return data;
}

function fold(history: AdventureHistory, chapterIds: string[], to: number) {
  history.append({
    type: 'SummaryWritten',
    data: {
      summaryId: `s-${to}`,
      text: `summary to ${to}`,
      anchorActionId: history.state.path[to].id,
      sourceStart: 0,
      sourceEnd: to,
      handEdited: false,
      replacesSummaryId: null,
      chapterIds,
    },
  });
}

describe('the chaptered summary', () => {
  it('given two chapters, when projected, then both are on the path in story order', () => {
    const history = played(6);
    chapter(history, 0, 5);
    chapter(history, 6, 11);
    expect(chaptersOnPath(history.state).map((c) => c.id)).toEqual(['c-5', 'c-11']);
  });

  it('given a fold of the first chapter into the summary, then only the later chapter is past it', () => {
    const history = played(6);
    chapter(history, 0, 5);
    chapter(history, 6, 11);
    fold(history, ['c-5'], 5);
    expect(currentSummary(history.state)?.chapterIds).toEqual(['c-5']);
    expect(chaptersPastSummary(history.state).map((c) => c.id)).toEqual(['c-11']);
  });

  it('given a chapter, when an action it was written from is edited, then it alone is withdrawn', () => {
    const history = played(6);
    chapter(history, 0, 5);
    chapter(history, 6, 11);
    history.run({
      type: 'EditAction',
      data: { actionId: history.state.path[7].id, text: 'a different step' },
    });
    expect(chaptersOnPath(history.state).map((c) => c.id)).toEqual(['c-5']);
  });

  it('given chapters, an undo past one and its edit, when folded by the fast projector and by evolve, then both agree', () => {
    const history = played(6);
    chapter(history, 0, 5);
    chapter(history, 6, 11);
    fold(history, ['c-5'], 5);
    history.run({
      type: 'EditAction',
      data: { actionId: history.state.path[2].id, text: 'another start' },
    });
    const plain = plainProject(history.events);
    expect(canonicalJson(project(history.events).memory)).toBe(canonicalJson(plain.memory));
    expect(chaptersOnPath(history.state).map((c) => c.id)).toEqual(['c-11']);
  });
});
