import type { ChapterWrittenData } from '@chronicle/adventure';
import { AdventureHistory } from '@chronicle/adventure/testing';
import {
  CHAPTER_ACTIONS,
  chapterSpans,
  decideMemoryWork,
  foldPlan,
  type FoldChapters,
  type WriteChapter,
} from './index';

// Given a story, when the worker asks what the chaptered summary needs, then: the chapters due
// (by size, and a withdrawn chapter's span alone), and the fold once chapters no longer fit.

function played(turns: number, text = (turn: number) => `step ${turn}`): AdventureHistory {
  const history = AdventureHistory.create({ settings: { contextTokenBudget: 4096 } });
  for (let turn = 1; turn <= turns; turn++) history.turn('do', text(turn));
  return history;
}

function writeChapter(history: AdventureHistory, text = 'A chapter.'): ChapterWrittenData {
  const span = chapterSpans(history.state)[0];
  const command: WriteChapter = {
    type: 'WriteChapter',
    data: {
      chapterId: `chapter-${span.anchorActionId}`,
      text,
      span: {
        anchorActionId: span.anchorActionId,
        sourceStart: span.sourceStart,
        sourceEnd: span.sourceEnd,
      },
    },
  };
  const events = decideMemoryWork(command, history.state);
  history.append(...events);
  return events[0].data as ChapterWrittenData;
}

describe('the chaptered summary plan', () => {
  it('given fewer actions than a chapter, when planned, then no chapter is due', () => {
    const history = played(5);
    expect(chapterSpans(history.state)).toEqual([]);
  });

  it('given a long story of short actions, when planned, then chapters of CHAPTER_ACTIONS actions are due, oldest first', () => {
    const history = played(30); // 61 story actions
    const spans = chapterSpans(history.state);
    expect(spans.map((span) => [span.sourceStart, span.sourceEnd])).toEqual([
      [0, CHAPTER_ACTIONS - 1],
      [CHAPTER_ACTIONS, 2 * CHAPTER_ACTIONS - 1],
    ]);
  });

  it('given actions of many tokens, when planned, then a chapter closes by size before its action count', () => {
    const history = played(10, (turn) => `${'word '.repeat(1_600)}${turn}`);
    const spans = chapterSpans(history.state);
    expect(spans[0].entries.length).toBeLessThan(CHAPTER_ACTIONS);
    expect(spans[0].entries.reduce((sum, e) => sum + e.tokens, 0)).toBeGreaterThanOrEqual(3_000);
  });

  it('given a chapter written, when the same span is sent again, then nothing is appended', () => {
    const history = played(30);
    const first = chapterSpans(history.state)[0];
    writeChapter(history);
    const again: WriteChapter = {
      type: 'WriteChapter',
      data: {
        chapterId: 'again',
        text: 'Again.',
        span: {
          anchorActionId: first.anchorActionId,
          sourceStart: first.sourceStart,
          sourceEnd: first.sourceEnd,
        },
      },
    };
    expect(decideMemoryWork(again, history.state)).toEqual([]);
    expect(chapterSpans(history.state)[0].sourceStart).toBe(CHAPTER_ACTIONS);
  });

  it('given two chapters, when an action of the first is edited, then only its span is due again', () => {
    const history = played(30);
    writeChapter(history);
    writeChapter(history);
    history.run({
      type: 'EditAction',
      data: { actionId: history.state.path[3].id, text: 'a different step' },
    });
    const spans = chapterSpans(history.state);
    expect([spans[0].sourceStart, spans[0].sourceEnd]).toEqual([0, CHAPTER_ACTIONS - 1]);
    expect(spans).toHaveLength(1); // the tail past the second chapter is not a chapter yet
  });

  it('given chapters past the summary that no longer fit its budget, when planned, then the oldest are folded and the newest kept', () => {
    const history = played(60);
    const long = 'Mira crossed the salt flats and found the drowned bell. '.repeat(12);
    for (let i = 0; i < 4; i++) writeChapter(history, long);
    const plan = foldPlan(history.state);
    expect(plan).not.toBeNull();
    expect(plan!.chapters.length).toBeGreaterThan(0);
    expect(plan!.chapters.length).toBeLessThan(4);
    const fold: FoldChapters = {
      type: 'FoldChapters',
      data: {
        summaryId: 'summary-1',
        text: 'Mira found the bell.',
        chapterIds: plan!.chapters.map((chapter) => chapter.id),
        startsFrom: null,
      },
    };
    const events = decideMemoryWork(fold, history.state);
    expect(events).toMatchObject([
      {
        type: 'SummaryWritten',
        data: { chapterIds: fold.data.chapterIds, handEdited: false, sourceStart: 0 },
      },
    ]);
    history.append(...events);
    expect(decideMemoryWork(fold, history.state)).toEqual([]);
  });

  it('given chapters that fit the summary budget, when planned, then nothing is folded', () => {
    const history = played(30);
    writeChapter(history);
    writeChapter(history);
    expect(foldPlan(history.state)).toBeNull();
  });
});
