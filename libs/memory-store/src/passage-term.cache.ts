// What the lexical search needs to know to rank few passages (libs/memory's matchingLexemes): how
// many passages of an adventure there are and how many hold each lexeme, kept in process and
// loaded incrementally by `seq` as the vector cache is, and each query word's lexemes,
// remembered across adventures.
// Derived data only: a count is an upper bound (a node's new text version counts again, its
// old one is not taken off), which only makes a lexeme look commoner than it is; an adventure
// the LRU drops is counted again on its next turn.
import { LruCache } from '@chronicle/platform';
import { VECTOR_CACHE_ADVENTURES } from '@chronicle/memory';
import type { StoryPassageRepository } from './story-passage.repository';

/** Query words whose lexemes the process remembers (the stemmer is fixed: they never change). */
const WORD_CACHE = 20_000;

/** What idf needs of an adventure's passages: how many hold each lexeme, and how many there are. */
export interface StoryTerms {
  counts: ReadonlyMap<string, number>;
  passages: number;
}

class AdventureTerms {
  readonly counts = new Map<string, number>();
  /** The nodes stored (a new text version of a node replaces its row: counted once). */
  readonly nodes = new Set<string>();
  lastSeq = 0;
  /** The load under way, so concurrent turns of one adventure count the new rows once. */
  loading: Promise<void> | null = null;

  add(fresh: Awaited<ReturnType<StoryPassageRepository['lexemesSince']>>): void {
    if (fresh.lastSeq === null) return;
    this.lastSeq = Math.max(this.lastSeq, fresh.lastSeq);
    for (const [lexeme, passages] of fresh.counts) {
      this.counts.set(lexeme, (this.counts.get(lexeme) ?? 0) + passages);
    }
    for (const actionId of fresh.actionIds) this.nodes.add(actionId);
  }
}

export class PassageTermCache {
  private readonly adventures: LruCache<string, AdventureTerms>;
  private readonly words = new LruCache<string, string[]>({ capacity: WORD_CACHE });

  constructor(
    private readonly passages: StoryPassageRepository,
    capacity = VECTOR_CACHE_ADVENTURES,
  ) {
    this.adventures = new LruCache({ capacity });
  }

  /**
   * How many of the adventure's passages hold each lexeme, and how many there are, with every
   * row stored so far.
   */
  async frequencies(adventureId: string): Promise<StoryTerms> {
    let entry = this.adventures.get(adventureId);
    if (!entry) {
      entry = new AdventureTerms();
      this.adventures.set(adventureId, entry);
    }
    const current = entry;
    while (current.loading) await current.loading;
    current.loading = this.passages
      .lexemesSince(adventureId, current.lastSeq)
      .then((fresh) => current.add(fresh))
      .finally(() => {
        current.loading = null;
      });
    await current.loading;
    return { counts: current.counts, passages: current.nodes.size };
  }

  /** The lexemes of `words`, each once, in the words' order; a stop word has none. */
  async lexemes(words: readonly string[]): Promise<string[]> {
    const missing = words.filter((word) => this.words.get(word) === undefined);
    if (missing.length > 0) {
      const read = await this.passages.lexemesOf(missing);
      missing.forEach((word, i) => this.words.set(word, read[i]));
    }
    const lexemes = new Set<string>();
    for (const word of words) for (const lexeme of this.words.get(word) ?? []) lexemes.add(lexeme);
    return [...lexemes];
  }
}
