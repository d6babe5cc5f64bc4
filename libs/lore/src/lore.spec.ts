import { deflateRawSync, deflateSync } from 'node:zlib';
import { LIMITS, type Lorebook, type StoryCard } from '@chronicle/adventure';
import { exportLore, type ExportFormat } from './lore.export';
import { readLoreFile, sniffFormat } from './lore.import';
import { LoreFileError, type ParsedBook } from './lore.types';
import {
  aidStoryCards,
  aidWorldInfo,
  base64Json,
  characterCardV2,
  characterCardV3,
  jsonBytes,
  koboldSave,
  koboldWorldInfo,
  largeWorld,
  lorebookV3,
  agnaiMemoryBook,
  novelAiLorebook,
  novelAiLorebookV1,
  novelAiStory,
  pngWithText,
  risuLorebook,
  sillyTavernWorld,
  zipOf,
} from './testing';

/** A parsed book as an adventure holds it: ids given, the book recorded. */
function held(book: ParsedBook, bookId = 'book-1'): { cards: StoryCard[]; books: Lorebook[] } {
  return {
    cards: book.cards.map((card, i) => ({
      ...card,
      id: `card-${i}`,
      origin: { ...card.origin, bookId },
    })),
    books: [
      {
        id: bookId,
        format: book.format,
        formatVersion: book.formatVersion,
        name: book.name,
        raw: book.raw,
      },
    ],
  };
}

const roundTrip = (file: unknown, format: ExportFormat) => {
  const { cards, books } = held(readLoreFile(jsonBytes(file)));
  return exportLore(format, cards, books);
};

