// The memory worker's rules, as a decider: what its commands append to an adventure. The worker
// asks the model first (a memory, a summary), then sends what the model wrote as a command; the
// decider checks against the head whether that work is still due, so a job redelivered, two jobs
// racing or a story that moved on while the model was writing append nothing twice and nothing
// stale. Pure, like the adventure's decider: ids and texts come from the command.

import {
  InvalidCommandError,
  NotFoundError,
  type AdventureState,
  type MemoryEvent,
  type ModelCallUsage,
} from '@chronicle/adventure';
import { chapterSpans, foldPlan } from './chapter.plan';
import { memoryBlocks, summaryPlan } from './memory.plan';

/** Where a block or a summary update sits in the story: depths of its first and last action. */
export interface StorySpan {
  anchorActionId: string;
  sourceStart: number;
  sourceEnd: number;
}

/** The memory of the oldest block due (see `memoryBlocks`), as the model wrote it. */
export type WriteMemory = {
  type: 'WriteMemory';
  data: { memoryId: string; text: string; block: StorySpan; usage?: ModelCallUsage };
};

/** The summary update due (see `summaryPlan`), as the model wrote it. */
export type WriteSummary = {
  type: 'WriteSummary';
  data: {
    summaryId: string;
    text: string;
    plan: StorySpan & {
      /** The text of the version the update started from; null when there was none. */
      startsFrom: string | null;
      /** The history budget the plan was made under (see `summaryPlan`). */
      historyBudget?: number;
    };
    usage?: ModelCallUsage;
  };
};

/** A summary the player asked to have written again from scratch: written whatever is due. */
export type WriteRegeneratedSummary = {
  type: 'WriteRegeneratedSummary';
  data: { summaryId: string; text: string; span: StorySpan; usage?: ModelCallUsage };
};

/** The oldest chapter due (see `chapterSpans`), as the summariser wrote it. */
export type WriteChapter = {
  type: 'WriteChapter';
  data: {
    chapterId: string;
    text: string;
    span: StorySpan & { historyBudget?: number };
    usage?: ModelCallUsage;
  };
};

/** The chapters folded into the summary (see `foldPlan`), as the summariser wrote it. */
export type FoldChapters = {
  type: 'FoldChapters';
  data: {
    summaryId: string;
    text: string;
    chapterIds: string[];
    /** The text of the version the fold started from; null when there was none. */
    startsFrom: string | null;
    usage?: ModelCallUsage;
  };
};

// There is no eviction: the bank keeps every memory of the path (retrieval picks among them).
// The least-recently-used capacity it had forgot old memories first, the past by design.
export type MemoryWorkCommand =
  WriteMemory | WriteSummary | WriteRegeneratedSummary | WriteChapter | FoldChapters;

export const MEMORY_WORK_COMMANDS: ReadonlySet<string> = new Set<MemoryWorkCommand['type']>([
  'WriteMemory',
  'WriteSummary',
  'WriteRegeneratedSummary',
  'WriteChapter',
  'FoldChapters',
]);

export function isMemoryWorkCommand(command: { type: string }): command is MemoryWorkCommand {
  return MEMORY_WORK_COMMANDS.has(command.type);
}

function sameSpan(a: StorySpan, b: StorySpan): boolean {
  return a.anchorActionId === b.anchorActionId && a.sourceStart === b.sourceStart;
}

function requireText(text: unknown, what: string): string {
  if (typeof text !== 'string' || text.trim() === '') {
    throw new InvalidCommandError(`${what} text is required`);
  }
  return text;
}

