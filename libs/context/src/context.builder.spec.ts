import {
  EMIT_REMINDER,
  EMIT_RULE,
  renderCanon,
  renderForPrompt,
  renderRejections,
} from '@chronicle/narrative';
import {
  assembleContext,
  assembleContextSync,
  buildContext,
  contextBudget,
  memoryReader,
  tokenizer,
  lengthHint,
  type BuiltContext,
  type ContextHead,
  type WindowAction,
} from './index';
import {
  aCard,
  aContextHead,
  aNarrativeState,
  aRejection,
  aStory,
  anAction,
  someMemories,
} from './testing';

const tok = tokenizer('cl100k_base');
const count = (text: string) => tok.count(text);

function build(head: ContextHead, window: WindowAction[]): BuiltContext {
  return buildContext({ ...head, window });
}
const labels = (built: BuiltContext) => built.report.sections.map((s) => s.label);
const sectionText = (built: BuiltContext, label: string) =>
  built.report.sections.find((s) => s.label === label)?.text;

/** A rich adventure head that fills every section. */
function aFullHead(overrides: Parameters<typeof aContextHead>[0] = {}): ContextHead {
  return aContextHead({
    persona: { name: 'Ada', pronouns: 'she/her', description: 'A keeper of lights.' },
    plotEssentials: '  The lamp is dark.  ',
    authorsNote: 'Keep it bleak.',
    aiInstructions: 'Present tense.',
    canon: { rules: ['The dead stay dead.'], forbiddenStatusChanges: [] },
    storyCards: [aCard('c1', 'lamp', 'The lamp burns whale oil.')],
    storySummary: 'Ada came home.',
    narrativeState: aNarrativeState(1),
    scriptMemory: { context: 'Scripted context.', frontMemory: 'The wick hisses.' },
    memories: someMemories(['Ada owes Mira.']),
    ...overrides,
  });
}

function aFullWindow(): WindowAction[] {
  return [
    anAction('1', 'The lamp is dark when you arrive.', 'start'),
    anAction('2', 'You climb the stairs.', 'do'),
    anAction('3', 'The stairs groan under you.', 'ai', { rejections: [aRejection('bad line')] }),
    anAction('4', 'You light a match.', 'do'),
  ];
}

describe('buildContext: the static system block', () => {
  it('emits narrator, state rule, canon, script context, AI instructions, persona, plot essentials in that order', () => {
    // Given an adventure that fills every system section
    const head = aFullHead();
    // When the context is built
    const built = build(head, aFullWindow());
    // Then the system block holds them in the seed's order, joined by blank lines
    const system = built.report.sections.slice(0, 7);
    expect(system.map((s) => s.label)).toEqual([
      'narrator',
      'state_rule',
      'campaign_canon',
      'script_context',
      'ai_instructions',
      'persona',
      'plot_essentials',
    ]);
    expect(system[1].text).toBe(EMIT_RULE);
    expect(system[2].text).toBe(renderCanon(head.canon));
    expect(system[3].text).toBe('Scripted context.');
    expect(system[5].text).toBe('Player character:\nYou are Ada (she/her). A keeper of lights.');
    expect(system[6].text).toBe('Plot essentials:\nThe lamp is dark.');
    expect(built.system).toBe(system.map((s) => s.text).join('\n\n'));
    expect(built.report.prompt.system).toBe(built.system);
  });

  it('omits the empty sections, and canon with no usable line', () => {
    // Given a bare adventure whose canon has only blank rules
    const head = aContextHead({ canon: { rules: ['  '], forbiddenStatusChanges: [] } });
    // When built
    const built = build(head, []);
    // Then the system block is the narrator and the state rule only
    expect(labels(built).slice(0, 2)).toEqual(['narrator', 'state_rule']);
    expect(built.system).toBe(`${head.settings.narratorPrompt.trim()}\n\n${EMIT_RULE}`);
  });

  it('is byte-identical across 20 turns in which only the live state, summary and memories change', () => {
    // Given an adventure played for 20 turns: story grows, state, summary, memories, rejections change
    const head = aFullHead();
    const story = aStory(60, { seed: 3 });
    const systems = new Set<string>();
    const stories: string[] = [];
    for (let turn = 0; turn < 20; turn++) {
      // When each turn's context is built
      const built = build(
        {
          ...head,
          narrativeState: aNarrativeState(turn),
          storySummary: `Summary as of turn ${turn}.`,
          memories: someMemories([`Memory ${turn}`, `Memory ${turn + 1}`]),
          totalActions: 20 + turn * 2,
        },
        story.slice(0, 20 + turn * 2),
      );
      systems.add(built.system);
      stories.push(built.story);
    }
    // Then the system text never changed, while the story did
    expect(systems.size).toBe(1);
    expect(new Set(stories).size).toBe(20);
  });
});

