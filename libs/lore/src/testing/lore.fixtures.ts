// Lore files written by hand from each format's specification (docs/lore-formats.md §2), one per
// format and version Chronicle reads. No third-party file is copied: the names and texts are
// ours, the field names and defaults the formats'.

import { crc32, deflateRawSync, deflateSync } from 'node:zlib';

/** AI Dungeon story cards (2023+): a bare array; guard keys keep their spaces. */
export const aidStoryCards = () => [
  {
    keys: ' Bob , Bob.,(Bob ',
    value: 'Bob is the harbourmaster, gruff and fair.',
    type: 'character',
    title: 'Bob',
    description: 'hp: 12\ndmg: 1d6  ',
    useForCharacterCreation: false,
  },
  {
    keys: 'lighthouse',
    value: 'The lighthouse has been dark for a week.',
    type: 'location',
    title: 'The Lighthouse',
    description: '',
    useForCharacterCreation: true,
  },
  // A config card: keyless, never sent, its notes read by scripts.
  { keys: '', value: '', type: 'class', title: 'Config', description: '{"turns":3}' },
  // A duplicate of the first's keys and type: AID drops it on import.
  { keys: ' Bob , Bob.,(Bob ', value: 'A second Bob.', type: 'character', title: 'Bob 2' },
];

/** AI Dungeon legacy world info (2020–2022). */
export const aidWorldInfo = () => [
  { keys: 'mira,keeper', entry: 'Mira keeps the light.', isNotHidden: true, id: '1' },
  { keys: 'tide', entry: 'The tide comes in at dusk.', hidden: false, id: '2' },
];

const stEntry = (overrides: Record<string, unknown>) => ({
  key: [],
  keysecondary: [],
  comment: '',
  content: '',
  constant: false,
  vectorized: false,
  selective: true,
  selectiveLogic: 0,
  addMemo: true,
  order: 100,
  position: 0,
  disable: false,
  excludeRecursion: false,
  preventRecursion: false,
  delayUntilRecursion: 0,
  probability: 100,
  useProbability: true,
  depth: 4,
  group: '',
  groupOverride: false,
  groupWeight: 100,
  scanDepth: null,
  caseSensitive: null,
  matchWholeWords: null,
  useGroupScoring: null,
  automationId: '',
  role: 0,
  sticky: 0,
  cooldown: 0,
  delay: 0,
  displayIndex: 0,
  ...overrides,
});

/** A SillyTavern world (entries keyed by uid), using the features the spec ranks highest. */
export const sillyTavernWorld = () => ({
  name: 'Harbour Town',
  entries: {
    '0': stEntry({
      uid: 0,
      key: ['harbour', 'docks'],
      comment: 'Harbour',
      content: '{{char}} knows every boat in the harbour. {{user}} is new here.',
      order: 150,
    }),
    '1': stEntry({
      uid: 1,
      comment: 'Style',
      content: 'Write in short, salt-stung sentences.',
      constant: true,
      displayIndex: 1,
    }),
    '2': stEntry({
      uid: 2,
      key: ['storm'],
      keysecondary: ['ship', 'boat'],
      selectiveLogic: 1,
      comment: 'Storm at sea',
      content: 'Storms here come without warning.',
      position: 4,
      depth: 2,
      role: 1,
      excludeRecursion: true,
      displayIndex: 2,
    }),
    '3': stEntry({
      uid: 3,
      key: ['/\\bcapt(ain)?\\b/i'],
      comment: 'Captain',
      content: 'The captain drinks. Ask about the harbour.',
      probability: 50,
      group: 'crew',
      sticky: 2,
      cooldown: 3,
      vectorized: true,
      displayIndex: 3,
    }),
    '4': stEntry({
      uid: 4,
      key: ['ghost'],
      comment: 'Disabled ghost',
      content: 'There is no ghost.',
      disable: true,
      displayIndex: 4,
    }),
    '5': stEntry({ uid: 5, comment: 'Inert', content: 'Editor note only.', displayIndex: 5 }),
    '6': stEntry({
      uid: 6,
      key: ['/(a+)+$/'],
      comment: 'Bad regex',
      content: 'Never fires. {{time}}',
      displayIndex: 6,
    }),
  },
  extensions: { chronicle_test: true },
});

