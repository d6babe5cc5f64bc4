// Compiling a book for matching: every literal key into one of two automata (case-insensitive
// and case-sensitive), regex keys apart; cached by the card array and by content, so a turn pays
// the build only when a key changed. And the card orders activation and the static block share.

import type { CardCondition, ConditionMode, StoryCard } from '../context.types';
import { buildAutomaton, type Automaton } from './lore.automaton';
import { isRegexShaped, regexKey, splitKeys } from './lore.keys';
import { dependsOnTurn } from './lore.macros';

export const DEFAULT_PRIORITY = 100;

export type KeyRef =
  | { kind: 'literal'; automaton: 0 | 1; id: number; word: boolean; text: string }
  | { kind: 'regex'; regex: RegExp; text: string }
  | { kind: 'refused'; text: string; problem: string };

export interface CompiledCard {
  card: StoryCard;
  index: number;
  primary: KeyRef[];
  conditions: { mode: ConditionMode; keys: KeyRef[] }[];
}

export interface CompiledLore {
  /** The card objects compiled, as given: a later turn holding the same objects reuses this. */
  source: readonly StoryCard[];
  cards: CompiledCard[];
  /** Per automaton, per pattern: the compiled cards (indexes into `cards`) with it as a primary key. */
  cardsByPattern: [number[][], number[][]];
  /** Cards with a regex (or refused) primary key: always evaluated. */
  regexCards: number[];
  /** Always-on cards that are not static. */
  alwaysCards: number[];
  /** 0: case-insensitive keys (matched against the lower-cased text); 1: case-sensitive. */
  automata: [Automaton, Automaton];
  wholeWord: [Uint8Array | null, Uint8Array | null];
}

export function hasTimer(card: StoryCard): boolean {
  return (card.timing?.sticky ?? 0) > 0 || (card.timing?.cooldown ?? 0) > 0;
}

/** An always-on card that renders the same every turn: the static block's. */
export function isStaticCard(card: StoryCard): boolean {
  return (
    card.activation === 'always' &&
    (card.probability ?? 100) >= 100 &&
    card.group === undefined &&
    card.timing?.delay === undefined &&
    !hasTimer(card) &&
    card.enabled !== false &&
    (card.placement?.kind ?? 'lore') === 'lore' &&
    !dependsOnTurn(card.entry)
  );
}

/** The budget's order: highest priority first, equal priorities in card order. */
export function byPriorityThenOrder(a: CompiledCard, b: CompiledCard): number {
  return (
    (b.card.priority ?? DEFAULT_PRIORITY) - (a.card.priority ?? DEFAULT_PRIORITY) ||
    a.index - b.index
  );
}

/** The render order: lowest priority first (the highest closest to the story), then card order. */
export function inRenderOrder(a: CompiledCard, b: CompiledCard): number {
  return (
    (a.card.priority ?? DEFAULT_PRIORITY) - (b.card.priority ?? DEFAULT_PRIORITY) ||
    a.index - b.index
  );
}

const compiledBooks = new WeakMap<readonly StoryCard[], CompiledLore>();
const recentBooks = new Map<string, CompiledLore>();
const RECENT_BOOKS = 16;

/** What compiling depends on, as one string: equal for the same book on the next turn. */
function fingerprint(cards: readonly StoryCard[]): string {
  const parts: string[] = [];
  for (const c of cards) {
    parts.push(
      c.id,
      c.keys,
      c.keySyntax ?? '',
      c.caseSensitive ? '1' : '0',
      c.wholeWords ? '1' : '0',
      c.enabled === false ? '0' : '1',
      c.activation ?? '',
      c.conditions ? JSON.stringify(c.conditions) : '',
      // Whether an always-on card sits in the static block (its entry, chance and group decide).
      isStaticCard(c) ? 's' : '',
    );
  }
  return parts.join('\u0000');
}

/**
 * The book compiled for matching. Cached by the array (the projection keeps its card list from
 * turn to turn until a card event changes it, so a turn on an unchanged book finds it here
 * however many adventures the process serves), then by content (the book itself rarely
 * changes), so a turn pays the build only when a key changed.
 */
