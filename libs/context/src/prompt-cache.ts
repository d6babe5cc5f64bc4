// What a provider's prefix cache serves of a prompt, and where the history's window may start so
// that a long story keeps a long shared prefix from turn to turn.

/** OpenAI's rule: a shared prefix is served from the cache from 1,024 tokens on ... */
export const PROMPT_CACHE_MIN_TOKENS = 1024;
/** ... in steps of 128 tokens. */
export const PROMPT_CACHE_STEP_TOKENS = 128;

/** The tokens a prefix cache serves when `sharedPrefixTokens` match an earlier request. */
export function cacheableTokens(sharedPrefixTokens: number): number {
  if (sharedPrefixTokens < PROMPT_CACHE_MIN_TOKENS) return 0;
  const steps = Math.floor(
    (sharedPrefixTokens - PROMPT_CACHE_MIN_TOKENS) / PROMPT_CACHE_STEP_TOKENS,
  );
  return PROMPT_CACHE_MIN_TOKENS + steps * PROMPT_CACHE_STEP_TOKENS;
}

/** How the history window chooses its first action. */
export type HistoryMode = 'stable' | 'sliding';
export const HISTORY_MODES: readonly HistoryMode[] = ['stable', 'sliding'];
export const DEFAULT_HISTORY_MODE: HistoryMode = 'stable';

/**
 * The share of the context budget one history block spans (`stable` mode).
 *
 * The window's first action may only be the first action of a block, blocks being counted in
 * tokens from the story's start. Between two moves of the start, each turn only appends to the
 * history, so the whole prompt up to the newest actions is a prefix the provider has seen; the
 * turn on which the start moves re-sends the history uncached. Bigger blocks move the start less
 * often (fewer uncached turns) but leave more of the budget empty after a move: the history
 * fills between (1 − block/historyBudget) and all of its budget, so its mean fill is about
 * 1 − block / (2 × historyBudget). A quarter of the whole budget is ~30% of the history's share
 * after the fixed sections and the lore: mean fill ~85%, and the start moves once per ~quarter
 * budget of new story. `npm run bench -- cache` measures both against the alternatives.
 */
export const STABLE_BLOCK_SHARE = 0.25;
/** Blocks are never smaller than this, so a tiny budget does not move the start every turn. */
export const STABLE_MIN_BLOCK_TOKENS = 64;

/** The tokens one history block spans at `contextTokenBudget`. */
export function stableBlockTokens(contextTokenBudget: number, share = STABLE_BLOCK_SHARE): number {
  return Math.max(STABLE_MIN_BLOCK_TOKENS, Math.floor(contextTokenBudget * share));
}

/**
 * The index (into `costs`, a story's tail, oldest first) of the oldest action that starts a block
 * and whose suffix costs no more than `budget`; null when no block start fits (then the caller
 * slides, as the seed does). `before` is the cost of every story action older than the tail, so
 * blocks are counted from the story's start and two turns of one story agree on them. An action
 * starts block k when its first token lies in [k × block, (k + 1) × block) and the previous
 * action's first token lies in an earlier block; the story's first action starts block 0.
 *
 * The oldest action of the tail can only be judged when the tail is the whole story (`before`
 * 0); otherwise its predecessor is unknown and it is not a candidate. A covering window costs
 * more than its budget, so its oldest action could not have been chosen anyway.
 */
export function stableStart(
  costs: readonly number[],
  before: number,
  blockTokens: number,
  budget: number,
): number | null {
  let suffix = 0;
  let start: number | null = null;
  // offset of the action's first token from the story's start, walked from the newest end
  let offset = before;
  for (const cost of costs) offset += cost;
  for (let i = costs.length - 1; i >= 0; i--) {
    suffix += costs[i];
    if (suffix > budget) break;
    offset -= costs[i];
    const block = Math.floor(offset / blockTokens);
    if (i === 0) {
      if (offset === 0) start = 0;
      break;
    }
    const previous = Math.floor((offset - costs[i - 1]) / blockTokens);
    if (block > previous) start = i;
  }
  return start;
}