const bookEntry = (overrides: Record<string, unknown>) => ({
  keys: [],
  content: '',
  extensions: {},
  enabled: true,
  insertion_order: 100,
  use_regex: true,
  ...overrides,
});

const characterBook = () => ({
  name: 'Mira of the Light',
  description: 'Lore for Mira.',
  scan_depth: 3,
  token_budget: 500,
  recursive_scanning: true,
  extensions: {},
  entries: [
    bookEntry({
      id: 1,
      keys: ['lamp', 'oil'],
      content: 'Lamp oil is scarce; {{char}} rations it.',
      name: 'Lamp oil',
      comment: 'Lamp oil',
      selective: false,
      secondary_keys: ['night'],
      constant: false,
      position: 'before_char',
      extensions: { position: 0, depth: 4, selectiveLogic: 0, exclude_recursion: false },
    }),
    bookEntry({
      id: 2,
      keys: ['keeper'],
      content: '@@depth 1\n@@role assistant\n@@is_greeting 1\nThe keeper is {{char}}.',
      name: 'Keeper',
      insertion_order: 50,
      priority: 10,
      extensions: { prevent_recursion: true, match_whole_words: true },
    }),
    bookEntry({
      id: 3,
      keys: ['rations'],
      content: '@@activate_only_after 9\nRations run out on the ninth day.',
      name: 'Rations',
      case_sensitive: true,
    }),
  ],
});

/** A Character Card V2 (JSON), its book embedded. */
export const characterCardV2 = () => ({
  spec: 'chara_card_v2',
  spec_version: '2.0',
  data: {
    name: 'Mira',
    description: 'The lighthouse keeper.',
    personality: 'Stubborn.',
    scenario: '',
    first_mes: 'The lamp gutters.',
    mes_example: '',
    creator_notes: '',
    system_prompt: '',
    post_history_instructions: '',
    alternate_greetings: [],
    character_book: characterBook(),
    tags: [],
    creator: '',
    character_version: '1',
    extensions: {},
  },
});

/** A Character Card V3 (JSON), with a nickname for {{char}}. */
export const characterCardV3 = () => ({
  spec: 'chara_card_v3',
  spec_version: '3.0',
  data: {
    ...characterCardV2().data,
    nickname: 'Old Mira',
    group_only_greetings: [],
    creation_date: 0,
    modification_date: 0,
  },
});

/** A V3 standalone lorebook. */
export const lorebookV3 = () => ({ spec: 'lorebook_v3', data: characterBook() });

const naiEntry = (overrides: Record<string, unknown>) => ({
  text: '',
  contextConfig: {
    prefix: '',
    suffix: '\n',
    tokenBudget: 1,
    reservedTokens: 0,
    budgetPriority: 400,
    trimDirection: 'trimBottom',
    insertionType: 'newline',
    maximumTrimType: 'sentence',
    insertionPosition: -1,
  },
  lastUpdatedAt: 1_700_000_000_000,
  displayName: 'New Lorebook Entry',
  id: '00000000-0000-4000-8000-000000000000',
  keys: [],
  searchRange: 1000,
  enabled: true,
  forceActivation: false,
  keyRelative: false,
  nonStoryActivatable: false,
  category: '',
  loreBiasGroups: [
    {
      phrases: [],
      ensureSequenceFinish: false,
      generateOnce: true,
      bias: 0,
      enabled: true,
      whenInactive: false,
    },
  ],
  ...overrides,
});

