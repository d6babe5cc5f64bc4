// Matching a compiled book against text: one pass of each automaton over the scanned texts,
// then only the cards a hit touches are evaluated (their windows, regex keys, conditions).

import type { CardMiss, StoryCard } from '../context.types';
import type { CardMatch } from '../story-cards.match';
import { latestHits } from './lore.automaton';
import { compileLore, type CompiledCard, type CompiledLore, type KeyRef } from './lore.compile';
import { REGEX_INPUT_CHARS } from './lore.keys';

export interface Scan {
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

export function scan(lore: CompiledLore, parts: readonly string[]): Scan {
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
export function present(key: KeyRef, s: Scan, from: [number, number]): boolean | 'refused' {
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

export function holds(
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
export function candidates(lore: CompiledLore, s: Scan): number[] {
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

export type Outcome =
  { fired: true; keyword: string } | { fired: false; miss?: Omit<CardMiss, 'id' | 'name'> };

export function evaluate(entry: CompiledCard, s: Scan, wholeText: boolean): Outcome {
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