export function compileLore(cards: readonly StoryCard[]): CompiledLore {
  const byArray = compiledBooks.get(cards);
  if (byArray) return byArray;
  // A new list of the same card objects (a copy of the projection's): the same objects in the
  // same order are the same book, found without a fingerprint.
  for (const recent of recentBooks.values()) {
    if (sameObjects(recent.source, cards)) {
      compiledBooks.set(cards, recent);
      return recent;
    }
  }
  const key = fingerprint(cards);
  let compiled = recentBooks.get(key);
  if (compiled) {
    recentBooks.delete(key);
    // Same keys, but new objects that may differ in what the fingerprint leaves out (the entry,
    // priority, timing, placement…): the matching is reused, the cards are these.
    compiled = rebound(compiled, cards);
  } else {
    compiled = compileFresh(cards);
    if (recentBooks.size >= RECENT_BOOKS) recentBooks.delete(recentBooks.keys().next().value!);
  }
  recentBooks.set(key, compiled);
  compiledBooks.set(cards, compiled);
  return compiled;
}

function rebound(compiled: CompiledLore, cards: readonly StoryCard[]): CompiledLore {
  return {
    ...compiled,
    source: cards,
    // One literal per card (a spread of each entry costs several times as much at 25,000).
    cards: compiled.cards.map((entry) => ({
      card: cards[entry.index],
      index: entry.index,
      primary: entry.primary,
      conditions: entry.conditions,
    })),
  };
}

function sameObjects(a: readonly StoryCard[], b: readonly StoryCard[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function compileFresh(cards: readonly StoryCard[]): CompiledLore {
  const patterns: [string[], string[]] = [[], []];
  const ids: [Map<string, number>, Map<string, number>] = [new Map(), new Map()];
  const word: [number[], number[]] = [[], []];
  const ref = (key: string, card: StoryCard): KeyRef => {
    if (isRegexShaped(key)) {
      const compiled = regexKey(key);
      return compiled.ok
        ? { kind: 'regex', regex: compiled.regex, text: key }
        : { kind: 'refused', text: key, problem: compiled.problem };
    }
    const automaton = card.caseSensitive ? 1 : 0;
    const text = automaton === 1 ? key : key.toLowerCase();
    let id = ids[automaton].get(text);
    if (id === undefined) {
      id = patterns[automaton].length;
      patterns[automaton].push(text);
      ids[automaton].set(text, id);
    }
    // SillyTavern: whole-word applies to single-word keys; a key with a space stays a substring.
    const wholeWord = card.wholeWords === true && !/\s/.test(key.trim());
    if (wholeWord) word[automaton].push(id);
    return { kind: 'literal', automaton, id, word: wholeWord, text: key };
  };
  const compiled: CompiledCard[] = [];
  cards.forEach((card, index) => {
    if (card.enabled === false || card.activation === 'inert') return;
    const syntax = card.keySyntax ?? 'plain';
    compiled.push({
      card,
      index,
      primary:
        card.activation === 'always'
          ? []
          : splitKeys(card.keys, syntax).map((key) => ref(key, card)),
      conditions: (card.conditions ?? []).map((condition: CardCondition) => ({
        mode: condition.mode,
        keys: condition.keys
          .map((key) => (syntax === 'aid' ? key : key.trim()))
          .filter((key) => key.trim() !== '')
          .map((key) => ref(key, card)),
      })),
    });
  });
  const cardsByPattern: [number[][], number[][]] = [
    patterns[0].map(() => []),
    patterns[1].map(() => []),
  ];
  const regexCards: number[] = [];
  const alwaysCards: number[] = [];
  compiled.forEach((entry, index) => {
    if (entry.card.activation === 'always') {
      if (!isStaticCard(entry.card)) alwaysCards.push(index);
      return;
    }
    let regex = false;
    for (const key of entry.primary) {
      if (key.kind === 'literal') {
        const list = cardsByPattern[key.automaton][key.id];
        if (list[list.length - 1] !== index) list.push(index);
      } else regex = true;
    }
    if (regex) regexCards.push(index);
  });
  const flags = (automaton: 0 | 1): Uint8Array | null => {
    if (word[automaton].length === 0) return null;
    const array = new Uint8Array(patterns[automaton].length);
    for (const id of word[automaton]) array[id] = 1;
    return array;
  };
  return {
    source: cards,
    cards: compiled,
    cardsByPattern,
    regexCards,
    alwaysCards,
    automata: [buildAutomaton(patterns[0]), buildAutomaton(patterns[1])],
    wholeWord: [flags(0), flags(1)],
  };
}
