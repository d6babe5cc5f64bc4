import type { StoryCard } from './context.types';

export interface CardMatch {
  id: string;
  name: string;
  /** The key that matched, trimmed and lower-cased. */
  keyword: string;
  entry: string;
}

/** A card's trigger keys: split on commas, trimmed, lower-cased, empty keys dropped. */
export function cardKeys(keys: string): string[] {
  return keys
    .split(',')
    .map((key) => key.trim().toLowerCase())
    .filter((key) => key !== '');
}

/**
 * One record per matched story card, naming the keyword that matched, in card order.
 *
 * Matching follows AI Dungeon's rules. It ignores case, respects spaces, and matches partial
 * words, so "boat" matches "boats". A card matches once, on its first matching key.
 *
 * Public because the memory bank runs the same rule over the block it is about to summarize,
 * so that the summarizer is told who the characters in that stretch of story are. One rule,
 * one implementation.
 */
export function matchCards(cards: readonly StoryCard[], windowText: string): CardMatch[] {
  const haystack = windowText.toLowerCase();
  const matched: CardMatch[] = [];
  for (const card of cards) {
    const keyword = cardKeys(card.keys).find((key) => haystack.includes(key));
    if (keyword !== undefined) {
      matched.push({ id: card.id, name: card.name, keyword, entry: card.entry });
    }
  }
  return matched;
}
