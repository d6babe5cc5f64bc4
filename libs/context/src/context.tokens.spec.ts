import {
  assembleContextSync,
  contextBudget,
  memoryReader,
  tokenizer,
  type ContextHead,
} from './index';
import {
  aCard,
  aContextHead,
  aNarrativeState,
  aStory,
  anAction,
  seedReferenceContext,
  someMemories,
} from './testing';

// A generated corpus: 800 actions of varied prose, and cards keyed on words it uses.
const story = aStory(800, { seed: 21 });
const cards = [
  aCard('mira', 'Mira', 'Mira is a smuggler who runs lamp oil past the customs house.'),
  aCard('voss', 'captain voss, Voss', 'Captain Voss commands the harbour watch and owes no one.'),
  aCard('compass', 'silver compass', 'The silver compass points at what its holder fears most.'),
  aCard('mill', 'abandoned mill', `The mill ${'grinds nothing but rumours '.repeat(60)}.`),
  aCard('cafe', 'café', 'The café on Rue Morne serves bitter coffee until dawn.'),
  aCard('none', 'kraken', 'Never triggered.'),
];

function corpusHead(budget: number, overrides: Partial<ContextHead> = {}): ContextHead {
  return {
    ...aContextHead({
      settings: { contextTokenBudget: budget },
      persona: { name: 'Ada', pronouns: 'she/her', description: 'A keeper of lights.' },
      plotEssentials: 'The lighthouse has been dark for three nights.',
      authorsNote: 'Keep it bleak.',
      storyCards: cards,
      storySummary: 'Ada came home to collect a debt.',
      narrativeState: aNarrativeState(2),
      memories: someMemories(['Ada owes Mira.', 'The ledger is missing a page.']),
      totalActions: story.length,
    }),
    ...overrides,
  };
}

describe('the fast builder against the seed, re-encoding everything', () => {
  it.each([1024, 2048, 8192, 16384, 65536])(
    'sends the same prompt, cards and history at a %i-token budget',
    (budget) => {
      // Given the corpus at this budget
      const head = corpusHead(budget);
      // When built the fast way (cached counts, covering window) and the seed's way
      const fast = assembleContextSync(head, memoryReader(story));
      const seed = seedReferenceContext(head, story);
      // Then everything that reaches the model or the reader is identical
      expect(fast.system).toBe(seed.system);
      expect(fast.story).toBe(seed.story);
      expect(fast.report.cards).toEqual(seed.report.cards);
      expect(fast.report.history).toEqual(seed.report.history);
      expect(fast.report.sections.map((s) => s.label)).toEqual(
        seed.report.sections.map((s) => s.label),
      );
    },
  );

  it('cuts the card trigger text where the seed does, at every budget in a sweep', () => {
    // Given a card per number the prose mentions ("counting 42 coins", "9 miles"), so that moving the
    // cut a token at a time keeps changing which cards trigger
    const head = aContextHead({
      storyCards: Array.from({ length: 298 }, (_, i) =>
        aCard(`n${i + 3}`, `counting ${i + 3} coins, ${i + 3} miles`, `Count ${i + 3}.`),
      ),
      totalActions: story.length,
    });
    const differences: number[] = [];
    const seen = new Set<string>();
    const { reserved } = contextBudget(head, story);
    for (let budget = reserved + 300; budget < reserved + 500; budget++) {
      const atBudget = { ...head, settings: { ...head.settings, contextTokenBudget: budget } };
      // When both builders trigger cards
      const fast = assembleContextSync(atBudget, memoryReader(story)).report.cards;
      const seed = seedReferenceContext(atBudget, story).report.cards;
      if (JSON.stringify(fast) !== JSON.stringify(seed)) differences.push(budget);
      seen.add(JSON.stringify(seed));
    }
    // Then they agree at every one, and the sweep did move the cut across keywords
    expect(differences).toEqual([]);
    expect(seen.size).toBeGreaterThan(2);
  });

  it('agrees on a retry, which excludes the newest take', () => {
    const retried = story[story.length - 2];
    const head = corpusHead(4096, { excludeActionId: retried.id, totalActions: story.length - 1 });
    const fast = assembleContextSync(head, memoryReader(story));
    const seed = seedReferenceContext(head, story);
    expect(fast.story).toBe(seed.story);
    expect(fast.story).not.toContain(retried.text);
    expect(fast.report.history).toEqual(seed.report.history);
  });
});