describe('buildContext: the story order', () => {
  it('places history, note, recent history, then live sections least to most volatile, the reminder last', () => {
    // Given an adventure with every story section present
    const built = build(aFullHead(), aFullWindow());
    // Then the story sections follow the seed's order
    expect(labels(built).slice(7)).toEqual([
      'history',
      'authors_note',
      'recent_history',
      'story_summary',
      'world_lore',
      'used_memories',
      'narrative_state',
      'front_memory',
      'length_hint',
      'state_refusals',
      'state_reminder',
    ]);
    const story = built.report.sections.slice(7);
    expect(built.story).toBe(story.map((s) => s.text).join('\n\n'));
    expect(built.story.endsWith(EMIT_REMINDER)).toBe(true);
    expect(sectionText(built, 'story_summary')).toBe('Story summary:\nAda came home.');
    expect(sectionText(built, 'world_lore')).toBe('World Lore: The lamp burns whale oil.');
    expect(sectionText(built, 'used_memories')).toBe('Memories:\n- Ada owes Mira.');
    expect(sectionText(built, 'narrative_state')).toBe(renderForPrompt(aNarrativeState(1)));
    expect(sectionText(built, 'front_memory')).toBe('The wick hisses.');
    expect(sectionText(built, 'length_hint')).toBe(lengthHint(800));
  });

  it('builds an empty adventure: no history, no cards, the hint and the reminder', () => {
    // Given an adventure with no story and nothing set
    const head = aContextHead();
    // When built
    const built = build(head, []);
    // Then only the fixed minimum is sent
    expect(labels(built)).toEqual(['narrator', 'state_rule', 'length_hint', 'state_reminder']);
    expect(built.report.history).toEqual({ included: 0, total: 0, oldest_truncated: false });
    expect(built.report.cards).toEqual([]);
    expect(built.report.memories).toBeNull();
  });

  it('lists memories as bullets and reports the retrieval result as-is', () => {
    const memories = { ...someMemories(['one', 'two']), error: 'partial' };
    const built = build(aContextHead({ memories }), []);
    expect(sectionText(built, 'used_memories')).toBe('Memories:\n- one\n- two');
    expect(built.report.memories).toEqual(memories);
    // A bank that retrieved nothing adds no section
    const none = build(aContextHead({ memories: { used: [] } }), []);
    expect(labels(none)).not.toContain('used_memories');
  });

  it('reports the settings and the budget', () => {
    const head = aContextHead({
      settings: {
        model: 'm',
        apiMode: 'completion',
        temperature: 0.3,
        maxOutputTokens: 500,
        contextTokenBudget: 9000,
      },
    });
    const built = build(head, []);
    expect(built.report.settings).toEqual({
      model: 'm',
      api_mode: 'completion',
      temperature: 0.3,
      max_output_tokens: 500,
    });
    expect(built.report.tokens.budget).toBe(9000);
    // The seed's keys, plus Chronicle's cache figures
    expect(Object.keys(built.report).sort()).toEqual(
      ['cache', 'cards', 'history', 'memories', 'prompt', 'sections', 'settings', 'tokens'].sort(),
    );
  });

  it('counts each section as its text encodes, the total as both prompts encode', () => {
    // Given a small adventure (the large-corpus bound is in context.tokens.spec.ts)
    const built = build(aFullHead(), aFullWindow());
    // Then the counts made of cached parts agree with encoding the joined text
    for (const s of built.report.sections) expect(s.tokens).toBe(count(s.text));
    expect(built.report.tokens.total).toBe(count(built.system) + count(built.story));
  });
});