export function decideMemoryWork(command: MemoryWorkCommand, state: AdventureState): MemoryEvent[] {
  if (state.id === null) throw new NotFoundError('adventure not found; create it first');
  switch (command.type) {
    case 'WriteMemory': {
      const { memoryId, text, block, usage } = command.data;
      // Only the oldest block due is written: memories are written in story order, and a block
      // that is no longer first was written by another run (or the story moved).
      const due = memoryBlocks(state)[0];
      if (!due || !sameSpan(due, block)) return [];
      return [
        {
          type: 'MemoryWritten',
          data: {
            memoryId,
            text: requireText(text, 'memory'),
            sourceStart: due.sourceStart,
            sourceEnd: due.sourceEnd,
            anchorActionId: due.anchorActionId,
            sourceActionIds: due.entries.map((entry) => entry.id),
            createdBy: 'worker',
            ...(usage && { usage }),
          },
        },
      ];
    }
    case 'WriteSummary': {
      const { summaryId, text, plan, usage } = command.data;
      const due = summaryPlan(state, { historyBudget: plan.historyBudget });
      // The update folds new story into the version it started from: if that version changed
      // (the player edited it), the update is stale.
      if (!due || !sameSpan(due, plan) || (due.current?.text ?? null) !== plan.startsFrom) {
        return [];
      }
      return [
        {
          type: 'SummaryWritten',
          data: {
            summaryId,
            text: requireText(text, 'summary'),
            anchorActionId: due.anchorActionId,
            sourceStart: due.sourceStart,
            sourceEnd: due.sourceEnd,
            handEdited: false,
            replacesSummaryId: null,
            chapterIds: [],
            ...(usage && { usage }),
          },
        },
      ];
    }
    case 'WriteRegeneratedSummary': {
      const { summaryId, text, span, usage } = command.data;
      return [
        {
          type: 'SummaryWritten',
          data: {
            summaryId,
            text: requireText(text, 'summary'),
            anchorActionId: span.anchorActionId,
            sourceStart: span.sourceStart,
            sourceEnd: span.sourceEnd,
            handEdited: false,
            replacesSummaryId: null,
            chapterIds: [],
            ...(usage && { usage }),
          },
        },
      ];
    }
    case 'WriteChapter':
    case 'FoldChapters':
      return decideChapterWork(command, state);
    default: {
      const unknown: { type: string } = command;
      throw new InvalidCommandError(`unknown command ${JSON.stringify(unknown.type)}`);
    }
  }
}

/** The chaptered summary's commands: a chapter of the span due, the fold of the chapters due. */
function decideChapterWork(
  command: WriteChapter | FoldChapters,
  state: AdventureState,
): MemoryEvent[] {
  switch (command.type) {
    case 'WriteChapter': {
      const { chapterId, text, span, usage } = command.data;
      const due = chapterSpans(state, { historyBudget: span.historyBudget })[0];
      if (!due || !sameSpan(due, span) || due.sourceEnd !== span.sourceEnd) return [];
      return [
        {
          type: 'ChapterWritten',
          data: {
            chapterId,
            text: requireText(text, 'chapter'),
            anchorActionId: due.anchorActionId,
            sourceStart: due.sourceStart,
            sourceEnd: due.sourceEnd,
            sourceActionIds: due.entries.map((entry) => entry.id),
            ...(usage && { usage }),
          },
        },
      ];
    }
    case 'FoldChapters': {
      const { summaryId, text, chapterIds, startsFrom, usage } = command.data;
      const due = foldPlan(state);
      // Folded from the version it started from, over exactly the chapters due: anything else
      // was written by another run, or the player edited the summary meanwhile.
      if (
        !due ||
        (due.current?.text ?? null) !== startsFrom ||
        due.chapters.map((chapter) => chapter.id).join() !== chapterIds.join()
      ) {
        return [];
      }
      const first = due.chapters[0];
      const last = due.chapters[due.chapters.length - 1];
      return [
        {
          type: 'SummaryWritten',
          data: {
            summaryId,
            text: requireText(text, 'summary'),
            anchorActionId: last.anchorActionId,
            sourceStart: first.sourceStart,
            sourceEnd: last.sourceEnd,
            handEdited: false,
            replacesSummaryId: null,
            chapterIds,
            ...(usage && { usage }),
          },
        },
      ];
    }
  }
}