/** A NovelAI lorebook, version 6 shape, with a category. */
export const novelAiLorebook = () => ({
  lorebookVersion: 6,
  entries: [
    naiEntry({
      id: '11111111-1111-4111-8111-111111111111',
      displayName: 'Mira',
      text: 'Mira keeps the light.',
      keys: ['Mira', 'keeper'],
      category: 'cat-1',
    }),
    naiEntry({
      id: '22222222-2222-4222-8222-222222222222',
      displayName: 'Setting',
      text: 'A cold northern coast.',
      forceActivation: true,
      contextConfig: { ...naiEntry({}).contextConfig, budgetPriority: 800, insertionPosition: 0 },
    }),
    naiEntry({
      id: '33333333-3333-4333-8333-333333333333',
      displayName: 'Tide',
      text: 'The tide turns twice a day.',
      keys: ['/tides?/i'],
      searchRange: 5000,
      nonStoryActivatable: true,
      contextConfig: { ...naiEntry({}).contextConfig, prefix: '----\n', insertionPosition: -5 },
    }),
  ],
  settings: { orderByKeyLocations: false },
  categories: [
    {
      name: 'People',
      id: 'cat-1',
      enabled: true,
      createSubcontext: false,
      subcontextSettings: naiEntry({}),
      useCategoryDefaults: false,
      categoryDefaults: naiEntry({}),
      categoryBiasGroups: [],
    },
  ],
});

/** A NovelAI lorebook as 2021 exports wrote it (version 1, fewer fields). */
export const novelAiLorebookV1 = () => ({
  lorebookVersion: 1,
  entries: [
    {
      text: 'Old lore.',
      contextConfig: {
        prefix: '',
        suffix: '\n',
        tokenBudget: 2048,
        reservedTokens: 0,
        budgetPriority: 400,
        trimDirection: 'trimBottom',
        insertionType: 'newline',
        insertionPosition: -1,
      },
      lastUpdatedAt: 1_620_000_000_000,
      displayName: 'Old entry',
      keys: ['old'],
      searchRange: 1000,
      enabled: true,
      forceActivation: false,
      keyRelative: false,
      nonStoryActivatable: false,
    },
  ],
});

/** KoboldAI Lite world info, as Lite's export writes it (a bare array). */
export const koboldWorldInfo = () => [
  {
    key: 'mira,keeper',
    keysecondary: 'lamp',
    keyanti: 'dream',
    content: 'Mira keeps the light.',
    comment: 'Mira',
    folder: null,
    selective: true,
    constant: false,
    probability: 100,
    wigroup: 'People',
    widisabled: false,
  },
  {
    key: '',
    keysecondary: '',
    keyanti: '',
    content: 'It is always winter.',
    comment: 'Winter',
    folder: null,
    selective: false,
    constant: true,
    probability: 60,
    wigroup: '',
    widisabled: false,
  },
];

/** A KoboldAI Lite save holding world info and its search depth. */
export const koboldSave = () => ({
  title: 'A Lite story',
  gametext_arr: ['Once.'],
  worldinfo: koboldWorldInfo(),
  wisearchdepth: 800,
  wiinsertlocation: 0,
});

// ----- Containers -----

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

/** A 1×1 PNG with text chunks (tEXt, or zTXt when `compressed`). */
export function pngWithText(
  texts: Record<string, string>,
  { compressed = false, extra = [] as Buffer[] } = {},
): Buffer {
  const ihdr = Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0]);
  const idat = deflateSync(Buffer.from([0, 0]));
  const textChunks = Object.entries(texts).map(([keyword, text]) =>
    compressed
      ? chunk(
          'zTXt',
          Buffer.concat([
            Buffer.from(`${keyword}\0\0`, 'latin1'),
            deflateSync(Buffer.from(text, 'latin1')),
          ]),
        )
      : chunk('tEXt', Buffer.from(`${keyword}\0${text}`, 'latin1')),
  );
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    ...textChunks,
    ...extra,
    chunk('IDAT', idat),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

