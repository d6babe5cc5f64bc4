// Many literal keys against one text in one pass (Aho–Corasick over UTF-16 code units).
//
// The seed's matcher runs `includes` once per key, so its cost grows with the number of cards
// times the length of the window: about a second for 25,000 cards against a 16k-token window.
// An automaton over every key reads the window once, whatever the number of keys, and reports
// each key's latest occurrence, which is what per-card scan windows need (a key fires a card
// when its latest hit starts inside that card's window).
//
// A letter is a code unit's index among the units the keys use (an English book's keys use a few
// dozen, a Chinese one's a few thousand); a unit no key uses has no letter, no state has an edge
// on it, and the scan goes straight back to the root. The edges are built in a Map keyed by
// `state * alphabet + letter`, then laid out flat (compressed rows: each state's children in one
// run of two typed arrays, the root's as a direct table), because nearly every state has one
// child and a short run of integers is read several times faster than a Map.

export interface Automaton {
  readonly patterns: readonly string[];
  /** A code unit's letter + 1 (0: no key uses it). */
  readonly letters: Int32Array;
  readonly alphabet: number;
  /** State s's children are childLetter/childTarget[first[s] .. first[s + 1]). */
  readonly first: Int32Array;
  readonly childLetter: Int32Array;
  readonly childTarget: Int32Array;
  /** The root's child by letter, or 0. */
  readonly rootChild: Int32Array;
  readonly fail: Int32Array;
  /** The pattern ending at a state, or -1. */
  readonly output: Int32Array;
  /** The nearest state on the fail chain that ends a pattern, or -1 (dictionary suffix link). */
  readonly outputLink: Int32Array;
}

export function buildAutomaton(patterns: readonly string[]): Automaton {
  const letters = new Int32Array(65536);
  let alphabet = 0;
  for (const pattern of patterns) {
    for (let i = 0; i < pattern.length; i++) {
      const unit = pattern.charCodeAt(i);
      if (letters[unit] === 0) letters[unit] = ++alphabet;
    }
  }
  const A = Math.max(1, alphabet);
  const edges = new Map<number, number>();
  const children: number[][] = [[]];
  const outputList: number[] = [-1];
  let states = 1;
  patterns.forEach((pattern, id) => {
    let state = 0;
    for (let i = 0; i < pattern.length; i++) {
      const letter = letters[pattern.charCodeAt(i)] - 1;
      const key = state * A + letter;
      let next = edges.get(key);
      if (next === undefined) {
        next = states++;
        edges.set(key, next);
        children[state].push(letter);
        children.push([]);
        outputList.push(-1);
      }
      state = next;
    }
    // Patterns arrive deduplicated; an empty one never reaches here (callers drop it).
    outputList[state] = id;
  });
  const fail = new Int32Array(states);
  const output = Int32Array.from(outputList);
  const outputLink = new Int32Array(states).fill(-1);
  // Breadth first: a state's fail target is shallower, so it is final when the state is reached.
  const queue: number[] = [];
  for (const letter of children[0]) queue.push(edges.get(letter)!);
  for (let head = 0; head < queue.length; head++) {
    const state = queue[head];
    for (const letter of children[state]) {
      const child = edges.get(state * A + letter)!;
      let f = state === 0 ? 0 : fail[state];
      let target = edges.get(f * A + letter);
      while (target === undefined && f !== 0) {
        f = fail[f];
        target = edges.get(f * A + letter);
      }
      const failTo = target !== undefined && target !== child ? target : 0;
      fail[child] = failTo;
      outputLink[child] = output[failTo] >= 0 ? failTo : outputLink[failTo];
      queue.push(child);
    }
  }
  const first = new Int32Array(states + 1);
  for (let state = 0; state < states; state++)
    first[state + 1] = first[state] + children[state].length;
  const childLetter = new Int32Array(first[states]);
  const childTarget = new Int32Array(first[states]);
  for (let state = 0; state < states; state++) {
    let at = first[state];
    for (const letter of children[state]) {
      childLetter[at] = letter;
      childTarget[at++] = edges.get(state * A + letter)!;
    }
  }
  const rootChild = new Int32Array(A);
  for (const letter of children[0]) rootChild[letter] = edges.get(letter)!;
  return {
    patterns,
    letters,
    alphabet: A,
    first,
    childLetter,
    childTarget,
    rootChild,
    fail,
    output,
    outputLink,
  };
}

/**
 * Each pattern's latest start in `text` (-1 when absent), and, for the patterns flagged in
 * `wholeWord`, the latest start of an occurrence with a non-word character (or the text's edge)
 * on both sides.
 */
export function latestHits(
  automaton: Automaton,
  text: string,
  wholeWord: Uint8Array | null,
): { any: Int32Array; word: Int32Array | null } {
  const {
    first,
    childLetter,
    childTarget,
    rootChild,
    fail,
    output,
    outputLink,
    patterns,
    letters,
  } = automaton;
  const any = new Int32Array(patterns.length).fill(-1);
  const word = wholeWord ? new Int32Array(patterns.length).fill(-1) : null;
  if (patterns.length === 0) return { any, word };
  let state = 0;
  for (let i = 0; i < text.length; i++) {
    const letter = letters[text.charCodeAt(i)] - 1;
    if (letter < 0) {
      state = 0;
      continue;
    }
    let next = 0;
    for (;;) {
      if (state === 0) {
        next = rootChild[letter];
        break;
      }
      const end = first[state + 1];
      for (let k = first[state]; k < end; k++) {
        if (childLetter[k] === letter) {
          next = childTarget[k];
          break;
        }
      }
      if (next !== 0) break;
      state = fail[state];
    }
    state = next;
    let hit = output[state] >= 0 ? state : outputLink[state];
    while (hit >= 0) {
      const id = output[hit];
      const start = i + 1 - patterns[id].length;
      // Positions only grow, so the last write is the latest start.
      any[id] = start;
      if (word && wholeWord![id] && isWordBounded(text, start, i + 1)) word[id] = start;
      hit = outputLink[hit];
    }
  }
  return { any, word };
}

const WORD_CHAR = /[\p{L}\p{N}_]/u;

/** SillyTavern's whole-word rule, Unicode-aware: non-word characters or an edge on both sides. */
export function isWordBounded(text: string, start: number, end: number): boolean {
  const before = start > 0 ? text[start - 1] : '';
  const after = end < text.length ? text[end] : '';
  return (before === '' || !WORD_CHAR.test(before)) && (after === '' || !WORD_CHAR.test(after));
}