describe('token counts summed from cached parts', () => {
  it.each([2048, 16384, 131072])(
    'stay within 0.5%% of encoding the joined text at a %i-token budget',
    (budget) => {
      // Given the corpus, built from cached per-action counts
      const tok = tokenizer('cl100k_base');
      const built = assembleContextSync(corpusHead(budget), memoryReader(story));
      // Then each section's count and the total are within 0.5% of an encode of the text
      const within = (summed: number, exact: number) =>
        expect(Math.abs(summed - exact) / exact).toBeLessThanOrEqual(0.005);
      for (const section of built.report.sections) within(section.tokens, tok.count(section.text));
      within(built.report.tokens.total, tok.count(built.system) + tok.count(built.story));
      const history = built.report.sections.find((s) => s.label === 'history')!;
      expect(history.tokens).toBeGreaterThan(budget / 4);
    },
  );
});

describe('texts that start or end with whitespace (an edited action, an opening ending in a newline)', () => {
  // The separator merges with whitespace on either side in the joined text (" \n" + "\n\n" +
  // "\nNext" holds one whitespace token), so a sum of the parts' own counts runs high and a cut
  // costed by them falls short of the seed's encode of the joined text.
  const edges = ['', ' ', '\n', '\n\n', ' \n', '  ', '\t', '\n \n', '. \n', '…\n'];
  const edged = aStory(200, { seed: 3 }).map((action, i) =>
    anAction(
      action.id,
      `${edges[i % edges.length]}${action.text}${edges[(i * 3 + 1) % edges.length]}`,
      action.type,
    ),
  );

  it('cuts the trigger text, and so sends cards, history and story, as the seed at every budget in a sweep', () => {
    // Given a card per number the prose mentions, so that each token of the cut can change them
    const head = aContextHead({
      storyCards: Array.from({ length: 298 }, (_, i) =>
        aCard(`n${i + 3}`, `counting ${i + 3} coins, ${i + 3} miles`, `Count ${i + 3}.`),
      ),
      totalActions: edged.length,
    });
    const { reserved } = contextBudget(head, edged);
    const differences: number[] = [];
    const seen = new Set<string>();
    for (let budget = reserved + 300; budget < reserved + 1440; budget++) {
      const atBudget = { ...head, settings: { ...head.settings, contextTokenBudget: budget } };
      // When both builders build the prompt
      const fast = assembleContextSync(atBudget, memoryReader(edged));
      const seed = seedReferenceContext(atBudget, edged);
      const same =
        fast.story === seed.story &&
        JSON.stringify(fast.report.cards) === JSON.stringify(seed.report.cards) &&
        JSON.stringify(fast.report.history) === JSON.stringify(seed.report.history);
      if (!same) differences.push(budget);
      seen.add(JSON.stringify(seed.report.cards));
    }
    // Then they agree at all 1,140 budgets, and the sweep moved the cut across keywords
    expect(differences).toEqual([]);
    expect(seen.size).toBeGreaterThan(10);
  });

  it.each([2048, 16384])(
    "counts each section as an encode of its text does, within the spec's 0.5%% (%i)",
    (budget) => {
      const tok = tokenizer('cl100k_base');
      const head = corpusHead(budget, { totalActions: edged.length });
      const built = assembleContextSync(head, memoryReader(edged));
      for (const section of built.report.sections) {
        const exact = tok.count(section.text);
        expect(Math.abs(section.tokens - exact)).toBeLessThanOrEqual(exact * 0.005);
      }
      const exact = tok.count(built.system) + tok.count(built.story);
      expect(Math.abs(built.report.tokens.total - exact)).toBeLessThanOrEqual(exact * 0.005);
    },
  );
});