describe('buildContext: the budget', () => {
  it('reserves every section but the lore, and leaves the rest available', () => {
    // Given a full adventure
    const head = aFullHead();
    const window = aFullWindow();
    // When the budget is computed
    const budget = contextBudget(head, window);
    // Then reserved is the sum of the seed's pieces
    const built = build(head, window);
    const byLabel = Object.fromEntries(built.report.sections.map((s) => [s.label, s.tokens]));
    const expected =
      [
        'narrator',
        'state_rule',
        'campaign_canon',
        'script_context',
        'ai_instructions',
        'persona',
        'plot_essentials',
      ]
        .map((l) => byLabel[l])
        .reduce((a, b) => a + b, 0) +
      byLabel.story_summary +
      byLabel.used_memories +
      byLabel.narrative_state +
      count("[Author's note: Keep it bleak.]") +
      count('The wick hisses.') +
      count(lengthHint(800)) +
      count(EMIT_REMINDER) +
      count(renderRejections([aRejection('bad line')]));
    expect(budget).toEqual({ reserved: expected, available: 16384 - expected });
  });

  it('still leaves 256 tokens of story when the reserved sections exceed the budget', () => {
    // Given a budget smaller than the fixed sections alone
    const head = aFullHead({ settings: { contextTokenBudget: 300 } });
    const story = aStory(40, { seed: 5 });
    // When built
    const budget = contextBudget(head, story);
    const built = build(head, story);
    // Then 256 tokens remain for lore and history, and history is sent
    expect(budget.reserved).toBeGreaterThan(300);
    expect(budget.available).toBe(256);
    const history = built.report.sections
      .filter((s) => s.label === 'history' || s.label === 'recent_history')
      .reduce((sum, s) => sum + s.tokens, 0);
    expect(built.report.history.included).toBeGreaterThan(0);
    expect(history).toBeLessThanOrEqual(256);
  });

  it('uses the adventure encoding: o200k_base counts differ from cl100k_base', () => {
    const text = 'Ein Fuchs springt über den faulen Hund. 日本語のテキストです。';
    const cl = contextBudget(aContextHead({ plotEssentials: text }), []);
    const o2 = contextBudget(
      aContextHead({ plotEssentials: text, settings: { encoding: 'o200k_base' } }),
      [],
    );
    expect(cl.reserved).not.toBe(o2.reserved);
    expect(tokenizer('o200k_base').count(text)).not.toBe(count(text));
  });
});

