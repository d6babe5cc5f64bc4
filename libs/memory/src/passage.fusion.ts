// Verbatim recall's pure half: the words a passage search looks for, which nodes the index
// still lacks, and reciprocal rank fusion of the lexical and the semantic rankings (the path
// filter is story-path.index.ts). The queries themselves are libs/memory-store's.
import type { AdventureState, NodeType } from '@chronicle/adventure';
import type { PassageRef } from './story-path.index';

/** Reciprocal rank fusion's constant (Cormack et al.: 60 works across collections). */
export const RRF_K = 60;
/** The most distinct words a lexical query ORs (a long action is cut, not slowed). */
export const MAX_QUERY_TERMS = 32;
/** How many hits each ranking contributes before fusion. */
export const RANKING_DEPTH = 50;
/** How many fused passages a turn hands the prompt builder (it drops those in its history). */
export const RECALL_CANDIDATES = 40;

const WORD = /[\p{L}\p{N}]+/gu;

/**
 * The query's words ORed, as to_tsquery reads them: letters and digits only (so nothing in a
 * player's text is tsquery syntax), lower-cased, each once, at most MAX_QUERY_TERMS. '' when the
 * text has no word. OR, not AND: a question shares some words with the passage answering it,
 * rarely all.
 */
export function lexicalQuery(text: string): string {
  return queryWords(text).join(' | ');
}

/** lexicalQuery's words, in the order the text has them. */
export function queryWords(text: string): string[] {
  const terms = new Set<string>();
  for (const match of text.toLowerCase().matchAll(WORD)) {
    terms.add(match[0]);
    if (terms.size === MAX_QUERY_TERMS) break;
  }
  return [...terms];
}

/**
 * About how many passages the lexical search ranks at most. Ranking is the search's cost (each
 * matching passage's tsvector is read and scored per word), and an ORed query's common words
 * ("ask", "light", "went") match most of a long story: at 10,000 actions, half of it.
 * Measured with `npm run bench -- passage-cost`: 500 rather than 1,000 took the full-text step
 * from 9.5 to 3.7 ms p50 at 10,000 actions, the passage asked about found for 14 of 30 queries
 * (12 at 1,000), and the recall bench unchanged (83.3% at 4k/8k/16k, `--concurrency 1`).
 */
export const LEXICAL_MATCH_BUDGET = 500;

/** A query's lexeme (as the full-text configuration stems it) and how many passages hold it. */
export interface TermFrequency {
  lexeme: string;
  passages: number;
}

/**
 * The lexemes a passage must hold one of to be ranked: the query's rarest, as long as the
 * passages they match (the sum of their frequencies, an upper bound) stay within `budget`, and
 * at least the rarest one. Every lexeme still counts in the rank; a passage holding only common
 * ones is the one left out, and the rarity weighting ranks it low anyway. A story smaller than
 * the budget keeps every lexeme. Ties go to the
 * lexeme, so the choice is a function of the frequencies alone.
 */
export function matchingLexemes(
  terms: readonly TermFrequency[],
  budget: number = LEXICAL_MATCH_BUDGET,
): string[] {
  const rarest = [...new Map(terms.map((term) => [term.lexeme, term])).values()].sort(
    (a, b) => a.passages - b.passages || (a.lexeme < b.lexeme ? -1 : a.lexeme > b.lexeme ? 1 : 0),
  );
  const chosen: string[] = [];
  let matched = 0;
  for (const term of rarest) {
    if (chosen.length > 0 && matched + term.passages > budget) break;
    chosen.push(term.lexeme);
    matched += term.passages;
  }
  return chosen;
}

/** A node of the story tree whose current text the passage index does not hold yet. */
export interface PendingPassage extends PassageRef {
  type: NodeType;
}

/**
 * Every node of the story tree, on the path or not (a branch switch or a redo brings it back),
 * whose current text is newer than `indexedVersion`, oldest text first. Erased nodes are left
 * out: what the player erased is not made searchable.
 */
export function passagesToIndex(state: AdventureState, indexedVersion: number): PendingPassage[] {
  const pending: PendingPassage[] = [];
  for (const bucket of state.nodes) {
    for (const id in bucket) {
      const node = bucket[id];
      if (node.textVersion > indexedVersion && !node.erased) {
        pending.push({ actionId: node.id, textVersion: node.textVersion, type: node.type });
      }
    }
  }
  return pending.sort(
    (a, b) => a.textVersion - b.textVersion || (a.actionId < b.actionId ? -1 : 1),
  );
}

export interface FusedPassage {
  actionId: string;
  /** 1-based rank in the lexical (full-text) ranking; null when it did not rank there. */
  lexicalRank: number | null;
  /** 1-based rank in the semantic (embedding) ranking; null when it did not rank there. */
  vectorRank: number | null;
  /** Σ 1/(RRF_K + rank) over the rankings it is in. */
  fused: number;
}

/**
 * Reciprocal rank fusion of two rankings (ids, best first): each id scores 1/(k + rank) per
 * ranking it appears in. Highest fused first; ties go to the better single rank, then the
 * lexical one, then the id, so the order is a function of the rankings alone.
 */
export function fuseRankings(
  lexical: readonly string[],
  semantic: readonly string[],
  k: number = RRF_K,
): FusedPassage[] {
  const fused = new Map<string, FusedPassage>();
  const add = (ids: readonly string[], field: 'lexicalRank' | 'vectorRank') => {
    ids.forEach((actionId, index) => {
      let entry = fused.get(actionId);
      if (!entry) {
        entry = { actionId, lexicalRank: null, vectorRank: null, fused: 0 };
        fused.set(actionId, entry);
      }
      if (entry[field] !== null) return; // a repeated id counts at its best rank only
      entry[field] = index + 1;
      entry.fused += 1 / (k + index + 1);
    });
  };
  add(lexical, 'lexicalRank');
  add(semantic, 'vectorRank');
  const best = (p: FusedPassage) => Math.min(p.lexicalRank ?? Infinity, p.vectorRank ?? Infinity);
  return [...fused.values()].sort(
    (a, b) =>
      b.fused - a.fused ||
      best(a) - best(b) ||
      (a.lexicalRank ?? Infinity) - (b.lexicalRank ?? Infinity) ||
      (a.actionId < b.actionId ? -1 : a.actionId > b.actionId ? 1 : 0),
  );
}
