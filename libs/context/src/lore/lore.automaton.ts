// Many literal keys against one text in one pass (Aho–Corasick over UTF-16 code units).
//
// The seed's matcher runs `includes` once per key, so its cost grows with the number of cards
// times the length of the window: about a second for 25,000 cards against a 16k-token window.
// An automaton over every key reads the window once, whatever the number of keys, and reports
// each key's latest occurrence, which is what per-card scan windows need (a key fires a card
// when its latest hit starts inside that card's window).
//
// The transitions live in one Map keyed by `state * 65536 + codeUnit` (exact in a double for
// fewer than 2^37 states), which keeps a 25,000-card book to a few megabytes instead of one Map
// per state.

const UNIT = 65536;

export interface Automaton {
  readonly patterns: readonly string[];
  /** goto(state, unit); absent = no edge. */
  readonly edges: Map<number, number>;
  readonly fail: Int32Array;
  /** The pattern ending at a state, or -1. */
  readonly output: Int32Array;
  /** The nearest state on the fail chain that ends a pattern, or -1 (dictionary suffix link). */
  readonly outputLink: Int32Array;
  /** For the root: edges by unit for the common case, so the root's fallback costs no Map read. */
  readonly rootEdges: Map<number, number>;
}

export function buildAutomaton(patterns: readonly string[]): Automaton {
  const edges = new Map<number, number>();
  const children: number[][] = [[]];
  const outputList: number[] = [-1];
  let states = 1;
  patterns.forEach((pattern, id) => {
    let state = 0;
    for (let i = 0; i < pattern.length; i++) {
      const key = state * UNIT + pattern.charCodeAt(i);
      let next = edges.get(key);
      if (next === undefined) {
        next = states++;
        edges.set(key, next);
        children[state].push(pattern.charCodeAt(i));
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
  const rootEdges = new Map<number, number>();
  // Breadth first: a state's fail target is shallower, so it is final when the state is reached.
  const queue: number[] = [];
  for (const unit of children[0]) {
    const child = edges.get(unit)!;
    rootEdges.set(unit, child);
    fail[child] = 0;
    queue.push(child);
  }
  for (let head = 0; head < queue.length; head++) {
    const state = queue[head];
    for (const unit of children[state]) {
      const child = edges.get(state * UNIT + unit)!;
      let f = fail[state];
      let target = edges.get(f * UNIT + unit);
      while (target === undefined && f !== 0) {
        f = fail[f];
        target = edges.get(f * UNIT + unit);
      }
      const failTo = target !== undefined && target !== child ? target : 0;
      fail[child] = failTo;
      outputLink[child] = output[failTo] >= 0 ? failTo : outputLink[failTo];
      queue.push(child);
    }
  }
  return { patterns, edges, fail, output, outputLink, rootEdges };
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
  const { edges, fail, output, outputLink, patterns, rootEdges } = automaton;
  const any = new Int32Array(patterns.length).fill(-1);
  const word = wholeWord ? new Int32Array(patterns.length).fill(-1) : null;
  let state = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    let next: number | undefined;
    for (;;) {
      next = state === 0 ? rootEdges.get(unit) : edges.get(state * UNIT + unit);
      if (next !== undefined || state === 0) break;
      state = fail[state];
    }
    state = next ?? 0;
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