describe('buildContext: story cards', () => {
  it('triggers only on the last `available` tokens of the window', () => {
    // Given a budget at the 256-token floor, an old action naming the zeppelin and 600 tokens after it
    const head = aContextHead({
      settings: { contextTokenBudget: 1 },
      storyCards: [aCard('z', 'zeppelin', 'A zeppelin.'), aCard('h', 'harbour', 'The harbour.')],
    });
    const filler = aStory(30, { seed: 9 }).filter((a) => !/zeppelin|harbour/i.test(a.text));
    const window = [
      anAction('old', 'A zeppelin drifts overhead.'),
      ...filler,
      anAction('new', 'You reach the harbour.'),
    ];
    expect(filler.reduce((s, a) => s + a.tokens, 0)).toBeGreaterThan(400);
    // When built
    const built = build(head, window);
    // Then the old mention is out of reach and the recent one triggers
    expect(built.report.cards).toEqual([
      { id: 'h', name: 'h', keyword: 'harbour', included: true },
    ]);
  });

  it('matches case-insensitive substrings on comma-separated trimmed keys, first key per card, in card order', () => {
    // Given cards whose keys match in various ways
    const head = aContextHead({
      storyCards: [
        aCard('boat', ' , Boat ,ship', 'Boats.'),
        aCard('none', 'kraken', 'Never.'),
        aCard('two', 'lantern, stairs', 'Two keys.'),
        aCard('first', 'STAIRS', 'Upper case key.'),
      ],
    });
    const window = [
      anAction('1', 'The STAIRS creak.'),
      anAction('2', 'Two boats and a ship, and a lantern.'),
    ];
    // When built
    const built = build(head, window);
    // Then each matching card appears once, in card order, with the first key that matched
    expect(built.report.cards.map((c) => [c.id, c.keyword])).toEqual([
      ['boat', 'boat'],
      ['two', 'lantern'],
      ['first', 'stairs'],
    ]);
    expect(sectionText(built, 'world_lore')).toBe(
      'World Lore: Boats.\nWorld Lore: Two keys.\nWorld Lore: Upper case key.',
    );
  });

  it('matches keys with spaces, unicode and emoji', () => {
    const head = aContextHead({
      storyCards: [
        aCard('space', 'old  man, the old man', 'A man.'),
        aCard('cafe', 'CAFÉ', 'A café.'),
        aCard('dragon', 'ドラゴン, 🐉', 'A dragon.'),
        aCard('nospace', 'oldman', 'Never.'),
      ],
    });
    const window = [anAction('1', 'The Old Man sits in the café. A 🐉 banner flies.')];
    const built = build(head, window);
    expect(built.report.cards.map((c) => [c.id, c.keyword])).toEqual([
      ['space', 'the old man'],
      ['cafe', 'café'],
      ['dragon', '🐉'],
    ]);
  });

  it('skips a card over the 40% lore budget while a later, smaller card still fits', () => {
    // Given available at the 256 floor (lore budget 102) and a ~150-token card before a small one
    const big = `The ledger ${'lists a debt '.repeat(50)}.`;
    const head = aContextHead({
      settings: { contextTokenBudget: 1 },
      storyCards: [aCard('big', 'ledger', big), aCard('small', 'compass', 'A compass.')],
    });
    const built = build(head, [anAction('1', 'The ledger and the compass.')]);
    expect(count(`World Lore: ${big}`)).toBeGreaterThan(102);
    // Then the big card is reported not included and the small one is in the lore
    expect(built.report.cards).toEqual([
      { id: 'big', name: 'big', keyword: 'ledger', included: false },
      { id: 'small', name: 'small', keyword: 'compass', included: true },
    ]);
    expect(sectionText(built, 'world_lore')).toBe('World Lore: A compass.');
  });

  it('includes a card that exactly fills floor(available × 0.4)', () => {
    const head = aContextHead({ settings: { contextTokenBudget: 1 } }); // available 256 → 102
    let entry = 'x';
    while (count(`World Lore: ${entry} y`) <= 102) entry += ' y';
    expect(count(`World Lore: ${entry}`)).toBe(102);
    const built = build({ ...head, storyCards: [aCard('c', 'bell', entry)] }, [
      anAction('1', 'A bell.'),
    ]);
    expect(built.report.cards[0].included).toBe(true);
  });
});