describe('reading lore files', () => {
  it('sniffs every format by its shape', () => {
    expect(sniffFormat(aidStoryCards())).toBe('aid');
    expect(sniffFormat(aidWorldInfo())).toBe('aid');
    expect(sniffFormat(sillyTavernWorld())).toBe('sillytavern');
    expect(sniffFormat(characterCardV2())).toBe('ccv2');
    expect(sniffFormat(characterCardV3())).toBe('ccv3');
    expect(sniffFormat(lorebookV3())).toBe('ccv3');
    expect(sniffFormat(characterCardV2().data.character_book)).toBe('ccv2');
    expect(sniffFormat(novelAiLorebook())).toBe('novelai');
    expect(sniffFormat(novelAiLorebookV1())).toBe('novelai');
    expect(sniffFormat(koboldWorldInfo())).toBe('kobold');
    expect(sniffFormat(koboldSave())).toBe('kobold');
    expect(sniffFormat({ hello: 'world' })).toBeNull();
  });

  it('AI Dungeon: raw keys with their spaces, title, type and notes byte-exact, keyless cards inert, duplicates skipped', () => {
    const book = readLoreFile(jsonBytes(aidStoryCards()));
    expect(book).toMatchObject({ format: 'aid', formatVersion: 'story-cards' });
    expect(book.cards[0]).toMatchObject({
      name: 'Bob',
      keys: ' Bob , Bob.,(Bob ',
      keySyntax: 'aid',
      entry: 'Bob is the harbourmaster, gruff and fair.',
      type: 'character',
      notes: 'hp: 12\ndmg: 1d6  ',
    });
    expect(book.cards[2]).toMatchObject({
      name: 'Config',
      activation: 'inert',
      notes: '{"turns":3}',
    });
    // The fourth has the first's keys and type but its own text: kept (issue 27).
    expect(book.cards).toHaveLength(4);
    expect(book.cards[3]).toMatchObject({ name: 'Bob 2', entry: 'A second Bob.' });
    expect(book.report.skipped).toEqual([]);
    expect(book.report.keptOnlyVerbatim).toEqual([
      { index: 1, card: 'The Lighthouse', features: ['useForCharacterCreation'] },
    ]);
  });

  it('given an AI Dungeon export with cards of the same keys and type but different text, then all are kept; an exact copy is left out and named in the report', () => {
    // Shaped like a real 324-card export where 3 cards share keys and type with another:
    // a character card written twice, and two inert config cards (empty keys, one type).
    const card = (title: string, value: string, keys = 'Vex, the rogue', type = 'character') => ({
      keys,
      value,
      type,
      title,
      description: '',
      useForCharacterCreation: false,
    });
    const file = [
      card('Vex', 'Vex is a half-elf rogue.'),
      card('Vex (later)', 'Vex lost an eye in the siege.'),
      card('Config: stats', '{"str":10}', '', 'class'),
      card('Config: inventory', '["rope"]', '', 'class'),
      card('Vex', 'Vex is a half-elf rogue.'),
    ];
    const book = readLoreFile(jsonBytes(file));
    expect(book.cards.map((c) => c.name)).toEqual([
      'Vex',
      'Vex (later)',
      'Config: stats',
      'Config: inventory',
    ]);
    expect(book.report.skipped).toEqual([
      { index: 4, reason: 'an exact copy of entry 0; kept once' },
    ]);
  });

  it('AI Dungeon legacy world info', () => {
    const book = readLoreFile(jsonBytes(aidWorldInfo()));
    expect(book.formatVersion).toBe('world-info');
    expect(book.cards[0]).toMatchObject({
      keys: 'mira,keeper',
      entry: 'Mira keeps the light.',
      type: 'other',
    });
    expect(book.report.keptOnlyVerbatim[0].features).toEqual(['hidden']);
  });

  it('SillyTavern: constant, order, depth with role, secondary logic, recursion flags, regex, disabled, inert', () => {
    const book = readLoreFile(jsonBytes(sillyTavernWorld()));
    expect(book).toMatchObject({
      format: 'sillytavern',
      name: 'Harbour Town',
      raw: { name: 'Harbour Town', extensions: { chronicle_test: true } },
    });
    const [harbour, style, storm, captain, ghost, inert, bad] = book.cards;
    expect(harbour).toMatchObject({
      keys: 'harbour\ndocks',
      keySyntax: 'lines',
      priority: 150,
      scan: { actions: 2 },
    });
    expect(harbour.recursion).toEqual({ feedsOthers: true, triggeredByOthers: true });
    expect(style).toMatchObject({ activation: 'always', name: 'Style' });
    expect(storm).toMatchObject({
      conditions: [{ mode: 'notAllOf', keys: ['ship', 'boat'] }],
      placement: { kind: 'depth', depth: 2, role: 'user' },
      recursion: { feedsOthers: true, triggeredByOthers: false },
    });
    expect(captain).toMatchObject({
      keys: '/\\bcapt(ain)?\\b/i',
      probability: 50,
      group: { names: ['crew'] },
      timing: { sticky: 2, cooldown: 3 },
    });
    expect(ghost.enabled).toBe(false);
    expect(inert.activation).toBe('inert');
    expect(bad.name).toBe('Bad regex');
    expect(book.report.badRegexes).toEqual([
      {
        index: 6,
        card: 'Bad regex',
        key: '/(a+)+$/',
        problem: expect.stringMatching(/nested repetition/),
      },
    ]);
    expect(book.report.unknownMacros).toEqual([
      { index: 6, card: 'Bad regex', macros: ['{{time}}'] },
    ]);
    expect(book.report.keptOnlyVerbatim).toEqual([
      { index: 3, card: 'Captain', features: ['vectorized'] },
    ]);
  });

  it("SillyTavern's Author's Note top and bottom positions go beside the author's note, and export back", () => {
    const world = {
      entries: {
        '0': { uid: 0, key: ['a'], content: 'top', position: 2 },
        '1': { uid: 1, key: ['b'], content: 'bottom', position: 3 },
      },
    };
    const [top, bottom] = readLoreFile(jsonBytes(world)).cards;
    expect(top.placement).toEqual({ kind: 'authorsNote', edge: 'top' });
    expect(bottom.placement).toEqual({ kind: 'authorsNote', edge: 'bottom' });
    const written = exportLore(
      'sillytavern',
      [top, bottom].map(({ origin: _, ...card }) => card),
      [],
    ).file as { entries: Record<string, { position: number }> };
    expect(Object.values(written.entries).map((e) => e.position)).toEqual([2, 3]);
  });

  it('SillyTavern entries as a list (as Lite accepts) read the same', () => {
    const world = sillyTavernWorld();
    const asList = { ...world, entries: Object.values(world.entries) };
    expect(readLoreFile(jsonBytes(asList)).cards).toEqual(readLoreFile(jsonBytes(world)).cards);
  });

  it('Character Card V2: the book, secondary keys off unless selective, decorators, {{char}} from the card', () => {
    const book = readLoreFile(jsonBytes(characterCardV2()));
    expect(book).toMatchObject({ format: 'ccv2', formatVersion: '2.0', name: 'Mira of the Light' });
    const [oil, keeper, rations] = book.cards;
    expect(oil).toMatchObject({
      keys: 'lamp\noil',
      charName: 'Mira',
      scan: { actions: 3 },
      priority: 100,
    });
    expect(oil.conditions).toBeUndefined();
    expect(keeper).toMatchObject({
      entry: 'The keeper is {{char}}.',
      placement: { kind: 'depth', depth: 1, role: 'assistant' },
      priority: 50,
      wholeWords: true,
      recursion: { feedsOthers: false, triggeredByOthers: true },
    });
    expect(rations).toMatchObject({
      caseSensitive: true,
      timing: { delay: 9 },
      entry: 'Rations run out on the ninth day.',
    });
    expect(book.report.keptOnlyVerbatim).toEqual([
      { index: 1, card: 'Keeper', features: ['@@is_greeting', 'priority (budget drop order)'] },
    ]);
    expect(book.report.notes[0]).toMatch(/only the card's character_book/);
  });

  it('Character Card V3 uses the nickname for {{char}}; a lorebook_v3 reads as ccv3', () => {
    expect(readLoreFile(jsonBytes(characterCardV3())).cards[0]).toMatchObject({
      charName: 'Old Mira',
    });
    const standalone = readLoreFile(jsonBytes(lorebookV3()));
    expect(standalone).toMatchObject({ format: 'ccv3', formatVersion: 'lorebook_v3' });
    expect(standalone.cards[0].charName).toBe('Mira of the Light');
  });

  it('NovelAI v6: prefix and suffix around the text, priority from budgetPriority, 1,000-character window, cascade, categories', () => {
    const book = readLoreFile(jsonBytes(novelAiLorebook()));
    expect(book).toMatchObject({ format: 'novelai', formatVersion: '6' });
    const [mira, setting, tide] = book.cards;
    expect(mira).toMatchObject({
      entry: 'Mira keeps the light.\n',
      type: 'People',
      priority: 100,
      scan: { chars: 1000 },
      wholeWords: true,
    });
    expect(setting).toMatchObject({ activation: 'always', priority: 500 });
    expect(tide).toMatchObject({
      entry: '----\nThe tide turns twice a day.\n',
      scan: { chars: 5000 },
      recursion: { feedsOthers: true, triggeredByOthers: true },
    });
    expect(book.report.keptOnlyVerbatim.map((n) => n.features)).toEqual([
      ['category'],
      ['insertionPosition'],
      ['insertionPosition'],
    ]);
  });

  it('NovelAI v1 (2021)', () => {
    const book = readLoreFile(jsonBytes(novelAiLorebookV1()));
    expect(book.formatVersion).toBe('1');
    expect(book.cards[0]).toMatchObject({ name: 'Old entry', keys: 'old' });
    // Its 2,048-token budget and bottom trimming are the card's own budget now, not verbatim.
    expect(book.cards[0].budget).toEqual({ maxTokens: 2048, trim: 'end', trimUnit: 'sentence' });
    expect(book.report.keptOnlyVerbatim).toEqual([]);
  });

  it('KoboldAI Lite: secondary keys anyOf plus anti-keys noneOf, constant, disabled; a save gives its search depth', () => {
    const book = readLoreFile(jsonBytes(koboldWorldInfo()));
    expect(book.cards[0]).toMatchObject({
      keys: 'mira,keeper',
      type: 'People',
      conditions: [
        { mode: 'anyOf', keys: ['lamp'] },
        { mode: 'noneOf', keys: ['dream'] },
      ],
    });
    expect(book.cards[1]).toMatchObject({ activation: 'always' });
    expect(book.cards[1].probability).toBe(60);
    expect(book.report.keptOnlyVerbatim).toEqual([]);
    const save = readLoreFile(jsonBytes(koboldSave()));
    expect(save).toMatchObject({
      formatVersion: 'save',
      raw: { wisearchdepth: 800, wiinsertlocation: 0 },
    });
    expect(save.cards[0].scan).toEqual({ chars: 800 });
  });

  it('honours ?format= and says when the file is not that format', () => {
    expect(readLoreFile(jsonBytes(koboldWorldInfo()), 'kobold').format).toBe('kobold');
    expect(() => readLoreFile(jsonBytes(aidStoryCards()), 'sillytavern')).toThrow(
      /SillyTavern world is an object with "entries"/,
    );
  });
});

describe('containers', () => {
  it('reads a V2 card from a PNG chara chunk, and prefers ccv3 when both are there', () => {
    const v2 = pngWithText({ chara: base64Json(characterCardV2()) });
    expect(readLoreFile(v2)).toMatchObject({ format: 'ccv2', cards: expect.any(Array) });
    const both = pngWithText({
      chara: base64Json(characterCardV2()),
      ccv3: base64Json(characterCardV3()),
    });
    expect(readLoreFile(both)).toMatchObject({ format: 'ccv3' });
    expect(readLoreFile(both).cards[0].charName).toBe('Old Mira');
    const compressed = pngWithText({ ccv3: base64Json(characterCardV3()) }, { compressed: true });
    expect(readLoreFile(compressed).format).toBe('ccv3');
  });

  it('reads card.json from a .charx zip', () => {
    const charx = zipOf({
      'assets/icon.png': Buffer.alloc(10),
      'card.json': JSON.stringify(characterCardV3()),
    });
    expect(readLoreFile(charx)).toMatchObject({ format: 'ccv3', name: 'Mira of the Light' });
  });

  it('Agnai memory books: keywords, entry, enabled, priority; a weight ordering otherwise kept verbatim', () => {
    expect(sniffFormat(agnaiMemoryBook())).toBe('agnai');
    const book = readLoreFile(jsonBytes(agnaiMemoryBook()));
    expect(book).toMatchObject({ format: 'agnai', name: 'Harbour memory' });
    const [mira, tide, rumour, note] = book.cards;
    expect(mira).toMatchObject({
      name: 'Mira',
      keys: 'Mira\nkeeper',
      keySyntax: 'lines',
      entry: 'Mira keeps the light.',
      priority: 10,
      origin: { format: 'agnai', raw: agnaiMemoryBook().entries[0] },
    });
    expect(tide.priority).toBe(5);
    expect(rumour.enabled).toBe(false);
    expect(note.activation).toBe('inert');
    // Tide has the lower priority but the higher weight: the render order is not Chronicle's.
    expect(book.report.keptOnlyVerbatim.map((n) => n.card)).toContain('Tide');
    expect(book.raw).toEqual({
      kind: 'memory',
      name: 'Harbour memory',
      description: 'What the town remembers.',
    });
  });

  it('Risu lorebooks: comma keys, second keys when selective, always-on, order and chance; folders skipped', () => {
    expect(sniffFormat(risuLorebook())).toBe('risu');
    const book = readLoreFile(jsonBytes(risuLorebook()));
    expect(book.format).toBe('risu');
    const [bell, wreck, rules] = book.cards;
    expect(bell).toMatchObject({ name: 'Bell', keys: 'bell\ntower', priority: 120 });
    expect(bell.conditions).toBeUndefined();
    expect(wreck).toMatchObject({
      conditions: [{ mode: 'anyOf', keys: ['storm', 'night'] }],
      probability: 40,
      priority: 90,
    });
    expect(rules).toMatchObject({ activation: 'always', entry: 'Write in the past tense.' });
    expect(book.cards).toHaveLength(3);
    expect(book.report.skipped).toEqual([{ index: 3, reason: 'a folder, not an entry' }]);
  });

  it("NovelAI stories and lorebook images: the .story's content.lorebook, the PNG's naidata chunk", () => {
    expect(sniffFormat(novelAiStory())).toBe('novelai');
    const story = readLoreFile(jsonBytes(novelAiStory()));
    const bare = readLoreFile(jsonBytes(novelAiLorebook()));
    expect(story).toMatchObject({
      format: 'novelai',
      formatVersion: 'story 6',
      name: 'The Drowned Bell',
    });
    expect(story.cards).toEqual(bare.cards);
    expect(story.report.notes[0]).toMatch(/only the story's lorebook/);
    const image = readLoreFile(pngWithText({ naidata: base64Json(novelAiLorebook()) }));
    expect(image.cards).toEqual(bare.cards);
    // Some writers put the JSON in the chunk as is.
    const plain = pngWithText({ naidata: JSON.stringify(novelAiLorebookV1()) });
    expect(readLoreFile(plain).cards[0].name).toBe('Old entry');
  });

  it('refuses malformed files, naming the problem', () => {
    const png = pngWithText({ chara: base64Json(characterCardV2()) });
    const cases: [Buffer, RegExp][] = [
      [Buffer.alloc(0), /the file is empty/],
      [Buffer.from('{"entries": '), /the file is not valid JSON/],
      [Buffer.from('{"hello": 1}'), /not a lore format Chronicle reads/],
      [png.subarray(0, png.length - 30), /runs past the end|cut short/],
      [pngWithText({ Comment: 'hi' }), /no "chara", "ccv3" or "naidata" text chunk/],
      [pngWithText({ naidata: '%%%' }), /naidata chunk is not base64/],
      [
        jsonBytes({ storyContainerVersion: 1, content: {} }),
        /NovelAI story holds no lorebook: content\.lorebook/,
      ],
      [
        jsonBytes({ scenarioVersion: 3, lorebook: { entries: 'x' } }),
        /NovelAI scenario holds no lorebook/,
      ],
      [pngWithText({ chara: '%%%' }), /not base64/],
      [zipOf({ 'other.json': '{}' }), /no card.json/],
      [zipOf({ 'card.json': '{' }).subarray(0, 40), /no central directory/],
      [Buffer.from([0xff, 0xfe, 0x00, 0x41]), /neither UTF-8 text/],
      [
        Buffer.from(`[{"keys":"a","value":${'['.repeat(10_000)}${']'.repeat(10_000)}}]`),
        /more than 64 deep/,
      ],
    ];
    for (const [bytes, message] of cases) {
      expect(() => readLoreFile(bytes)).toThrow(LoreFileError);
      expect(() => readLoreFile(bytes)).toThrow(message);
    }
  });

  it('stops a zip bomb and a PNG bomb at the inflate cap', () => {
    const huge = Buffer.alloc(LIMITS.loreInflatedBytes + 1024);
    // Honest sizes: refused from the directory, before inflating.
    expect(() => readLoreFile(zipOf({ 'card.json': huge }))).toThrow(/limit loreInflatedBytes/);
    // Lying sizes (the directory says 2 bytes): the inflate cap stops it.
    const liar = zipOf({ 'card.json': huge });
    const directory = liar.lastIndexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    liar.writeUInt32LE(2, directory + 24);
    expect(deflateRawSync(huge).length).toBeLessThan(100_000);
    expect(() => readLoreFile(liar)).toThrow(/inflates past \d+ bytes \(limit loreInflatedBytes\)/);
    const pngBomb = pngWithText(
      {},
      {
        extra: [
          (() => {
            const data = Buffer.concat([Buffer.from('ccv3\0\0', 'latin1'), deflateSync(huge)]);
            const head = Buffer.alloc(8);
            head.writeUInt32BE(data.length, 0);
            head.write('zTXt', 4, 'latin1');
            return Buffer.concat([head, data, Buffer.alloc(4)]);
          })(),
        ],
      },
    );
    expect(() => readLoreFile(pngBomb)).toThrow(/inflates past/);
  });
});

describe('exporting', () => {
  it.each([
    ['aid', aidStoryCards().slice(0, 3)],
    ['aid', aidWorldInfo()],
    ['sillytavern', sillyTavernWorld()],
    ['ccv3', lorebookV3()],
    ['novelai', novelAiLorebook()],
    ['novelai', novelAiLorebookV1()],
    ['kobold', koboldWorldInfo()],
  ] as const)('is lossless through the same format (%s)', (format, file) => {
    const exported = roundTrip(file, format);
    expect(exported.file).toEqual(file);
    expect(exported.warnings.filter((w) => !/replaces every story card/.test(w))).toEqual([]);
  });

  it('keeps a card book through ccv3 as a lorebook_v3', () => {
    expect(roundTrip(characterCardV2(), 'ccv3').file).toEqual({
      spec: 'lorebook_v3',
      data: characterCardV2().data.character_book,
    });
  });

  it('writes only the fields the player changed over the source entry', () => {
    const { cards, books } = held(readLoreFile(jsonBytes(sillyTavernWorld())));
    cards[0] = { ...cards[0], entry: 'Edited.', priority: 10 };
    const file = exportLore('sillytavern', cards, books).file as {
      entries: Record<string, Record<string, unknown>>;
    };
    expect(file.entries['0']).toEqual({
      ...sillyTavernWorld().entries['0'],
      content: 'Edited.',
      order: 10,
    });
    expect(file.entries['3']).toEqual(sillyTavernWorld().entries['3']);
  });

  it('SillyTavern → AI Dungeon lists its losses', () => {
    const { file, warnings } = roundTrip(sillyTavernWorld(), 'aid');
    expect((file as { keys: string; value: string }[])[0]).toMatchObject({
      keys: 'harbour,docks',
      title: 'Harbour',
    });
    expect(warnings).toEqual(
      expect.arrayContaining([
        'always-on cards have no AID equivalent (put them in Plot Essentials): 1 card',
        'secondary-key conditions: 1 card',
        'depth placement: 1 card',
        'regex keys: 2 cards',
        'sillytavern source fields Chronicle keeps only verbatim (not carried into aid): 7 cards',
        'AI Dungeon replaces every story card on import',
      ]),
    );
  });

  it('AI Dungeon → SillyTavern keeps type and notes under chronicle', () => {
    const { file } = roundTrip(aidStoryCards(), 'sillytavern');
    const entries = (file as { entries: Record<string, Record<string, unknown>> }).entries;
    expect(entries['0']).toMatchObject({
      uid: 0,
      key: [' Bob ', ' Bob.', '(Bob '],
      comment: 'Bob',
      chronicle: { type: 'character', notes: 'hp: 12\ndmg: 1d6  ' },
    });
    expect(entries['2']).toMatchObject({ disable: true });
  });

  it('KoboldAI Lite → NovelAI and ccv3, with losses', () => {
    const nai = roundTrip(koboldWorldInfo(), 'novelai');
    expect(nai.warnings).toContain(
      'secondary-key conditions (NovelAI has no AND/NOT keys): 1 card',
    );
    expect(
      (nai.file as { entries: { forceActivation: boolean }[] }).entries[1].forceActivation,
    ).toBe(true);
    const cc = roundTrip(koboldWorldInfo(), 'ccv3');
    expect(cc.warnings).toContain(
      'a second secondary-key condition (one selectiveLogic per entry): 1 card',
    );
  });

  it('NovelAI → SillyTavern: a character window is lost, priority carries', () => {
    const { file, warnings } = roundTrip(novelAiLorebook(), 'sillytavern');
    expect(warnings).toContain('character scan windows (ST counts messages): 3 cards');
    expect((file as { entries: Record<string, { order: number }> }).entries['1'].order).toBe(500);
  });

  it('a 5,000-entry book reads and round-trips', () => {
    const world = largeWorld(5_000);
    const book = readLoreFile(jsonBytes(world));
    expect(book.cards).toHaveLength(5_000);
    expect(book.cards.filter((card) => card.activation === 'always')).toHaveLength(100);
    expect(roundTrip(world, 'sillytavern').file).toEqual(world);
  });
});
