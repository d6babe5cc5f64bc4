// SillyTavern world info: `{entries: {<uid>: entry}, name?, …}` (entries may also be an array).
// Fields and defaults as docs/lore-formats.md §2.2 gives them (SillyTavern's newWorldInfoEntryDefinition).

import type {
  CardCondition,
  CardPlacement,
  CardRecursion,
  CardTiming,
  ConditionMode,
} from '@chronicle/context';
import { readDecorators } from '../decorators';
import { keyList, type Codec, type ExportCard } from '../lore.codec';
import { bool, num, str, strings, type Json } from '../lore.types';

/** SillyTavern's default scan depth: the last 2 messages, about 2 actions. */
export const ST_SCAN_MESSAGES = 2;
/** selectiveLogic 0..3, in SillyTavern's numbering. */
export const SELECTIVE_LOGIC: readonly ConditionMode[] = ['anyOf', 'notAllOf', 'noneOf', 'allOf'];
const ROLES = ['system', 'user', 'assistant'] as const;

export interface StContext {
  /** SillyTavern keeps recursion in user settings; on when any entry uses a recursion flag. */
  recursive: boolean;
  scanMessages: number;
}

const RECURSION_FLAGS = ['excludeRecursion', 'preventRecursion', 'delayUntilRecursion'];

/** ST's own field names and the Character Card `extensions` spellings (snake_case) of the same. */
export interface StFields {
  key: string[];
  keysecondary: string[];
  selective: boolean;
  selectiveLogic: number;
  comment: string;
  content: string;
  constant: boolean;
  disable: boolean;
  order: number;
  position: number;
  depth: number;
  role: number;
  scanDepth: number | null;
  caseSensitive: boolean | null;
  matchWholeWords: boolean | null;
  excludeRecursion: boolean;
  preventRecursion: boolean;
  delayUntilRecursion: number;
  probability: number;
  useProbability: boolean;
  group: string;
  groupWeight: number;
  groupOverride: boolean;
  delay: number;
  sticky: number;
  cooldown: number;
}

/** What an ST-shaped entry means to Chronicle; shared by the world file and card books. */
export function readStFields(
  f: StFields,
  ctx: StContext,
  index: number,
): { card: ReturnType<typeof baseCard>; verbatim: string[] } {
  const decorated = readDecorators(f.content);
  const keys = f.key.map((k) => k.trim()).filter(Boolean);
  const conditions: CardCondition[] = [];
  const secondary = f.keysecondary.map((k) => k.trim()).filter(Boolean);
  if (f.selective && secondary.length > 0) {
    conditions.push({ mode: SELECTIVE_LOGIC[f.selectiveLogic] ?? 'anyOf', keys: secondary });
  }
  conditions.push(...decorated.conditions);
  let placement: CardPlacement | undefined;
  const verbatim = [...decorated.unsupported];
  if (f.position === 4) {
    placement = { kind: 'depth', depth: f.depth, role: ROLES[f.role] ?? 'system' };
  } else if (f.position === 2 || f.position === 3) {
    // Top / bottom of the Author's Note: beside Chronicle's author's note, wherever it goes.
    placement = { kind: 'authorsNote', edge: f.position === 2 ? 'top' : 'bottom' };
  } else if (f.position >= 5) {
    verbatim.push(`position ${f.position}`);
  }
  if (decorated.placement) placement = { ...placement, ...decorated.placement };
  const activation =
    decorated.activation ?? (f.constant ? 'always' : keys.length === 0 ? 'inert' : undefined);
  const recursion: CardRecursion | undefined = ctx.recursive
    ? {
        feedsOthers: !f.preventRecursion,
        triggeredByOthers: !f.excludeRecursion,
        ...(f.delayUntilRecursion > 0 && { delayLevel: Math.floor(f.delayUntilRecursion) }),
      }
    : undefined;
  const card = baseCard({
    name: f.comment || keys[0] || `Entry ${index + 1}`,
    keys: keys.join('\n'),
    entry: decorated.text,
    enabled: !f.disable,
    activation,
    priority: f.order,
    caseSensitive: f.caseSensitive,
    wholeWords: f.matchWholeWords,
    scanActions: decorated.scanActions ?? f.scanDepth ?? ctx.scanMessages,
    conditions,
    placement,
    recursion,
  });
  const probability = f.useProbability ? f.probability : 100;
  const names = f.group
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const delay = Math.max(0, Math.floor(f.delay), decorated.delay ?? 0);
  const timing: CardTiming = {
    ...(delay > 0 && { delay }),
    ...(f.sticky > 0 && { sticky: Math.floor(f.sticky) }),
    ...(f.cooldown > 0 && { cooldown: Math.floor(f.cooldown) }),
  };
  return {
    card: {
      ...card,
      ...(Object.keys(timing).length > 0 && { timing }),
      ...(probability < 100 && { probability: Math.max(0, probability) }),
      ...(names.length > 0 && {
        group: {
          names,
          ...(f.groupWeight !== 100 && { weight: f.groupWeight }),
          ...(f.groupOverride && { override: true }),
        },
      }),
    },
    verbatim,
  };
}