describe('buildContext: history', () => {
  it('takes the newest actions that fit, each costing its tokens plus a separator', () => {
    // Given actions of about 100 tokens each
    const story = aStory(40, { seed: 4 })
      .filter((a) => a.tokens > 90)
      .slice(-6);
    const head = aContextHead();
    const { available } = contextBudget(head, story);
    const sep = count('\n\n');
    const newestThree = story.slice(-3).reduce((s, a) => s + a.tokens + sep, 0);
    const fourth = story[story.length - 4].tokens + sep;
    const withAvailable = (extra: number) => ({
      ...head,
      settings: { ...head.settings, contextTokenBudget: 16384 - available + extra },
    });
    expect(newestThree).toBeGreaterThan(256);
    // When the history budget is exactly three actions, one token short of four, and four
    const three = build(withAvailable(newestThree), story);
    const almostFour = build(withAvailable(newestThree + fourth - 1), story);
    const four = build(withAvailable(newestThree + fourth), story);
    // Then three, three and four actions are included, oldest first
    expect(three.report.history.included).toBe(3);
    expect(almostFour.report.history.included).toBe(3);
    expect(four.report.history.included).toBe(4);
    expect(sectionText(four, 'history')).toBe(
      story
        .slice(-4)
        .map((a) => a.text)
        .join('\n\n'),
    );
  });

  it('stops at the first action that overflows, even if an older one would fit', () => {
    const huge = anAction('huge', 'word '.repeat(400));
    const window = [anAction('old', 'Tiny.'), huge, anAction('new', 'Also tiny.')];
    const built = build(aContextHead({ settings: { contextTokenBudget: 1 } }), window);
    expect(built.report.history.included).toBe(1);
    expect(sectionText(built, 'history')).toBe('Also tiny.');
  });

  it('keeps the end of a single action larger than the budget and flags it truncated', () => {
    // Given one action far larger than the 256 available tokens
    const words = Array.from({ length: 800 }, (_, i) => `w${i}`).join(' ');
    const built = build(aContextHead({ settings: { contextTokenBudget: 1 }, totalActions: 1 }), [
      anAction('1', words),
    ]);
    // Then its last tokens are sent, within the budget, and the report says so
    const history = sectionText(built, 'history')!;
    expect(words.endsWith(history)).toBe(true);
    expect(history.length).toBeLessThan(words.length);
    expect(count(history)).toBeLessThanOrEqual(256);
    expect(count(history)).toBeGreaterThan(240);
    expect(built.report.history).toEqual({ included: 1, total: 1, oldest_truncated: true });
  });

  it('reports the whole story as the total, not the window', () => {
    const built = build(aContextHead({ totalActions: 2000 }), aStory(5));
    expect(built.report.history.total).toBe(2000);
    expect(built.report.history.included).toBe(5);
  });
});

describe("buildContext: the author's note", () => {
  const five = () => ['a', 'b', 'c', 'd', 'e'].map((t) => anAction(t, `Action ${t}.`));

  it('goes three actions from the end of history', () => {
    const built = build(aContextHead({ authorsNote: ' Bleak. ' }), five());
    expect(labels(built).slice(2, 5)).toEqual(['history', 'authors_note', 'recent_history']);
    expect(sectionText(built, 'history')).toBe('Action a.\n\nAction b.');
    expect(sectionText(built, 'authors_note')).toBe("[Author's note: Bleak.]");
    expect(sectionText(built, 'recent_history')).toBe('Action c.\n\nAction d.\n\nAction e.');
  });

  it('comes first when there are fewer than three actions', () => {
    const built = build(aContextHead({ authorsNote: 'Bleak.' }), five().slice(0, 2));
    expect(labels(built).slice(2, 4)).toEqual(['authors_note', 'recent_history']);
    expect(sectionText(built, 'recent_history')).toBe('Action a.\n\nAction b.');
    const empty = build(aContextHead({ authorsNote: 'Bleak.' }), []);
    expect(labels(empty)).toEqual([
      'narrator',
      'state_rule',
      'authors_note',
      'length_hint',
      'state_reminder',
    ]);
  });

  it("is overridden by the script's authorsNote, and only by a non-blank string", () => {
    const head = aContextHead({ authorsNote: 'Adventure note.' });
    const scripted = build({ ...head, scriptMemory: { authorsNote: ' Script note. ' } }, five());
    expect(sectionText(scripted, 'authors_note')).toBe("[Author's note: Script note.]");
    for (const scriptMemory of [null, {}, { authorsNote: '   ' }, { authorsNote: 7 }]) {
      const built = build({ ...head, scriptMemory }, five());
      expect(sectionText(built, 'authors_note')).toBe("[Author's note: Adventure note.]");
    }
  });
});

