/* eslint-disable max-lines -- matching, budgeting and rendering a book share the compiled automata and the card records; split, each part would need the others' internals */
// Which story cards fire on a turn, and what of them the prompt gets: the lore's half of the
// context builder, kept apart from the builder so the builder only places what this returns.
//
// For the seed's cards (no field beyond name, keys, entry, type) this is the seed's rule: keys
// split on commas and trimmed, a case-insensitive substring of the whole trigger window, card
// order, one record per card naming its first matching key, a card that does not fit the lore
// budget skipped. Imported books add (see StoryCard): key syntaxes, always-on and inert cards,
// priority, per-card windows, case and whole-word matching, regex keys, secondary-key
// conditions, recursion and depth placement.

import type {
  CardCondition,
  CardMiss,
  CardRecord,
  ConditionMode,
  StoryCard,
  TimedLoreFiring,
} from '../context.types';
import type { CardMatch } from '../story-cards.match';
import { buildAutomaton, latestHits, type Automaton } from './lore.automaton';
import { budgetTokens, trimToFit, type TokenCut } from './lore.trim';
import { REGEX_INPUT_CHARS, isRegexShaped, regexKey, splitKeys } from './lore.keys';
import {
  dependsOnTurn,
  hiddenKeyText,
  renderMacros,
  seeded,
  type MacroContext,
} from './lore.macros';

/** Recursion steps after the story's own scan (SillyTavern's are unbounded; a book's loop is not). */
export const MAX_LORE_RECURSION = 5;
/** Cards the report lists as not fired, at most (a 5,000-card book must not flood it). */
export const MAX_REPORTED_MISSES = 100;
export const DEFAULT_PRIORITY = 100;
const LORE_PREFIX = 'World Lore: ';

type KeyRef =
  | { kind: 'literal'; automaton: 0 | 1; id: number; word: boolean; text: string }
  | { kind: 'regex'; regex: RegExp; text: string }
  | { kind: 'refused'; text: string; problem: string };