export const base64Json = (value: unknown) =>
  Buffer.from(JSON.stringify(value), 'utf8').toString('base64');

/** A zip (deflate) of the given files, as a .charx is. */
export function zipOf(files: Record<string, Buffer | string>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, content] of Object.entries(files)) {
    const data = Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8');
    const packed = deflateRawSync(data);
    const nameBytes = Buffer.from(name, 'utf8');
    const crc = crc32(data) >>> 0;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, packed);
    centrals.push(central, nameBytes);
    offset += 30 + nameBytes.length + packed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(files).length, 8);
  end.writeUInt16LE(Object.keys(files).length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

export const jsonBytes = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8');

/** A SillyTavern world of `count` entries, with multi-kilobyte non-ASCII contents now and then. */
export function largeWorld(count: number) {
  const entries: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) {
    entries[String(i)] = stEntry({
      uid: i,
      key: [`关键词${i}`, `key-${i}`],
      comment: `条目 ${i}`,
      content: i % 100 === 0 ? `灯塔的故事。`.repeat(400) : `Entry ${i} of the book.`,
      constant: i % 50 === 0,
      order: i % 7,
      displayIndex: i,
    });
  }
  return { name: 'Big book', entries };
}

/** An Agnai memory book, written from its MemoryBook type (spec §2.6). */
export const agnaiMemoryBook = () => ({
  kind: 'memory',
  name: 'Harbour memory',
  description: 'What the town remembers.',
  entries: [
    {
      name: 'Mira',
      entry: 'Mira keeps the light.',
      keywords: ['Mira', 'keeper'],
      priority: 10,
      weight: 10,
      enabled: true,
    },
    {
      name: 'Tide',
      entry: 'The tide turns at dusk.',
      keywords: ['tide'],
      priority: 5,
      weight: 20,
      enabled: true,
    },
    {
      name: 'Old rumour',
      entry: 'Nobody believes it.',
      keywords: ['rumour'],
      priority: 1,
      weight: 1,
      enabled: false,
    },
    { name: 'Note', entry: 'No keys here.', keywords: [], priority: 0, weight: 0, enabled: true },
  ],
});

/** A Risu lorebook (spec §2.6): keys as comma strings. */
export const risuLorebook = () => ({
  type: 'risu',
  ver: 1,
  data: [
    {
      key: 'bell, tower',
      secondkey: '',
      comment: 'Bell',
      content: 'The bell is cracked.',
      mode: 'normal',
      insertorder: 120,
      alwaysActive: false,
      selective: false,
      activationPercent: 100,
    },
    {
      key: 'ship',
      secondkey: 'storm, night',
      comment: 'Wreck',
      content: 'A ship wrecked in a storm.',
      mode: 'normal',
      insertorder: 90,
      alwaysActive: false,
      selective: true,
      activationPercent: 40,
    },
    {
      key: '',
      secondkey: '',
      comment: 'Rules',
      content: 'Write in the past tense.',
      mode: 'normal',
      insertorder: 100,
      alwaysActive: true,
      selective: false,
    },
    {
      key: '',
      secondkey: '',
      comment: 'Places',
      content: '',
      mode: 'folder',
      insertorder: 100,
      alwaysActive: false,
      selective: false,
    },
  ],
});

/** A NovelAI story file (`.story`): its lorebook under `content.lorebook` (spec §2.4). */
export const novelAiStory = () => ({
  storyContainerVersion: 1,
  metadata: { storyMetadataVersion: 1, id: 'story-1', title: 'The Drowned Bell', remoteId: '' },
  content: {
    storyContentVersion: 6,
    settings: { parameters: {} },
    story: { version: 2, step: 0, datablocks: [] },
    context: [{ text: 'Memory text', contextConfig: { budgetPriority: 800 } }],
    lorebook: novelAiLorebook(),
  },
});