describe('buildContext: script memory', () => {
  it('adds script context and front memory only for string values', () => {
    const present = build(
      aContextHead({ scriptMemory: { context: ' Ctx. ', frontMemory: ' Front. ' } }),
      [],
    );
    expect(sectionText(present, 'script_context')).toBe('Ctx.');
    expect(sectionText(present, 'front_memory')).toBe('Front.');
    for (const scriptMemory of [
      null,
      {},
      { context: 1, frontMemory: ['x'] },
      { context: ' ', frontMemory: '' },
    ]) {
      const absent = build(aContextHead({ scriptMemory }), []);
      expect(labels(absent)).not.toContain('script_context');
      expect(labels(absent)).not.toContain('front_memory');
    }
  });
});

describe('buildContext: the previous turn rejections', () => {
  const rejected = [aRejection('status ghost -> alive')];

  it("shows the previous AI turn's rejections just above the reminder", () => {
    const window = [
      anAction('1', 'The ghost rises.', 'ai', { rejections: rejected }),
      anAction('2', 'You run.'),
    ];
    const built = build(aContextHead(), window);
    expect(labels(built).slice(-3)).toEqual(['length_hint', 'state_refusals', 'state_reminder']);
    expect(sectionText(built, 'state_refusals')).toBe(renderRejections(rejected));
  });

  it('shows nothing once a newer AI turn exists, or when the AI turn is beyond the last six actions', () => {
    const stale = [
      anAction('1', 'The ghost rises.', 'ai', { rejections: rejected }),
      anAction('2', 'You run.'),
      anAction('3', 'You escape.', 'ai'),
    ];
    expect(labels(build(aContextHead(), stale))).not.toContain('state_refusals');
    const far = [
      anAction('1', 'The ghost rises.', 'ai', { rejections: rejected }),
      ...[2, 3, 4, 5, 6, 7].map((i) => anAction(`${i}`, `You act ${i}.`)),
    ];
    expect(labels(build(aContextHead(), far))).not.toContain('state_refusals');
    expect(labels(build(aContextHead(), far.slice(0, 6)))).toContain('state_refusals');
  });
});

describe('buildContext: the retried (excluded) action', () => {
  it('is absent from history, card triggers and the rejection lookup', () => {
    // Given a retry of the newest AI take, which named the kraken and had rejections
    const previous = anAction('p', 'The harbour is quiet.', 'ai', {
      rejections: [aRejection('earlier')],
    });
    const retried = anAction('r', 'A kraken rises from the water.', 'ai', {
      rejections: [aRejection('retried take')],
    });
    const head = aContextHead({
      storyCards: [aCard('k', 'kraken', 'The kraken.'), aCard('h', 'harbour', 'The harbour.')],
      excludeActionId: 'r',
    });
    // When built with the take still in the window
    const built = build(head, [previous, anAction('y', 'You wait.'), retried]);
    // Then it is nowhere in the prompt or the report
    expect(built.story).not.toContain('kraken');
    expect(built.report.cards.map((c) => c.id)).toEqual(['h']);
    expect(sectionText(built, 'state_refusals')).toBe(renderRejections([aRejection('earlier')]));
    expect(built.report.history.included).toBe(2);
    // And the budget computed before the window agrees
    expect(contextBudget(head, [previous, anAction('y', 'You wait.'), retried])).toEqual(
      contextBudget({ ...head, excludeActionId: null }, [previous, anAction('y', 'You wait.')]),
    );
  });
});

describe('assembleContext: budget, window, build', () => {
  it('reads only a covering window of a long story and builds the same prompt as from the whole story', async () => {
    // Given a 1,000-action story and a reader that records what it returns
    const story = aStory(1000, { seed: 12 });
    const head = aFullHead({ settings: { contextTokenBudget: 4096 }, totalActions: 1000 });
    const reader = memoryReader(story);
    let rowsRead = 0;
    const counting = async (already: number, n: number) => {
      const rows = reader(already, n);
      rowsRead += rows.length;
      return rows;
    };
    // When assembled
    const built = await assembleContext(head, counting);
    // Then far less than the story was read, and the prompt is what the whole story gives
    expect(rowsRead).toBeLessThan(200);
    expect(built).toEqual(build(head, story));
    expect(assembleContextSync(head, reader)).toEqual(built);
  });
});
