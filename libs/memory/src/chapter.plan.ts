// The chaptered summary's plan: which span of the story is the next chapter, and when the oldest
// chapters are folded into the short summary because they no longer fit beside the newer ones.
// Decided from the projection alone, like memory.plan.ts; the worker writes what is due and its
// commands are checked against the same rules at append time (memory-work.decider.ts).

import {
  chaptersOnPath,
  chaptersPastSummary,
  currentSummary,
  type AdventureState,
  type ChapterRecord,
} from '@chronicle/adventure';
import { summaryTokenBudget, tokenizer } from '@chronicle/context';
import { CHAPTER_ACTIONS, CHAPTER_TOKENS, MAX_CHAPTERS_PER_RUN } from './memory.constants';
import { leavesWindowUncovered, storyEntries, type StoryEntry } from './memory.plan';

export interface ChapterSpan {
  /** The chapter's story actions, oldest first; the last one is its anchor. */
  entries: StoryEntry[];
  sourceStart: number;
  sourceEnd: number;
  anchorActionId: string;
}

/**
 * The chapters due, oldest first (at most 5 a run): the story no chapter on the path tells, cut
 * into the shortest runs holding CHAPTER_TOKENS tokens or CHAPTER_ACTIONS actions. A gap before
 * a chapter that is still told (left by an edit, which withdrew the chapter written from it) is
 * a chapter of its own whatever its size, so only that span is told again. The open tail is a
 * chapter too when a `stable` history is about to drop an action no chapter tells (see
 * `leavesWindowUncovered`), so nothing leaves the prompt untold.
 */
export function chapterSpans(
  state: AdventureState,
  options: { historyBudget?: number } = {},
): ChapterSpan[] {
  const entries = storyEntries(state);
  const told = chaptersOnPath(state);
  const spans: ChapterSpan[] = [];
  let open: StoryEntry[] = [];
  let tokens = 0;
  let next = 0; // the first told chapter that may still lie ahead
  const close = () => {
    if (open.length > 0) spans.push(spanOf(open));
    open = [];
    tokens = 0;
  };
  for (const entry of entries) {
    if (spans.length >= MAX_CHAPTERS_PER_RUN) return spans;
    while (next < told.length && told[next].sourceEnd < entry.depth) next++;
    if (next < told.length && told[next].sourceStart <= entry.depth) {
      close(); // a told span: what was open before it is a gap, told now
      continue;
    }
    open.push(entry);
    tokens += entry.tokens;
    if (tokens >= CHAPTER_TOKENS || open.length >= CHAPTER_ACTIONS) close();
  }
  if (
    open.length > 0 &&
    spans.length < MAX_CHAPTERS_PER_RUN &&
    options.historyBudget !== undefined &&
    leavesWindowUncovered(state, entries, entries.length - open.length, options.historyBudget)
  ) {
    close();
  }
  return spans.slice(0, MAX_CHAPTERS_PER_RUN);
}

function spanOf(entries: StoryEntry[]): ChapterSpan {
  const last = entries[entries.length - 1];
  return {
    entries,
    sourceStart: entries[0].depth,
    sourceEnd: last.depth,
    anchorActionId: last.id,
  };
}

export interface FoldPlan {
  /** The chapters folded into the summary, oldest first; the last one's anchor is the version's. */
  chapters: ChapterRecord[];
  /** The version the fold starts from, or null. */
  current: { id: string; text: string } | null;
}

/**
 * The chapters to fold into the summary now, or null: when the chapters past the summary take
 * more than the prompt's summary budget leaves them (the budget less the summary as it stands),
 * the oldest are folded until the newest that remain fit. The summary and the chapters left
 * then tell the whole story within the summary budget.
 */
export function foldPlan(state: AdventureState): FoldPlan | null {
  const chapters = chaptersPastSummary(state);
  if (chapters.length < 2) return null;
  const tok = tokenizer(state.settings.encoding);
  const current = currentSummary(state);
  const room = Math.max(
    0,
    summaryTokenBudget(state.settings.contextTokenBudget) -
      (current ? tok.countCached(current.text) : 0),
  );
  const costs = chapters.map((chapter) => tok.countCached(chapter.text));
  let kept = 0;
  let keptFrom = chapters.length;
  while (keptFrom > 0 && kept + costs[keptFrom - 1] <= room) {
    keptFrom--;
    kept += costs[keptFrom];
  }
  if (keptFrom === 0) return null;
  // The newest chapter is never folded: it is what the next prompt's history is closest to.
  const folded = chapters.slice(0, Math.min(keptFrom, chapters.length - 1));
  if (folded.length === 0) return null;
  return { chapters: folded, current: current ? { id: current.id, text: current.text } : null };
}
