// How much of the prompt the memory settings' model-written sections may take: the story
// summary (its chapters) and the retrieved memories. One rule, here, for the builder that fills
// the sections and the memory worker that folds chapters into the summary once they no longer
// fit, so the two never disagree about what fits.
//
// The shares were chosen by the recall bench (`npm run bench -- recall --memory`; BENCHMARKS.md,
// "Issue 26: memory's share"): the summary and the memories are paid out of the budget the
// history and the recalled passages would otherwise hold, and the story's own text is what
// recall finds its evidence in, so each gets a small cap rather than all it asks for.

/** The share of the context budget the story summary (the summary and its chapters) may take. */
export const SUMMARY_SHARE = 0.1;
/** The share of the context budget the retrieved memories may take. */
export const MEMORY_SHARE = 0.05;

/**
 * The story's budget (what the fixed and live sections and the lore leave) split between the
 * recalled passages and the history. The passages take their share of the budget as it would
 * be with the memory sections off, so the summary and the memories are paid for by the history
 * alone: recall found its evidence in the passages (the history of a long story holds little of
 * it at 4k and 8k), and paid by both, memory on lost 2 of 30 questions at 4k that the passages
 * alone found. With no memory section this is the passages' share of the budget, as before.
 */
export function storyBudgetSplit(
  storyBudget: number,
  memoryTokens: number,
  recallShare: number,
): { recall: number; history: number } {
  const recall = Math.min(storyBudget, Math.floor((storyBudget + memoryTokens) * recallShare));
  return { recall, history: storyBudget - recall };
}

/** Tokens the story summary with its chapters may take in a prompt of `contextTokenBudget`. */
export function summaryTokenBudget(contextTokenBudget: number): number {
  return Math.floor(contextTokenBudget * SUMMARY_SHARE);
}

/** Tokens the retrieved memories may take in a prompt of `contextTokenBudget`. */
export function memoryTokenBudget(contextTokenBudget: number): number {
  return Math.floor(contextTokenBudget * MEMORY_SHARE);
}

/** A chapter of the story summary, as the prompt shows it. */
export interface StoryChapter {
  text: string;
  sourceStart: number;
  sourceEnd: number;
}

/**
 * The summary section's text: the summary, then the newest chapters past it that fit the
 * summary's budget, in story order. The summary itself is never cut (it is the short telling of
 * everything older, or the player's own words); a chapter that does not fit is left for the
 * worker to fold into it. With no chapters, exactly the summary.
 */
export function summaryText(
  summary: string,
  chapters: readonly StoryChapter[],
  contextTokenBudget: number,
  count: (text: string) => number,
): string {
  const head = summary.trim();
  if (chapters.length === 0) return head;
  let room = summaryTokenBudget(contextTokenBudget) - (head ? count(head) : 0);
  const kept: string[] = [];
  for (let i = chapters.length - 1; i >= 0; i--) {
    const text = chapters[i].text.trim();
    const cost = count(text) + 1;
    if (cost > room) break;
    kept.unshift(text);
    room -= cost;
  }
  return [head, ...kept].filter((part) => part !== '').join('\n\n');
}

/**
 * The memories that fit their budget, in the order given (best first); a longer one that does
 * not fit is passed over for a shorter one after it. Pinned memories come first whatever
 * their rank: the player asked for them.
 */
export function memoriesWithinBudget<T extends { text: string; pinned: boolean }>(
  memories: readonly T[],
  contextTokenBudget: number,
  count: (text: string) => number,
): T[] {
  let room = memoryTokenBudget(contextTokenBudget);
  const kept: T[] = [];
  for (const memory of [...memories].sort((a, b) => Number(b.pinned) - Number(a.pinned))) {
    const cost = count(`- ${memory.text}`) + 1;
    if (cost > room) continue;
    kept.push(memory);
    room -= cost;
  }
  return memories.filter((memory) => kept.includes(memory));
}