function baseCard(fields: {
  name: string;
  keys: string;
  entry: string;
  enabled: boolean;
  activation: 'always' | 'inert' | undefined;
  priority: number;
  caseSensitive: boolean | null;
  matchWholeWords?: never;
  wholeWords: boolean | null;
  scanActions: number;
  conditions: CardCondition[];
  placement: CardPlacement | undefined;
  recursion: CardRecursion | undefined;
}) {
  return {
    name: fields.name,
    keys: fields.keys,
    keySyntax: 'lines' as const,
    entry: fields.entry,
    type: 'lore',
    notes: '',
    ...(fields.enabled ? {} : { enabled: false }),
    ...(fields.activation && { activation: fields.activation }),
    priority: fields.priority,
    ...(fields.caseSensitive !== null && { caseSensitive: fields.caseSensitive }),
    ...(fields.wholeWords !== null && { wholeWords: fields.wholeWords }),
    scan: { actions: fields.scanActions },
    ...(fields.conditions.length > 0 && { conditions: fields.conditions }),
    ...(fields.placement && { placement: fields.placement }),
    ...(fields.recursion && { recursion: fields.recursion }),
  };
}

/** The ST fields a Chronicle card writes (the inverse of readStFields, lossy where noted). */
export function writeStFields(card: ExportCard, warn: (loss: string) => void): Partial<StFields> {
  const conditions = card.conditions ?? [];
  if (conditions.length > 1)
    warn('a second secondary-key condition (one selectiveLogic per entry)');
  const first = conditions[0];
  const placement = card.placement?.kind === 'depth' ? card.placement : undefined;
  const note = card.placement?.kind === 'authorsNote' ? card.placement : undefined;
  return {
    key: keyList(card),
    keysecondary: first?.keys ?? [],
    selective: first !== undefined,
    selectiveLogic: first ? Math.max(0, SELECTIVE_LOGIC.indexOf(first.mode)) : 0,
    comment: card.name,
    content: card.entry,
    constant: card.activation === 'always',
    disable: card.enabled === false || card.activation === 'inert',
    order: card.priority ?? 100,
    position: placement ? 4 : note ? (note.edge === 'top' ? 2 : 3) : 0,
    depth: placement?.depth ?? 4,
    role: placement ? Math.max(0, ROLES.indexOf(placement.role ?? 'system')) : 0,
    scanDepth: card.scan?.actions ?? null,
    caseSensitive: card.caseSensitive ?? null,
    matchWholeWords: card.wholeWords ?? null,
    excludeRecursion: card.recursion ? !card.recursion.triggeredByOthers : false,
    preventRecursion: card.recursion ? !card.recursion.feedsOthers : false,
    delayUntilRecursion: card.recursion?.delayLevel ?? 0,
    probability: card.probability ?? 100,
    useProbability: true,
    group: (card.group?.names ?? []).join(','),
    groupWeight: card.group?.weight ?? 100,
    groupOverride: card.group?.override ?? false,
    delay: card.timing?.delay ?? 0,
    sticky: card.timing?.sticky ?? 0,
    cooldown: card.timing?.cooldown ?? 0,
  };
}

