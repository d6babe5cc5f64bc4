// What the summary model is asked for the chaptered summary, and the command its reply becomes:
// a chapter from its span's own story text, or the fold of the oldest chapters into the summary.
// The memory pass (update-memory.use-case.ts) makes the call and appends the command.
import type { AdventureState, ModelCallUsage } from '@chronicle/adventure';
import { deterministicEventId } from '@chronicle/adventure-store';
import {
  CHAPTER_MAX_TOKENS,
  CHAPTER_TOKENS,
  STORY_SEPARATOR,
  SUMMARY_MAX_TOKENS,
  chapterPrompt,
  lastTokensOf,
  summaryPrompt,
  type BackgroundPrompt,
  type ChapterSpan,
  type FoldChapters,
  type FoldPlan,
  type WriteChapter,
} from '@chronicle/memory';

export interface SummaryWork {
  prompt: BackgroundPrompt;
  maxTokens: number;
  /** The command the model's reply is sent as, keyed so a redelivered job appends it once. */
  command: (text: string, usage: ModelCallUsage) => (WriteChapter | FoldChapters) & { key: string };
}

/** One chapter: `texts` are its span's story actions, `brief` the cast brief. */
export function chapterWork(
  adventureId: string,
  state: AdventureState,
  span: ChapterSpan,
  texts: readonly string[],
  brief: string,
  /** The history budget the span was planned under (see `chapterSpans`). */
  historyBudget: number,
): SummaryWork {
  // A chapter closes at CHAPTER_TOKENS; one long action can still overshoot, so its end is kept.
  const story = lastTokensOf(texts, 2 * CHAPTER_TOKENS, state.settings.encoding);
  // Named by its actions and their text versions, as a memory is.
  const chapterId = deterministicEventId(
    adventureId,
    'chapter',
    ...span.entries.map((entry) => `${entry.id}@${entry.textVersion}`),
  );
  const { anchorActionId, sourceStart, sourceEnd } = span;
  return {
    prompt: chapterPrompt(brief, story),
    maxTokens: CHAPTER_MAX_TOKENS,
    command: (text, usage) => ({
      type: 'WriteChapter',
      key: chapterId,
      data: {
        chapterId,
        text,
        span: { anchorActionId, sourceStart, sourceEnd, historyBudget },
        usage,
      },
    }),
  };
}

/** The fold of `fold.chapters` into the summary version it starts from. */
export function foldWork(adventureId: string, fold: FoldPlan, brief: string): SummaryWork {
  const texts = fold.chapters.map((chapter) => chapter.text);
  const startsFrom = fold.current?.text ?? null;
  const chapterIds = fold.chapters.map((chapter) => chapter.id);
  const summaryId = deterministicEventId(
    adventureId,
    'summary',
    ...chapterIds,
    fold.current?.id ?? '',
    startsFrom ?? '',
  );
  return {
    prompt: summaryPrompt(brief, startsFrom ?? '', texts.join(STORY_SEPARATOR)),
    maxTokens: SUMMARY_MAX_TOKENS,
    command: (text, usage) => ({
      type: 'FoldChapters',
      key: summaryId,
      data: { summaryId, text, chapterIds, startsFrom, usage },
    }),
  };
}