interface CompiledCard {
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

/** The trigger window: the texts history could fill, oldest first (the builder's cut). */
export interface LoreWindow {
  parts: readonly string[];
}

export interface LoreTurn {
  /** `{{user}}`. */
  user: string;
  /** Seeds the random macros (see ContextHead.loreSeed). */
  seed: string;
  /** Tokens the live lore may take. */
  budget: number;
  /** Story actions on the path (timed effects count them); absent = no timed effect holds back. */
  storyActions?: number;
  /** Earlier turns' firings of cards with sticky or cooldown (ContextHead.timedLore). */
  timed?: readonly TimedLoreFiring[];
  /** The context budget, which a card budget's shares are of (default: `budget`). */
  contextTokens?: number;
  /** Cuts an entry to fit its card budget (CardBudget.trim); absent, no entry is cut. */
  cut?: Omit<TokenCut, 'countTokens'>;
  countTokens(text: string): number;
}

export interface DepthLore {
  depth: number;
  role: 'system' | 'user' | 'assistant';
  text: string;
  tokens: number;
}

/** An entry placed beside the author's note. */
export interface AuthorsNoteLore {
  edge: 'top' | 'bottom';
  text: string;
  tokens: number;
}

export interface ActivatedLore {
  /** The live "World Lore" lines, in render order. */
  lines: { text: string; tokens: number }[];
  /** Entries placed inside the history. */
  depth: DepthLore[];
  /** Entries placed beside the author's note, in render order. */
  authorsNote: AuthorsNoteLore[];
  /** Tokens of both, as budgeted. */
  tokens: number;
  records: CardRecord[];
  misses: CardMiss[];
  /** The cards sent whose sticky or cooldown starts on this turn (ContextReport.timedLore). */
  timedStarts: string[];
}

function hasTimer(card: StoryCard): boolean {
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

function macroContext(card: StoryCard, turn: Pick<LoreTurn, 'user' | 'seed'>): MacroContext {
  return {
    user: turn.user,
    char: card.charName ?? 'the narrator',
    turnSeed: `${turn.seed}|${card.id}`,
    cardSeed: card.id,
  };
}

/** The line a fired card adds to a lore block. */
export function loreLine(card: StoryCard, turn: Pick<LoreTurn, 'user' | 'seed'>): string {
  return `${LORE_PREFIX}${renderMacros(card.entry, macroContext(card, turn)).trim()}`;
}

/**
 * What a card sends within `room` tokens (the lore budget left): its line (or, placed in the
 * history or beside the note, its bare entry) whole, or cut as its CardBudget allows, or null
 * when it does not fit. A card's own `maxTokens` narrows the room.
 */
function fitEntry(
  card: StoryCard,
  bare: boolean,
  room: number,
  turn: Pick<LoreTurn, 'user' | 'seed' | 'countTokens' | 'contextTokens' | 'cut' | 'budget'>,
): { text: string; tokens: number; trimmed: boolean } | null {
  const body = renderMacros(card.entry, macroContext(card, turn)).trim();
  const wrap = (text: string) => (bare ? text : `${LORE_PREFIX}${text}`);
  const text = wrap(body);
  const tokens = turn.countTokens(text);
  const limit = Math.min(
    room,
    budgetTokens(card.budget?.maxTokens, turn.contextTokens ?? turn.budget),
  );
  if (tokens <= limit) return { text, tokens, trimmed: false };
  if (!turn.cut || !card.budget) return null;
  const overhead = bare ? 0 : turn.countTokens(LORE_PREFIX);
  const tokenCut = turn.cut;
  const cut = trimToFit(body, limit - overhead, card.budget, {
    countTokens: turn.countTokens,
    firstTokens: (t, n) => tokenCut.firstTokens(t, n),
    lastTokens: (t, n) => tokenCut.lastTokens(t, n),
  });
  if (cut === '') return null;
  const trimmed = wrap(cut);
  const cost = turn.countTokens(trimmed);
  return cost <= limit ? { text: trimmed, tokens: cost, trimmed: true } : null;
}

/** Reserved cards (CardBudget.reservedTokens) are budgeted before the others. */
function isReserved(card: StoryCard): boolean {
  return (card.budget?.reservedTokens ?? 0) > 0;
}

/** The budget's order: highest priority first, equal priorities in card order. */
function byPriorityThenOrder(a: CompiledCard, b: CompiledCard): number {
  return (
    (b.card.priority ?? DEFAULT_PRIORITY) - (a.card.priority ?? DEFAULT_PRIORITY) ||
    a.index - b.index
  );
}

/** The render order: lowest priority first (the highest closest to the story), then card order. */
function inRenderOrder(a: CompiledCard, b: CompiledCard): number {
  return (
    (a.card.priority ?? DEFAULT_PRIORITY) - (b.card.priority ?? DEFAULT_PRIORITY) ||
    a.index - b.index
  );
}

/**
 * The always-on cards of the static block, highest priority first into `budget`, rendered
 * lowest first (the highest sits closest to the story), as one text.
 */
export function staticLore(
  cards: readonly StoryCard[],
  turn: Pick<LoreTurn, 'user' | 'seed' | 'countTokens' | 'budget' | 'contextTokens' | 'cut'>,
): { text: string; records: CardRecord[] } {
  const chosen = cards
    .map((card, index) => ({ card, index, primary: [], conditions: [] }) as CompiledCard)
    .filter(({ card }) => isStaticCard(card))
    .sort(
      (a, b) =>
        Number(isReserved(b.card)) - Number(isReserved(a.card)) || byPriorityThenOrder(a, b),
    );
  if (chosen.length === 0) return { text: '', records: [] };
  const kept: { entry: CompiledCard; line: string }[] = [];
  const records: CardRecord[] = [];
  let spent = 0;
  for (const entry of chosen) {
    const fit = fitEntry(entry.card, false, turn.budget - spent, turn);
    if (fit) {
      kept.push({ entry, line: fit.text });
      spent += fit.tokens;
    }
    records.push({
      id: entry.card.id,
      name: entry.card.name,
      keyword: '',
      included: fit !== null,
      reason: 'always',
      placement: 'static',
      ...(fit?.trimmed && { trimmed: true }),
    });
  }
  kept.sort((a, b) => inRenderOrder(a.entry, b.entry));
  return { text: kept.map((k) => k.line).join('\n'), records };
}

// ----- Compiling a book: every literal key into one of two automata -----

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
 * The book compiled for matching. Cached by the array, then by content (the worker rebuilds the
 * projection's card list every turn; the book itself rarely changes), so a turn pays the build
 * only when a key changed.
 */
export function compileLore(cards: readonly StoryCard[]): CompiledLore {
  const byArray = compiledBooks.get(cards);
  if (byArray) return byArray;
  // The projection copies its card list on every event but keeps the card objects: the same
  // objects in the same order are the same book, found without a fingerprint.
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

// ----- Matching -----

interface Scan {
  text: string;
  lowered: string;
  /** Start of each part in `text` and in `lowered`, oldest first. */
  starts: number[];
  lowerStarts: number[];
  hits: [
    { any: Int32Array; word: Int32Array | null },
    { any: Int32Array; word: Int32Array | null },
  ];
}

const PART_SEPARATOR = '\n\n';

function scan(lore: CompiledLore, parts: readonly string[]): Scan {
  const starts: number[] = [];
  const lowerStarts: number[] = [];
  const lowerParts = parts.map((part) => part.toLowerCase());
  let at = 0;
  let lowerAt = 0;
  parts.forEach((part, i) => {
    starts.push(at);
    lowerStarts.push(lowerAt);
    at += part.length + PART_SEPARATOR.length;
    lowerAt += lowerParts[i].length + PART_SEPARATOR.length;
  });
  const text = parts.join(PART_SEPARATOR);
  const lowered = lowerParts.join(PART_SEPARATOR);
  const hits: Scan['hits'] = [
    latestHits(lore.automata[0], lowered, lore.wholeWord[0]),
    lore.automata[1].patterns.length > 0
      ? latestHits(lore.automata[1], text, lore.wholeWord[1])
      : { any: new Int32Array(0), word: null },
  ];
  return { text, lowered, starts, lowerStarts, hits };
}

/** Where a card's window starts in the raw and the lower-cased text. */
function windowStart(card: StoryCard, s: Scan): [number, number] {
  const actions = card.scan?.actions;
  const chars = card.scan?.chars;
  let raw = 0;
  let lower = 0;
  if (actions !== undefined && actions < s.starts.length) {
    const part = s.starts.length - Math.max(0, actions);
    raw = part >= s.starts.length ? s.text.length : s.starts[part];
    lower = part >= s.starts.length ? s.lowered.length : s.lowerStarts[part];
  }
  if (chars !== undefined) {
    raw = Math.max(raw, s.text.length - chars);
    lower = Math.max(lower, s.lowered.length - chars);
  }
  return [raw, lower];
}

/** Whether `key` occurs at or after `from` (raw, lower) in the scanned text. */
function present(key: KeyRef, s: Scan, from: [number, number]): boolean | 'refused' {
  if (key.kind === 'refused') return 'refused';
  if (key.kind === 'regex') {
    const start = Math.max(from[0], s.text.length - REGEX_INPUT_CHARS);
    key.regex.lastIndex = 0;
    return key.regex.test(s.text.slice(start));
  }
  const hits = s.hits[key.automaton];
  const latest = key.word ? hits.word![key.id] : hits.any[key.id];
  return latest >= (key.automaton === 1 ? from[0] : from[1]);
}

function holds(
  condition: CompiledCard['conditions'][number],
  s: Scan,
  from: [number, number],
): boolean {
  if (condition.keys.length === 0) return true;
  const found = condition.keys.map((key) => present(key, s, from) === true);
  switch (condition.mode) {
    case 'anyOf':
      return found.some(Boolean);
    case 'allOf':
      return found.every(Boolean);
    case 'noneOf':
      return !found.some(Boolean);
    case 'notAllOf':
      return !found.every(Boolean);
  }
}

/**
 * The cards a scan could fire, in card order: those with a primary key present anywhere in it,
 * and those with a regex key. Only these are evaluated, so a turn costs the window and the
 * cards it touches, not the whole book.
 */
function candidates(lore: CompiledLore, s: Scan): number[] {
  const seen = new Uint8Array(lore.cards.length);
  const found: number[] = [];
  const add = (index: number) => {
    if (!seen[index]) {
      seen[index] = 1;
      found.push(index);
    }
  };
  for (const automaton of [0, 1] as const) {
    const any = s.hits[automaton].any;
    for (let p = 0; p < any.length; p++) {
      if (any[p] >= 0) for (const index of lore.cardsByPattern[automaton][p]) add(index);
    }
  }
  for (const index of lore.regexCards) add(index);
  return found.sort((a, b) => a - b);
}

type Outcome =
  { fired: true; keyword: string } | { fired: false; miss?: Omit<CardMiss, 'id' | 'name'> };

function evaluate(entry: CompiledCard, s: Scan, wholeText: boolean): Outcome {
  const from: [number, number] = wholeText ? [0, 0] : windowStart(entry.card, s);
  let keyword: string | null = null;
  let refused: string | null = null;
  for (const key of entry.primary) {
    const hit = present(key, s, from);
    if (hit === 'refused') {
      refused ??= `${key.text}: ${(key as { problem: string }).problem}`;
      continue;
    }
    if (hit) {
      keyword =
        key.kind === 'literal' && !entry.card.caseSensitive ? key.text.toLowerCase() : key.text;
      break;
    }
  }
  if (keyword === null) {
    if (refused) return { fired: false, miss: { reason: 'regex', detail: refused } };
    if (
      !wholeText &&
      from[0] > 0 &&
      entry.primary.some((key) => present(key, s, [0, 0]) === true)
    ) {
      return { fired: false, miss: { reason: 'window' } };
    }
    return { fired: false };
  }
  for (const condition of entry.conditions) {
    if (!holds(condition, s, from)) {
      return { fired: false, miss: { reason: 'condition', detail: `${condition.mode} not met` } };
    }
  }
  return { fired: true, keyword };
}

/**
 * The cards `text` mentions by the lore's own key rules (each card's key syntax, case and
 * whole-word matching, regex keys, secondary-key conditions; disabled and inert cards never),
 * over the whole text: no scan windows, chance, groups, timers or budget, which belong to a
 * turn's prompt. In card order, each naming the key that matched (lower-cased unless the card is
 * case-sensitive). Keys in `ignore` (lower-cased, trimmed) never count. The memory bank's cast
 * brief runs it, so a summary is told who is in a stretch by the rule the prompt uses.
 */
export function mentionedCards(
  cards: readonly StoryCard[],
  text: string,
  ignore: ReadonlySet<string> = new Set(),
): CardMatch[] {
  if (cards.length === 0) return [];
  const lore = compileLore(cards);
  const s = scan(lore, [text]);
  const whole: [number, number] = [0, 0];
  const matched: CardMatch[] = [];
  for (const index of candidates(lore, s)) {
    const entry = lore.cards[index];
    const key = entry.primary.find(
      (k) => !ignore.has(k.text.trim().toLowerCase()) && present(k, s, whole) === true,
    );
    if (!key || !entry.conditions.every((c) => holds(c, s, whole))) continue;
    matched.push({
      id: entry.card.id,
      name: entry.card.name,
      keyword:
        key.kind === 'literal' && !entry.card.caseSensitive ? key.text.toLowerCase() : key.text,
      entry: entry.card.entry,
    });
  }
  return matched;
}

interface Fired {
  entry: CompiledCard;
  keyword: string;
  reason?: CardRecord['reason'];
  step?: number;
}

/**
 * The cards that fire on `window`, budgeted: highest priority first into `turn.budget`, a card
 * that does not fit skipped (a later, smaller one may fit), rendered lowest priority first.
 * Static cards are not here (see `staticLore`).
 */
// eslint-disable-next-line max-lines-per-function -- one pass over the fired cards in budget order (conditions, timing, chance, groups, recursion, budget), each step reading the one before; split, the pass's shared state would travel as arguments
export function activateLore(
  cards: readonly StoryCard[],
  window: LoreWindow,
  turn: LoreTurn,
): ActivatedLore {
  const empty: ActivatedLore = {
    lines: [],
    depth: [],
    authorsNote: [],
    tokens: 0,
    records: [],
    misses: [],
    timedStarts: [],
  };
  if (cards.length === 0) return empty;
  const lore = compileLore(cards);
  const fired: Fired[] = [];
  const done = new Set<CompiledCard>();
  const misses: CardMiss[] = [];
  const story = scan(lore, window.parts);
  const clock = timedClock(lore, turn.timed);
  /** Whether a card that would fire now is still cooling down (reported as a miss). */
  const cooling = (entry: CompiledCard): boolean => {
    if (clock.get(entry) !== 'cooldown') return false;
    if (misses.length < MAX_REPORTED_MISSES) {
      misses.push({ id: entry.card.id, name: entry.card.name, reason: 'cooldown' });
    }
    return true;
  };

  // Sticky cards first: they stay whatever the story says (SillyTavern's sticky).
  for (const [entry, state] of clock) {
    if (state !== 'sticky') continue;
    fired.push({ entry, keyword: '', reason: 'sticky' });
    done.add(entry);
  }
  for (const index of lore.alwaysCards) {
    const entry = lore.cards[index];
    if (done.has(entry) || cooling(entry)) continue;
    fired.push({ entry, keyword: '', reason: 'always' });
    done.add(entry);
  }
  for (const index of candidates(lore, story)) {
    const entry = lore.cards[index];
    if (done.has(entry) || (entry.card.recursion?.delayLevel ?? 0) > 0) continue;
    const outcome = evaluate(entry, story, false);
    if (outcome.fired) {
      if (cooling(entry)) continue;
      fired.push({ entry, keyword: outcome.keyword });
      done.add(entry);
    } else if (outcome.miss && misses.length < MAX_REPORTED_MISSES) {
      misses.push({ id: entry.card.id, name: entry.card.name, ...outcome.miss });
    }
  }

  // Recursion: the entries just fired are scanned for the keys of the cards that have not.
  let feeding = fired.filter((f) => f.entry.card.recursion?.feedsOthers);
  for (let step = 1; step <= MAX_LORE_RECURSION && feeding.length > 0; step++) {
    const buffer = scan(
      lore,
      feeding.map((f) => {
        const rendered = renderMacros(f.entry.card.entry, macroContext(f.entry.card, turn));
        const hidden = hiddenKeyText(f.entry.card.entry);
        return hidden ? `${rendered}\n${hidden}` : rendered;
      }),
    );
    const next: Fired[] = [];
    for (const index of candidates(lore, buffer)) {
      const entry = lore.cards[index];
      const recursion = entry.card.recursion;
      if (done.has(entry) || !recursion?.triggeredByOthers || entry.primary.length === 0) continue;
      if ((recursion.delayLevel ?? 0) > step) continue;
      const outcome = evaluate(entry, buffer, true);
      if (outcome.fired && !cooling(entry)) {
        next.push({ entry, keyword: outcome.keyword, reason: 'recursion', step });
        done.add(entry);
      }
    }
    fired.push(...next);
    feeding = next.filter((f) => f.entry.card.recursion?.feedsOthers);
  }

  // Timed effects, from the path's own length.
  const timely = fired.filter((f) => {
    const delay = f.reason === 'sticky' ? 0 : (f.entry.card.timing?.delay ?? 0);
    if (turn.storyActions === undefined || turn.storyActions >= delay) return true;
    if (misses.length < MAX_REPORTED_MISSES) {
      misses.push({
        id: f.entry.card.id,
        name: f.entry.card.name,
        reason: 'delay',
        detail: `fires from action ${delay}; the story has ${turn.storyActions}`,
      });
    }
    return false;
  });
  // Chance and inclusion groups, drawn from the turn's seed: the same turn draws the same.
  const kept = drawChances(timely, turn.seed, misses);

  // Budget: highest priority first; equal priorities in card order (the seed's order).
  // Reserved cards first (NovelAI's reservations displace the others), then the rest.
  const ranked = kept
    .slice()
    .sort(
      (a, b) =>
        Number(isReserved(b.entry.card)) - Number(isReserved(a.entry.card)) ||
        byPriorityThenOrder(a.entry, b.entry),
    );
  const placed: { fired: Fired; text: string; tokens: number }[] = [];
  const included = new Set<Fired>();
  const trimmed = new Set<Fired>();
  let tokens = 0;
  for (const f of ranked) {
    const bare = (f.entry.card.placement?.kind ?? 'lore') !== 'lore';
    const fit = fitEntry(f.entry.card, bare, turn.budget - tokens, turn);
    if (fit) {
      placed.push({ fired: f, text: fit.text, tokens: fit.tokens });
      included.add(f);
      if (fit.trimmed) trimmed.add(f);
      tokens += fit.tokens;
    }
  }
  // Render lowest priority first, so the highest sits closest to the story's end.
  placed.sort((a, b) => inRenderOrder(a.fired.entry, b.fired.entry));
  const lines: ActivatedLore['lines'] = [];
  const depth: DepthLore[] = [];
  const authorsNote: AuthorsNoteLore[] = [];
  for (const k of placed) {
    const placement = k.fired.entry.card.placement;
    if (placement?.kind === 'authorsNote') {
      authorsNote.push({ edge: placement.edge ?? 'bottom', text: k.text, tokens: k.tokens });
    } else if (placement?.kind === 'depth') {
      depth.push({
        depth: Math.max(0, placement.depth ?? 4),
        role: placement.role ?? 'system',
        text: k.text,
        tokens: k.tokens,
      });
    } else {
      lines.push({ text: k.text, tokens: k.tokens });
    }
  }

  // Records in firing order (for the seed's cards: card order), as the seed's report had them.
  const records: CardRecord[] = kept
    .slice()
    .sort((a, b) => (a.step ?? 0) - (b.step ?? 0) || a.entry.index - b.entry.index)
    .map((f) => {
      const record: CardRecord = {
        id: f.entry.card.id,
        name: f.entry.card.name,
        keyword: f.keyword,
        included: included.has(f),
      };
      if (f.reason) record.reason = f.reason;
      if (f.step !== undefined) record.step = f.step;
      if (trimmed.has(f)) record.trimmed = true;
      const kind = f.entry.card.placement?.kind;
      if (kind === 'depth' || kind === 'authorsNote') record.placement = kind;
      return record;
    });
  const timedStarts = placed
    .filter((k) => k.fired.reason !== 'sticky' && hasTimer(k.fired.entry.card))
    .map((k) => k.fired.entry.card.id);
  return { lines, depth, authorsNote, tokens, records, misses, timedStarts };
}

/**
 * Each compiled card a timed effect holds on this turn: `sticky` while the story is at most
 * `sticky` actions past its latest firing, then `cooldown` for `cooldown` more. Only cards with
 * a timer and a firing on the path are looked up, so a book without timers pays nothing.
 */
function timedClock(
  lore: CompiledLore,
  timed: readonly TimedLoreFiring[] | undefined,
): Map<CompiledCard, 'sticky' | 'cooldown'> {
  const clock = new Map<CompiledCard, 'sticky' | 'cooldown'>();
  if (!timed || timed.length === 0) return clock;
  const latest = new Map<string, number>();
  for (const { cardId, ago } of timed) {
    if (ago >= 1 && ago < (latest.get(cardId) ?? Infinity)) latest.set(cardId, ago);
  }
  for (const entry of lore.cards) {
    const ago = latest.get(entry.card.id);
    if (ago === undefined || !hasTimer(entry.card)) continue;
    const sticky = entry.card.timing?.sticky ?? 0;
    const cooldown = entry.card.timing?.cooldown ?? 0;
    if (ago <= sticky) clock.set(entry, 'sticky');
    else if (ago <= sticky + cooldown) clock.set(entry, 'cooldown');
  }
  return clock;
}

/**
 * The fired cards that survive their probability draw and their inclusion groups. Draws are
 * `seeded(turn seed, card id, purpose)`: independent of which other cards fired, so one card's
 * edit does not re-roll another's.
 */
function drawChances(fired: Fired[], seed: string, misses: CardMiss[]): Fired[] {
  const miss = (f: Fired, reason: CardMiss['reason'], detail?: string) => {
    if (misses.length < MAX_REPORTED_MISSES) {
      misses.push({
        id: f.entry.card.id,
        name: f.entry.card.name,
        reason,
        ...(detail && { detail }),
      });
    }
  };
  const lucky = fired.filter((f) => {
    const p = f.entry.card.probability ?? 100;
    // A sticky card drew when it fired; it does not draw again while it stays.
    if (p >= 100 || f.reason === 'sticky') return true;
    const kept = seeded(`${seed}|${f.entry.card.id}|probability`) * 100 < p;
    if (!kept) miss(f, 'probability', `${p}%`);
    return kept;
  });
  const groups = new Map<string, Fired[]>();
  for (const f of lucky) {
    for (const name of f.entry.card.group?.names ?? []) {
      const members = groups.get(name) ?? [];
      members.push(f);
      groups.set(name, members);
    }
  }
  if (groups.size === 0) return lucky;
  const losers = new Set<Fired>();
  for (const [name, members] of groups) {
    if (members.length < 2) continue;
    const overrides = members.filter((f) => f.entry.card.group?.override);
    const sticky = members.find((f) => f.reason === 'sticky');
    let winner: Fired;
    if (sticky) {
      // SillyTavern: a sticky member keeps its group.
      winner = sticky;
    } else if (overrides.length > 0) {
      winner = overrides.sort((a, b) => byPriorityThenOrder(a.entry, b.entry))[0];
    } else {
      const weights = members.map((f) => Math.max(0, f.entry.card.group?.weight ?? 100));
      const total = weights.reduce((sum, w) => sum + w, 0);
      let roll = seeded(`${seed}|group|${name}`) * total;
      winner = members[members.length - 1];
      for (let i = 0; i < members.length; i++) {
        roll -= weights[i];
        if (roll < 0) {
          winner = members[i];
          break;
        }
      }
    }
    for (const f of members) if (f !== winner) losers.add(f);
  }
  for (const f of losers) miss(f, 'group', f.entry.card.group!.names.join(', '));
  return lucky.filter((f) => !losers.has(f));
}
