import {
  assembleContextSync,
  buildContext,
  cacheableTokens,
  memoryReader,
  stableBlockTokens,
  stableStart,
  tokenizer,
  type BuiltContext,
  type ContextHead,
  type WindowAction,
} from './index';
import {
  aCard,
  aContextHead,
  aNarrativeState,
  aStory,
  anAction,
  someMemories,
  storyTokensOf,
} from './testing';

const separator = tokenizer('cl100k_base').count('\n\n');
const story = aStory(400, { seed: 5 });

function stableHead(path: WindowAction[], overrides: Partial<ContextHead> = {}): ContextHead {
  return {
    ...aContextHead({
      settings: { contextTokenBudget: 4096, historyMode: 'stable' },
      authorsNote: 'Keep it bleak.',
      narrativeState: aNarrativeState(path.length),
      totalActions: path.length,
      storyTokens: storyTokensOf(path),
    }),
    ...overrides,
  };
}

function build(path: WindowAction[], overrides: Partial<ContextHead> = {}): BuiltContext {
  return assembleContextSync(stableHead(path, overrides), memoryReader(path));
}

/** The index on the path of the history's first action. */
function firstIncluded(path: WindowAction[], built: BuiltContext): number {
  return path.length - built.report.history.included;
}

/** The story offset (tokens + separators) at which action `index` starts. */
function offsetOf(path: WindowAction[], index: number): number {
  return path.slice(0, index).reduce((sum, a) => sum + a.tokens + separator, 0);
}

describe('stable history', () => {
  it('starts only at block starts counted from the story start, and moves rarely', () => {
    // Given a story growing a turn (a player action and a narration) at a time past its
    // 4,096-token budget, while the live state changes size every turn
    const block = stableBlockTokens(4096);
    const starts: number[] = [];
    for (let n = 3; n <= story.length; n += 2) {
      // When each turn's prompt is built
      const path = story.slice(0, n);
      const built = build(path);
      const start = firstIncluded(path, built);
      starts.push(start);
      // Then the first action is the story's first or the first whose offset enters a new block
      if (start > 0) {
        const before = Math.floor(offsetOf(path, start - 1) / block);
        expect(Math.floor(offsetOf(path, start) / block)).toBeGreaterThan(before);
      }
      // and the history stays within its budget
      expect(built.report.cache.historyFill).toBeLessThanOrEqual(1);
    }
    // and the start never moves back, and moves far less often than once a turn
    const moves = starts.filter((s, i) => i > 0 && s !== starts[i - 1]).length;
    for (let i = 1; i < starts.length; i++) expect(starts[i]).toBeGreaterThanOrEqual(starts[i - 1]);
    expect(moves).toBeGreaterThan(3);
    expect(moves).toBeLessThan(starts.filter((s) => s > 0).length / 5);
  });

  it("repeats the previous turn's prompt up to its history's end until the start moves", () => {
    let repeated = 0;
    let previous: BuiltContext | null = null;
    for (let n = 101; n <= 301; n += 2) {
      const path = story.slice(0, n);
      const built = build(path);
      if (previous) {
        const history = previous.report.sections.find((s) => s.label === 'history')!.text;
        const samePrefix = built.story.startsWith(`${history}\n\n`);
        const sameStart =
          firstIncluded(story.slice(0, n - 2), previous) === firstIncluded(path, built);
        // Then the story grows by appending whenever the start stays, and only then
        expect(samePrefix).toBe(sameStart);
        if (samePrefix) repeated++;
      }
      previous = built;
    }
    expect(repeated).toBeGreaterThan(80);
  });

  it('is decided by the path and the budget alone, however much of the story was read', () => {
    // Given the same story read through the covering window and read whole
    const path = story.slice(0, 333);
    const head = stableHead(path);
    const covering = assembleContextSync(head, memoryReader(path));
    const whole = buildContext({ ...head, window: path });
    // Then both send the same bytes
    expect(whole.story).toBe(covering.story);
    expect(whole.report.cards).toEqual(covering.report.cards);
  });

  it('triggers cards on the text its history covers, not on what it dropped', () => {
    // Given a word that only the story's first actions use, and one in the newest
    const path = [
      anAction('s0', 'The kraken surfaced once, long ago.', 'start'),
      ...story.slice(1, 300),
      anAction('s300', 'A gull lands on the mast.', 'ai'),
    ];
    const built = build(path, {
      storyCards: [aCard('k', 'kraken', 'The kraken sleeps.'), aCard('g', 'gull', 'Gulls.')],
    });
    // Then only the card the window's text names triggers
    expect(firstIncluded(path, built)).toBeGreaterThan(0);
    expect(built.report.cards.map((c) => c.id)).toEqual(['g']);
  });

  it("puts the author's note right after the history and lists memories in a fixed order", () => {
    const path = story.slice(0, 50);
    const memories = someMemories(['Pinned fact.', 'Second.', 'Third.']);
    const reordered = { used: [memories.used[2], memories.used[0], memories.used[1]] };
    const a = build(path, { memories });
    const b = build(path, { memories: reordered });
    const labels = a.report.sections.map((s) => s.label);
    expect(labels.slice(labels.indexOf('history'), labels.indexOf('history') + 2)).toEqual([
      'history',
      'authors_note',
    ]);
    // Then the similarity order of the retrieval does not move the section's bytes
    expect(a.story).toBe(b.story);
    expect(a.story).toContain('Memories:\n- Pinned fact.\n- Second.\n- Third.');
  });

  it('slides, as the seed, when not even one block start fits', () => {
    // Given a budget whose history is smaller than one newest action
    const path = [...story.slice(0, 20), anAction('big', 'word '.repeat(3000), 'ai')];
    const built = build(path, {
      settings: { ...stableHead(path).settings, contextTokenBudget: 1024 },
    });
    expect(built.report.history.oldest_truncated).toBe(true);
    expect(built.report.cache.blockAligned).toBe(false);
  });

  it("reports the next request's expected cached share from the shared prefix", () => {
    const path = story.slice(0, 120);
    const built = build(path);
    const { cache } = built.report;
    expect(cache.historyMode).toBe('stable');
    expect(cache.expectedCachedTokens).toBe(cacheableTokens(cache.stablePrefixTokens));
    expect(cache.expectedCachedShare).toBeCloseTo(
      cache.expectedCachedTokens / built.report.tokens.total,
      6,
    );
    expect(cache.expectedCachedShare).toBeGreaterThan(0.5);
  });
});