function stFieldsOf(raw: Json): StFields {
  return {
    key: strings(raw.key),
    keysecondary: strings(raw.keysecondary),
    selective: bool(raw.selective) ?? true,
    selectiveLogic: num(raw.selectiveLogic) ?? 0,
    comment: str(raw.comment),
    content: str(raw.content),
    constant: bool(raw.constant) ?? false,
    disable: bool(raw.disable) ?? false,
    order: num(raw.order) ?? 100,
    position: num(raw.position) ?? 0,
    depth: num(raw.depth) ?? 4,
    role: num(raw.role) ?? 0,
    scanDepth: num(raw.scanDepth) ?? null,
    caseSensitive: bool(raw.caseSensitive) ?? null,
    matchWholeWords: bool(raw.matchWholeWords) ?? null,
    excludeRecursion: bool(raw.excludeRecursion) ?? false,
    preventRecursion: bool(raw.preventRecursion) ?? false,
    delayUntilRecursion: num(raw.delayUntilRecursion) ?? 0,
    probability: num(raw.probability) ?? 100,
    useProbability: bool(raw.useProbability) ?? true,
    group: str(raw.group),
    groupWeight: num(raw.groupWeight) ?? 100,
    groupOverride: bool(raw.groupOverride) ?? false,
    delay: num(raw.delay) ?? 0,
    sticky: num(raw.sticky) ?? 0,
    cooldown: num(raw.cooldown) ?? 0,
  };
}

/** SillyTavern features Chronicle keeps only verbatim, by the field that carries them. */
export function stVerbatim(get: (field: string) => unknown): string[] {
  const features: string[] = [];
  if (get('ignoreBudget') === true) features.push('ignoreBudget');
  if (get('vectorized') === true) features.push('vectorized');
  if (strings(get('triggers')).length > 0) features.push('generation triggers');
  const filter = get('characterFilter');
  if (filter && typeof filter === 'object' && strings((filter as Json).names).length > 0) {
    features.push('character filter');
  }
  if (str(get('automationId')) !== '') features.push('automationId');
  if (str(get('outletName')) !== '') features.push('outlet');
  if (get('useGroupScoring') === true) features.push('group scoring');
  for (const field of [
    'matchPersonaDescription',
    'matchCharacterDescription',
    'matchCharacterPersonality',
    'matchCharacterDepthPrompt',
    'matchScenario',
    'matchCreatorNotes',
  ]) {
    if (get(field) === true) features.push(field);
  }
  return features;
}

export const sillyTavernCodec: Codec<StContext> = {
  format: 'sillytavern',
  family: ['sillytavern'],
  context: (_book, entries) => ({
    recursive: entries.some((entry) =>
      RECURSION_FLAGS.some((flag) => entry[flag] === true || (num(entry[flag]) ?? 0) > 0),
    ),
    scanMessages: ST_SCAN_MESSAGES,
  }),
  read(raw, ctx, index) {
    const { card, verbatim } = readStFields(stFieldsOf(raw), ctx, index);
    return { card, verbatim: [...verbatim, ...stVerbatim((field) => raw[field])] };
  },
  write(card, base, changed, warn) {
    const fields = writeStFields(card, warn);
    const out: Json = base ? { ...base } : { ...ST_ENTRY_DEFAULTS };
    const set = (field: keyof StFields) => {
      out[field] = fields[field];
    };
    if (changed('keys') || changed('keySyntax')) set('key');
    if (changed('conditions')) {
      set('keysecondary');
      set('selective');
      set('selectiveLogic');
    }
    if (changed('name')) set('comment');
    if (changed('entry')) set('content');
    if (changed('activation')) {
      set('constant');
      set('disable');
    }
    if (changed('enabled')) set('disable');
    if (changed('priority')) set('order');
    if (changed('placement')) {
      set('position');
      set('depth');
      set('role');
    }
    if (changed('scan')) set('scanDepth');
    if (changed('caseSensitive')) set('caseSensitive');
    if (changed('wholeWords')) set('matchWholeWords');
    if (changed('recursion')) {
      set('excludeRecursion');
      set('preventRecursion');
      set('delayUntilRecursion');
    }
    if (changed('probability')) {
      set('probability');
      set('useProbability');
    }
    if (changed('timing')) {
      set('delay');
      set('sticky');
      set('cooldown');
    }
    if (changed('group')) {
      set('group');
      set('groupWeight');
      set('groupOverride');
    }
    if (card.scan?.chars !== undefined) warn('character scan windows (ST counts messages)');
    if (!base || changed('type') || changed('notes')) {
      out.chronicle = { type: card.type, notes: card.notes, ...(card.id && { id: card.id }) };
    }
    return out;
  },
};

/** A new entry's fields, as SillyTavern's template writes them. */
export const ST_ENTRY_DEFAULTS: Json = {
  key: [],
  keysecondary: [],
  comment: '',
  content: '',
  constant: false,
  vectorized: false,
  selective: true,
  selectiveLogic: 0,
  addMemo: false,
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
};
