import { buildContext } from '../context.builder';
import type { StoryCard } from '../context.types';
import { aContextHead, anAction } from '../testing';
import { MAX_LORE_RECURSION, activateLore, staticLore } from './lore.activate';

// What fires, and why, for each lore feature the card model has (spec lore-formats §5).

const turn = { user: 'Ash', seed: 'turn-1', budget: 10_000, countTokens: (t: string) => t.length };
let next = 0;
const card = (overrides: Partial<StoryCard>): StoryCard => ({
  id: `c${++next}`,
  name: overrides.name ?? `Card ${next}`,
  keys: '',
  entry: `Entry ${next}.`,
  type: 'lore',
  ...overrides,
});
const fire = (cards: StoryCard[], ...parts: string[]) => activateLore(cards, { parts }, turn);
const fired = (cards: StoryCard[], ...parts: string[]) =>
  fire(cards, ...parts).records.map((r) => r.name);

describe('lore activation', () => {
  it('keeps the seed rule for native cards: trimmed, case-insensitive substrings, card order', () => {
    const cards = [
      card({ name: 'Boat', keys: ' BOAT , ship' }),
      card({ name: 'Sea', keys: 'sea' }),
    ];
    expect(fire(cards, 'The sea.', 'Boats bob.').records).toEqual([
      { id: cards[0].id, name: 'Boat', keyword: 'boat', included: true },
      { id: cards[1].id, name: 'Sea', keyword: 'sea', included: true },
    ]);
  });

  it('AI Dungeon keys keep their spaces: " Bob " does not fire on "Bobby"', () => {
    const bob = card({ name: 'Bob', keys: ' Bob ,(Bob ', keySyntax: 'aid' });
    expect(fired([bob], 'Bobby waves.')).toEqual([]);
    expect(fired([bob], 'You see Bob wave.')).toEqual(['Bob']);
    expect(fired([bob], 'A friend (Bob said)')).toEqual(['Bob']);
    expect(fire([bob], 'You see Bob wave.').records[0].keyword).toBe(' bob ');
  });

  it('one key per line for list-format imports, so a key may hold a comma', () => {
    const regex = card({ name: 'Ahs', keys: '/a{2,3}h/\nsigh', keySyntax: 'lines' });
    expect(fired([regex], 'aaah')).toEqual(['Ahs']);
  });

  it('always-on cards go to the static block unless they depend on the turn', () => {
    const rule = card({ name: 'Rule', activation: 'always', entry: '{{user}} never lies.' });
    const dice = card({ name: 'Dice', activation: 'always', entry: 'Luck: {{roll:6}}' });
    const fixed = staticLore([rule, dice], turn);
    expect(fixed.text).toBe('World Lore: Ash never lies.');
    expect(fixed.records).toEqual([
      {
        id: rule.id,
        name: 'Rule',
        keyword: '',
        included: true,
        reason: 'always',
        placement: 'static',
      },
    ]);
    expect(fire([rule, dice]).records.map((r) => [r.name, r.reason])).toEqual([['Dice', 'always']]);
  });

  it('renders {{user}}, {{char}} and the V3 macros; random draws follow the seed', () => {
    const entry =
      '{{char}} greets {{user}}.{{// a note}}{{comment: hidden}} Weather: {{random:rain,snow,fog}}. {{roll:d20}}';
    const c = card({ name: 'Mira', keys: 'mira', entry, charName: 'Mira' });
    const once = fire([c], 'mira').lines[0].text;
    expect(once).toMatch(/^World Lore: Mira greets Ash\. Weather: (rain|snow|fog)\. \d+$/);
    expect(fire([c], 'mira').lines[0].text).toBe(once);
    const other = Array.from(
      { length: 10 },
      (_, i) => activateLore([c], { parts: ['mira'] }, { ...turn, seed: `t${i}` }).lines[0].text,
    );
    expect(new Set(other).size).toBeGreaterThan(1);
  });

  it('priority: highest budgeted first, rendered lowest first (highest closest to the story)', () => {
    const low = card({ name: 'Low', keys: 'x', priority: 10, entry: 'L' });
    const high = card({ name: 'High', keys: 'x', priority: 500, entry: 'H'.repeat(20) });
    const mid = card({ name: 'Mid', keys: 'x', entry: 'M'.repeat(20) });
    const result = activateLore([low, high, mid], { parts: ['x'] }, { ...turn, budget: 70 });
    expect(result.lines.map((l) => l.text)).toEqual([
      `World Lore: ${'M'.repeat(20)}`,
      `World Lore: ${'H'.repeat(20)}`,
    ]);
    expect(result.records.map((r) => [r.name, r.included])).toEqual([
      ['Low', false],
      ['High', true],
      ['Mid', true],
    ]);
  });

  it('disabled and inert cards never fire', () => {
    expect(
      fired([card({ keys: 'x', enabled: false }), card({ keys: 'x', activation: 'inert' })], 'x'),
    ).toEqual([]);
  });

  it('scan windows: the last N actions (SillyTavern), the last N characters (NovelAI), reported when a key was outside', () => {
    const st = card({ name: 'ST', keys: 'storm', scan: { actions: 2 } });
    const nai = card({ name: 'NAI', keys: 'storm', scan: { chars: 10 } });
    expect(fired([st, nai], 'A storm.', 'Calm.', 'Calm again.')).toEqual([]);
    expect(fire([st], 'A storm.', 'Calm.', 'Calm again.').misses).toEqual([
      { id: st.id, name: 'ST', reason: 'window' },
    ]);
    expect(fired([st, nai], 'A storm.', 'Calm, a storm is far off.')).toEqual(['ST']);
    expect(fired([st, nai], 'Calm.', 'the storm.')).toEqual(['ST', 'NAI']);
  });

  it('secondary keys: the four modes, and Lite’s anyOf plus noneOf', () => {
    const mode = (m: 'anyOf' | 'allOf' | 'noneOf' | 'notAllOf') =>
      card({ name: m, keys: 'storm', conditions: [{ mode: m, keys: ['ship', 'boat'] }] });
    const cards = [mode('anyOf'), mode('allOf'), mode('noneOf'), mode('notAllOf')];
    expect(fired(cards, 'storm, ship')).toEqual(['anyOf', 'notAllOf']);
    expect(fired(cards, 'storm, ship, boat')).toEqual(['anyOf', 'allOf']);
    expect(fired(cards, 'storm')).toEqual(['noneOf', 'notAllOf']);
    const lite = card({
      name: 'Lite',
      keys: 'mira',
      conditions: [
        { mode: 'anyOf', keys: ['lamp'] },
        { mode: 'noneOf', keys: ['dream'] },
      ],
    });
    expect(fired([lite], 'mira lamp')).toEqual(['Lite']);
    expect(fired([lite], 'mira lamp dream')).toEqual([]);
    expect(fire([lite], 'mira lamp dream').misses[0]).toMatchObject({ reason: 'condition' });
  });

  it('per-card case sensitivity and whole words (single-word keys only)', () => {
    const cased = card({ name: 'Cased', keys: 'Rose', caseSensitive: true });
    const whole = card({ name: 'Whole', keys: 'cat, black dog', wholeWords: true });
    expect(fired([cased, whole], 'a rose, a category, blackdog')).toEqual([]);
    expect(fired([cased, whole], 'Rose and the cat.')).toEqual(['Cased', 'Whole']);
    expect(fired([whole], 'a black doghouse')).toEqual(['Whole']);
    expect(fired([whole], '猫cat猫')).toEqual([]);
  });

  it('regex keys by the /…/flags shape only; a dangerous pattern is refused and reported', () => {
    const re = card({ name: 'Re', keys: '/\\bcapt(ain)?\\b/i', keySyntax: 'lines' });
    const plain = card({ name: 'Plain', keys: 'C++\nMr. Smith\n/usr/bin/', keySyntax: 'lines' });
    const bad = card({ name: 'Bad', keys: '/(a+)+$/', keySyntax: 'lines' });
    expect(
      fired([re, plain, bad], 'The Captain uses C++ in aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!'),
    ).toEqual(['Re', 'Plain']);
    expect(fired([plain], 'see /usr/bin/ now')).toEqual(['Plain']);
    expect(fire([bad], 'aaaa').misses).toEqual([
      {
        id: bad.id,
        name: 'Bad',
        reason: 'regex',
        detail: expect.stringMatching(/nested repetition/),
      },
    ]);
  });

  it('recursion: entries trigger others, with opt-outs, delay levels and a step limit', () => {
    const a = card({
      name: 'A',
      keys: 'start',
      entry: 'mentions bee',
      recursion: { feedsOthers: true, triggeredByOthers: true },
    });
    const b = card({
      name: 'B',
      keys: 'bee',
      entry: 'mentions sea {{hidden_key:secret}}',
      recursion: { feedsOthers: true, triggeredByOthers: true },
    });
    const c = card({
      name: 'C',
      keys: 'sea',
      recursion: { feedsOthers: true, triggeredByOthers: false },
    });
    const d = card({
      name: 'D',
      keys: 'secret',
      recursion: { feedsOthers: false, triggeredByOthers: true, delayLevel: 2 },
    });
    const noRecursion = card({ name: 'N', keys: 'bee' });
    const result = fire([a, b, c, d, noRecursion], 'start');
    expect(result.records.map((r) => [r.name, r.reason ?? 'key', r.step ?? 0])).toEqual([
      ['A', 'key', 0],
      ['B', 'recursion', 1],
      ['D', 'recursion', 2],
    ]);
    expect(result.lines.map((l) => l.text)).toContain('World Lore: mentions sea');
    // A chain longer than the limit stops there.
    const chain = Array.from({ length: MAX_LORE_RECURSION + 3 }, (_, i) =>
      card({
        name: `L${i}`,
        keys: `link${i}`,
        entry: `link${i + 1}`,
        recursion: { feedsOthers: true, triggeredByOthers: true },
      }),
    );
    expect(fire(chain, 'link0').records).toHaveLength(MAX_LORE_RECURSION + 1);
  });

  it('probability: drawn from the turn seed, the same for a rebuild of the turn, reported when lost', () => {
    const chance = card({ name: 'Chance', keys: 'x', probability: 50 });
    const draws = Array.from({ length: 40 }, (_, i) =>
      activateLore([chance], { parts: ['x'] }, { ...turn, seed: `turn-${i}` }),
    );
    const kept = draws.filter((d) => d.records.length === 1).length;
    expect(kept).toBeGreaterThan(5);
    expect(kept).toBeLessThan(35);
    expect(activateLore([chance], { parts: ['x'] }, { ...turn, seed: 'turn-3' })).toEqual(draws[3]);
    const lost = draws.find((d) => d.records.length === 0)!;
    expect(lost.misses).toEqual([
      { id: chance.id, name: 'Chance', reason: 'probability', detail: '50%' },
    ]);
    expect(fired([card({ keys: 'x', probability: 0 })], 'x')).toEqual([]);
  });

  it('inclusion groups: one winner per group, an override member first, else by weight', () => {
    const a = card({ name: 'A', keys: 'x', group: { names: ['weather'] } });
    const b = card({ name: 'B', keys: 'x', group: { names: ['weather'], weight: 0 } });
    const c = card({ name: 'C', keys: 'x', group: { names: ['mood'] } });
    expect(fired([a, b, c], 'x')).toEqual(['A', 'C']);
    expect(fire([a, b, c], 'x').misses).toEqual([
      { id: b.id, name: 'B', reason: 'group', detail: 'weather' },
    ]);
    const boss = card({
      name: 'Boss',
      keys: 'x',
      priority: 5,
      group: { names: ['weather'], override: true },
    });
    expect(fired([a, b, boss], 'x')).toEqual(['Boss']);
  });

  it('timed delay: not before the path has that many actions (undo shortens the path, so it holds again)', () => {
    const late = card({ name: 'Late', keys: 'x', timing: { delay: 10 } });
    const at = (storyActions: number) =>
      activateLore([late], { parts: ['x'] }, { ...turn, storyActions });
    expect(at(9).records).toEqual([]);
    expect(at(9).misses[0]).toMatchObject({ reason: 'delay' });
    expect(at(10).records.map((r) => r.name)).toEqual(['Late']);
  });

  it('sticky: once fired, stays without its key for that many actions, undrawn; then fires by key again', () => {
    const storm = card({ name: 'Storm', keys: 'storm', timing: { sticky: 4 }, probability: 1 });
    const at = (ago: number | null, ...parts: string[]) =>
      activateLore(
        [storm],
        { parts },
        { ...turn, timed: ago === null ? [] : [{ cardId: storm.id, ago }] },
      );
    // It fired 2 and 4 actions ago: it stays, with no key in the story and its 1% draw not redrawn.
    for (const ago of [2, 4]) {
      const held = at(ago, 'calm seas');
      expect(held.records).toEqual([
        { id: storm.id, name: 'Storm', keyword: '', included: true, reason: 'sticky' },
      ]);
      // A sticky card restarts nothing: the turn that fired it started its timer.
      expect(held.timedStarts).toEqual([]);
    }
    expect(at(5, 'calm seas').records).toEqual([]);
    // The latest firing counts: an older one does not end it early.
    expect(
      activateLore(
        [storm],
        { parts: ['calm'] },
        {
          ...turn,
          timed: [
            { cardId: storm.id, ago: 9 },
            { cardId: storm.id, ago: 3 },
          ],
        },
      ).records,
    ).toHaveLength(1);
  });

  it('cooldown: after firing (or after its sticky ends) it cannot fire for that many actions', () => {
    const gate = card({ name: 'Gate', keys: 'gate', timing: { cooldown: 3 } });
    const bell = card({ name: 'Bell', keys: 'bell', timing: { sticky: 2, cooldown: 2 } });
    const at = (ago: number) =>
      activateLore(
        [gate, bell],
        { parts: ['the gate and the bell'] },
        {
          ...turn,
          timed: [
            { cardId: gate.id, ago },
            { cardId: bell.id, ago },
          ],
        },
      );
    const reasons = (ago: number) => {
      const result = at(ago);
      return [
        ...result.records.map((r) => `${r.name}:${r.reason ?? 'key'}`),
        ...result.misses.map((m) => `${m.name}:${m.reason}`),
      ];
    };
    expect(reasons(2)).toEqual(['Bell:sticky', 'Gate:cooldown']);
    expect(reasons(3)).toEqual(['Gate:cooldown', 'Bell:cooldown']);
    expect(reasons(4)).toEqual(['Gate:key', 'Bell:cooldown']);
    expect(reasons(5)).toEqual(['Gate:key', 'Bell:key']);
    // Firing by key again starts both timers anew; the report says so.
    expect(at(5).timedStarts).toEqual([gate.id, bell.id]);
    // With no firing on the path, a timed card fires as any other and starts its timer.
    const fresh = activateLore([gate], { parts: ['gate'] }, turn);
    expect(fresh.records.map((r) => r.name)).toEqual(['Gate']);
    expect(fresh.timedStarts).toEqual([gate.id]);
  });

  it('timers: a card that did not fit the budget starts none; a sticky member keeps its group', () => {
    const big = card({ name: 'Big', keys: 'x', entry: 'y'.repeat(500), timing: { cooldown: 5 } });
    expect(activateLore([big], { parts: ['x'] }, { ...turn, budget: 100 }).timedStarts).toEqual([]);
    const a = card({ name: 'A', keys: 'x', group: { names: ['g'], override: true } });
    const b = card({ name: 'B', keys: 'x', group: { names: ['g'] }, timing: { sticky: 3 } });
    const result = activateLore(
      [a, b],
      { parts: ['x'] },
      { ...turn, timed: [{ cardId: b.id, ago: 1 }] },
    );
    expect(result.records.map((r) => r.name)).toEqual(['B']);
    expect(result.misses).toEqual([expect.objectContaining({ name: 'A', reason: 'group' })]);
  });

  it('an always-on card with a timer is live, not static: it cools down between firings', () => {
    const tick = card({ name: 'Tick', activation: 'always', timing: { cooldown: 2 } });
    expect(staticLore([tick], turn).records).toEqual([]);
    expect(fired([tick], 'x')).toEqual(['Tick']);
    const cooling = activateLore(
      [tick],
      { parts: ['x'] },
      { ...turn, timed: [{ cardId: tick.id, ago: 2 }] },
    );
    expect(cooling.records).toEqual([]);
    expect(cooling.misses[0]).toMatchObject({ name: 'Tick', reason: 'cooldown' });
  });

  it('depth placement: into the history at its depth, from the lore budget', () => {
    const status = card({
      name: 'Status',
      activation: 'always',
      entry: '[HP 10]',
      placement: { kind: 'depth', depth: 1, role: 'system' },
    });
    const head = aContextHead({ storyCards: [status], authorsNote: 'Be terse.' });
    const window = ['One.', 'Two.', 'Three.', 'Four.'].map((t, i) => anAction(`a${i}`, t));
    const built = buildContext({ ...head, window });
    expect(
      built.story.startsWith(
        "One.\n\n[Author's note: Be terse.]\n\nTwo.\n\nThree.\n\n[HP 10]\n\nFour.",
      ),
    ).toBe(true);
    const labels = built.report.sections.map((s) => s.label);
    expect(labels.slice(labels.indexOf('history'), labels.indexOf('history') + 5)).toEqual([
      'history',
      'authors_note',
      'recent_history',
      'lore_depth_system',
      'recent_history',
    ]);
    expect(built.report.cards).toEqual([
      {
        id: status.id,
        name: 'Status',
        keyword: '',
        included: true,
        reason: 'always',
        placement: 'depth',
      },
    ]);
  });

  it('depth roles: a chat prompt marks where each depth entry is, as a message of its role; completion has none', () => {
    const aside = card({
      name: 'Aside',
      activation: 'always',
      entry: 'Mira watches you.',
      placement: { kind: 'depth', depth: 2, role: 'assistant' },
    });
    const rule = card({
      name: 'Rule',
      activation: 'always',
      entry: '(Stay in the past tense.)',
      placement: { kind: 'depth', depth: 0, role: 'system' },
    });
    const window = ['One.', 'Two.', 'Three.', 'Four.'].map((t, i) => anAction(`a${i}`, t));
    const built = buildContext({ ...aContextHead({ storyCards: [aside, rule] }), window });
    expect(built.storyRoles?.map((r) => [r.role, built.story.slice(r.start, r.end)])).toEqual([
      ['assistant', 'Mira watches you.'],
      ['system', '(Stay in the past tense.)'],
    ]);
    expect(
      built.story.startsWith('One.\n\nTwo.\n\nMira watches you.\n\nThree.\n\nFour.\n\n(Stay'),
    ).toBe(true);
    const completion = buildContext({
      ...aContextHead({ storyCards: [aside, rule], settings: { apiMode: 'completion' } }),
      window,
    });
    expect(completion.storyRoles).toBeUndefined();
    expect(completion.story).toBe(built.story);
    // No depth card: no roles, the prompt as before.
    expect(buildContext({ ...aContextHead(), window }).storyRoles).toBeUndefined();
  });

  it("author's-note placement: at the note's top and bottom, wherever each history mode puts the note", () => {
    const top = card({
      name: 'Top',
      activation: 'always',
      entry: 'Tone: grim.',
      placement: { kind: 'authorsNote', edge: 'top' },
    });
    const bottom = card({
      name: 'Bottom',
      activation: 'always',
      entry: 'Pace: slow.',
      placement: { kind: 'authorsNote', edge: 'bottom' },
    });
    const window = ['One.', 'Two.', 'Three.', 'Four.', 'Five.'].map((t, i) => anAction(`a${i}`, t));
    const note = "[Author's note: Be terse.]";
    const sliding = buildContext({
      ...aContextHead({ storyCards: [bottom, top], authorsNote: 'Be terse.' }),
      window,
    });
    expect(sliding.story).toContain(
      `Two.\n\nTone: grim.\n\n${note}\n\nPace: slow.\n\nThree.\n\nFour.\n\nFive.`,
    );
    expect(sliding.report.cards.map((c) => c.placement)).toEqual(['authorsNote', 'authorsNote']);
    const stable = buildContext({
      ...aContextHead({
        storyCards: [bottom, top],
        authorsNote: 'Be terse.',
        settings: { historyMode: 'stable' },
      }),
      window,
    });
    expect(stable.story).toContain(`Five.\n\nTone: grim.\n\n${note}\n\nPace: slow.`);
    // No note: the cards still go where it would be.
    const bare = buildContext({ ...aContextHead({ storyCards: [top] }), window });
    expect(bare.story).toContain('Two.\n\nTone: grim.\n\nThree.');
    expect(bare.report.sections.map((s) => s.label)).toContain('lore_authors_note_top');
  });

  describe('NovelAI budgets (a token is a character here)', () => {
    const cut = {
      firstTokens: (t: string, n: number) => t.slice(0, Math.max(0, n)),
      lastTokens: (t: string, n: number) => (n <= 0 ? '' : t.slice(-n)),
    };
    const text = 'First sentence here. Second one here.\nThird line ends.';
    const line = (entry: string) => `World Lore: ${entry}`;
    const fit = (overrides: Partial<StoryCard>, budget = 10_000, contextTokens = 10_000) =>
      activateLore(
        [card({ keys: 'x', entry: text, ...overrides })],
        { parts: ['x'] },
        { ...turn, budget, cut, contextTokens },
      );

    it('maxTokens caps an entry: cut from the end back to a sentence, a line or a token, or left out', () => {
      const room = line('').length + 30;
      const end = fit({ budget: { maxTokens: room, trim: 'end' } });
      expect(end.lines.map((l) => l.text)).toEqual([line('First sentence here.')]);
      expect(end.records[0]).toMatchObject({ included: true, trimmed: true });
      const byLine = fit({
        budget: { maxTokens: line('').length + 45, trim: 'end', trimUnit: 'newline' },
      });
      expect(byLine.lines.map((l) => l.text)).toEqual([
        line('First sentence here. Second one here.'),
      ]);
      const byToken = fit({ budget: { maxTokens: room, trim: 'end', trimUnit: 'token' } });
      expect(byToken.lines[0].text).toBe(line(text.slice(0, 30).trim()));
      const whole = fit({ budget: { maxTokens: room, trim: 'none' } });
      expect(whole.lines).toEqual([]);
      expect(whole.records[0].included).toBe(false);
    });

    it('trim start keeps the end; a share in (0, 1] is of the context budget', () => {
      const start = fit({ budget: { maxTokens: line('').length + 20, trim: 'start' } });
      expect(start.lines.map((l) => l.text)).toEqual([line('Third line ends.')]);
      // 10% of a 400-token context: 40 tokens.
      const share = fit({ budget: { maxTokens: 0.1, trim: 'end' } }, 10_000, 400);
      expect(share.lines[0].tokens).toBeLessThanOrEqual(40);
      expect(share.lines[0].text).toBe(line('First sentence here.'));
    });

    it('an entry that does not fit the lore budget left is cut when it may be, instead of dropped', () => {
      const cuttable = fit({ budget: { trim: 'end' } }, line('').length + 25);
      expect(cuttable.lines.map((l) => l.text)).toEqual([line('First sentence here.')]);
      // The seed's cards (no budget) stay all or nothing.
      expect(fit({}, line('').length + 25).lines).toEqual([]);
    });

    it('reserved entries are budgeted first, displacing higher priorities', () => {
      const big = card({ name: 'Big', keys: 'x', entry: 'b'.repeat(50), priority: 900 });
      const held = card({
        name: 'Held',
        keys: 'x',
        entry: 'h'.repeat(50),
        priority: 1,
        budget: { reservedTokens: 60 },
      });
      const result = activateLore([big, held], { parts: ['x'] }, { ...turn, budget: 70, cut });
      expect(result.records.map((r) => [r.name, r.included])).toEqual([
        ['Big', false],
        ['Held', true],
      ]);
    });
  });

  it('an edited card (new objects, the same keys) renders as edited, though its book is not recompiled', () => {
    const before = [card({ id: 'same', name: 'Lamp', keys: 'lamp', entry: 'The lamp is lit.' })];
    expect(fire(before, 'the lamp').lines[0].text).toBe('World Lore: The lamp is lit.');
    const after = [{ ...before[0], entry: 'The lamp is dark.', priority: 7 }];
    expect(fire(after, 'the lamp').lines[0].text).toBe('World Lore: The lamp is dark.');
  });

  it('matches 5,000 cards in one pass, the same as one card at a time', () => {
    const many = Array.from({ length: 5_000 }, (_, i) =>
      card({ name: `N${i}`, keys: `name${i}x, alias${i}y` }),
    );
    const text = Array.from(
      { length: 200 },
      (_, i) => `name${i * 25}x met alias${i * 25 + 1}y.`,
    ).join(' ');
    const names = fired(many, text);
    const oneByOne = many.filter((c) => fired([c], text).length === 1).map((c) => c.name);
    expect(names).toEqual(oneByOne);
    expect(names).toHaveLength(400);
  });
});