describe('the bytes after the history', () => {
  it('change only with their inputs: a turn that only grows the story repeats them exactly', () => {
    // Given two turns between which only the story grew, with the same memories retrieved in
    // another order, the same state built in another insertion order, and the same cards
    const memories = someMemories(['Pinned fact.', 'The ledger is missing.', 'Mira lied.']);
    const state = aNarrativeState(3);
    const reversed = {
      ...state,
      entities: Object.fromEntries(Object.entries(state.entities).reverse()),
    };
    const common = {
      storySummary: 'Ada came home.',
      storyCards: [aCard('m', 'Mira', 'Mira smuggles oil.'), aCard('t', 'Tobias', 'Old Tobias.')],
      scriptMemory: { frontMemory: 'The wick hisses.' },
    };
    const path = story.slice(0, 151);
    const a = build(path, { ...common, memories, narrativeState: state });
    const b = build(story.slice(0, 153), {
      ...common,
      memories: { used: [...memories.used].reverse() },
      narrativeState: reversed,
    });
    // When the prompts are compared after their histories
    const tail = (built: BuiltContext) =>
      built.report.sections
        .slice(built.report.sections.findIndex((s) => s.label === 'history') + 1)
        .map((s) => `${s.label}:${s.text}`);
    // Then every section after the history is byte-identical, in the same order
    expect(firstIncluded(path, a)).toBe(firstIncluded(story.slice(0, 153), b));
    expect(tail(b)).toEqual(tail(a));
    expect(tail(a).map((s) => s.split(':')[0])).toEqual([
      'authors_note',
      'story_summary',
      'world_lore',
      'used_memories',
      'narrative_state',
      'front_memory',
      'length_hint',
      'state_reminder',
    ]);
  });
});

describe('stableStart', () => {
  it('takes the oldest block start whose suffix fits, counted from the story start', () => {
    // Given actions of 10 tokens in blocks of 25: blocks start at actions 0, 3 (offset 30), 5 (50)
    const costs = [10, 10, 10, 10, 10, 10, 10];
    expect(stableStart(costs, 0, 25, 70)).toBe(0);
    expect(stableStart(costs, 0, 25, 45)).toBe(3);
    expect(stableStart(costs, 0, 25, 35)).toBe(5);
    expect(stableStart(costs, 0, 25, 15)).toBeNull();
    // and a tail of a longer story is judged by its offset in the story
    expect(stableStart(costs.slice(2), 20, 25, 45)).toBe(1);
  });
});

describe("OpenAI's cache rule", () => {
  it('serves a shared prefix from 1,024 tokens in steps of 128', () => {
    expect(cacheableTokens(1023)).toBe(0);
    expect(cacheableTokens(1024)).toBe(1024);
    expect(cacheableTokens(1151)).toBe(1024);
    expect(cacheableTokens(1152)).toBe(1152);
    expect(cacheableTokens(5000)).toBe(4992);
  });
});
