// NovelAI lorebooks: `{lorebookVersion, entries[], settings, categories[]}`. Defaults as the app
// and public converters write them (docs/lore-formats.md §2.4). Each entry's token budget, reservation and trim
// become the card's budget; insertion position and unit, key-relative insertion, categories'
// subcontexts, phrase biases and advanced conditions are kept verbatim (Chronicle places lore
// in its own blocks, below the cached history, and does not run them).

import type { CardBudget } from '@chronicle/context';
import type { Codec } from '../lore.codec';
import { keyList } from '../lore.codec';
import { bool, isObject, num, str, strings, type Json } from '../lore.types';

export const NAI_SEARCH_RANGE = 1000;
export const NAI_BUDGET_PRIORITY = 400;
/** budgetPriority − 300 = priority, so NovelAI's default 400 is Chronicle's default 100. */
export const NAI_PRIORITY_OFFSET = 300;
/** An action's characters, roughly, for writing a window counted in actions as characters. */
const CHARS_PER_ACTION = 500;

export interface NaiContext {
  categories: Map<string, { name: string; enabled: boolean }>;
  cascade: boolean;
}

const DEFAULT_CONTEXT_CONFIG = {
  prefix: '',
  suffix: '\n',
  tokenBudget: 1,
  reservedTokens: 0,
  budgetPriority: NAI_BUDGET_PRIORITY,
  trimDirection: 'trimBottom',
  insertionType: 'newline',
  maximumTrimType: 'sentence',
  insertionPosition: -1,
};

function configOf(raw: Json): Json {
  return isObject(raw.contextConfig) ? raw.contextConfig : {};
}

const TRIM_DIRECTIONS = { trimBottom: 'end', trimTop: 'start', doNotTrim: 'none' } as const;
const TRIM_UNITS = ['newline', 'sentence', 'token'] as const;

/** An entry's contextConfig budget as the card's (NovelAI's defaults: trimBottom, sentence). */
function budgetOf(config: Json): CardBudget {
  const direction = str(config.trimDirection, 'trimBottom') as keyof typeof TRIM_DIRECTIONS;
  const unit = str(config.maximumTrimType, 'sentence') as (typeof TRIM_UNITS)[number];
  const max = num(config.tokenBudget);
  const reserved = num(config.reservedTokens);
  return {
    // 1 is the whole context: no cap of its own.
    ...(max !== undefined && max > 0 && max !== 1 && { maxTokens: max }),
    ...(reserved !== undefined && reserved > 0 && { reservedTokens: reserved }),
    trim: TRIM_DIRECTIONS[direction] ?? 'end',
    trimUnit: TRIM_UNITS.includes(unit) ? unit : 'sentence',
  };
}

export const novelAiCodec: Codec<NaiContext> = {
  format: 'novelai',
  family: ['novelai'],
  context: (book, entries) => {
    const categories = new Map<string, { name: string; enabled: boolean }>();
    for (const category of Array.isArray(book.categories) ? book.categories : []) {
      if (isObject(category) && typeof category.id === 'string') {
        categories.set(category.id, {
          name: str(category.name),
          enabled: bool(category.enabled) ?? true,
        });
      }
    }
    return { categories, cascade: entries.some((entry) => entry.nonStoryActivatable === true) };
  },
  read(raw, ctx, index) {
    const config = configOf(raw);
    const prefix = str(config.prefix);
    const suffix = str(config.suffix, '\n');
    const keys = strings(raw.keys)
      .map((k) => k.trim())
      .filter(Boolean);
    const category = ctx.categories.get(str(raw.category));
    const verbatim: string[] = [];
    for (const field of ['insertionType', 'insertionPosition'] as const) {
      if (config[field] !== undefined && config[field] !== DEFAULT_CONTEXT_CONFIG[field]) {
        verbatim.push(field);
      }
    }
    if (raw.keyRelative === true) verbatim.push('keyRelative');
    const bias = Array.isArray(raw.loreBiasGroups) ? raw.loreBiasGroups : [];
    if (bias.some((group) => isObject(group) && strings(group.phrases).length > 0)) {
      verbatim.push('loreBiasGroups');
    }
    if (Array.isArray(raw.advancedConditions) && raw.advancedConditions.length > 0) {
      verbatim.push('advancedConditions');
    }
    if (category) verbatim.push('category');
    const enabled = (bool(raw.enabled) ?? true) && (category?.enabled ?? true);
    return {
      card: {
        name: str(raw.displayName) || keys[0] || `Entry ${index + 1}`,
        keys: keys.join('\n'),
        keySyntax: 'lines',
        // NovelAI wraps the text in the prefix and suffix when it inserts it.
        entry: prefix + str(raw.text) + suffix,
        type: category?.name || 'lore',
        notes: '',
        ...(enabled ? {} : { enabled: false }),
        ...(raw.forceActivation === true
          ? { activation: 'always' as const }
          : keys.length === 0
            ? { activation: 'inert' as const }
            : {}),
        priority: (num(config.budgetPriority) ?? NAI_BUDGET_PRIORITY) - NAI_PRIORITY_OFFSET,
        // Community KB: plain keys are word-bounded.
        wholeWords: true,
        scan: { chars: num(raw.searchRange) ?? NAI_SEARCH_RANGE },
        budget: budgetOf(config),
        ...(ctx.cascade && {
          recursion: { feedsOthers: true, triggeredByOthers: raw.nonStoryActivatable === true },
        }),
      },
      verbatim,
    };
  },
  write(card, base, changed, warn, index) {
    const out: Json = base
      ? { ...base, contextConfig: { ...configOf(base) } }
      : {
          text: '',
          contextConfig: { ...DEFAULT_CONTEXT_CONFIG },
          lastUpdatedAt: 0,
          displayName: '',
          id: `chronicle-${card.id ?? index}`,
          keys: [],
          searchRange: NAI_SEARCH_RANGE,
          enabled: true,
          forceActivation: false,
          keyRelative: false,
          nonStoryActivatable: false,
          category: '',
          loreBiasGroups: [],
        };
    const config = out.contextConfig as Json;
    if (changed('entry')) {
      const prefix = str(config.prefix);
      const suffix = str(config.suffix, '\n');
      if (
        card.entry.startsWith(prefix) &&
        card.entry.endsWith(suffix) &&
        card.entry.length >= prefix.length + suffix.length
      ) {
        out.text = card.entry.slice(prefix.length, card.entry.length - suffix.length);
      } else {
        config.prefix = '';
        config.suffix = '';
        out.text = card.entry;
      }
    }
    if (changed('keys') || changed('keySyntax')) out.keys = keyList(card);
    if (changed('name')) out.displayName = card.name;
    if (changed('enabled')) out.enabled = card.enabled !== false;
    if (changed('activation')) out.forceActivation = card.activation === 'always';
    if (changed('priority')) {
      config.budgetPriority = (card.priority ?? 100) + NAI_PRIORITY_OFFSET;
    }
    if (changed('scan')) {
      out.searchRange =
        card.scan?.chars ??
        (card.scan?.actions !== undefined
          ? card.scan.actions * CHARS_PER_ACTION
          : NAI_SEARCH_RANGE);
      if (card.scan?.actions !== undefined && card.scan.chars === undefined) {
        warn('scan windows in actions (written as an estimate in characters)');
      }
    }
    if (changed('recursion')) out.nonStoryActivatable = card.recursion?.triggeredByOthers === true;
    if (changed('budget')) {
      const budget = card.budget;
      config.tokenBudget = budget?.maxTokens ?? 1;
      config.reservedTokens = budget?.reservedTokens ?? 0;
      // A card without a budget is left out whole when it does not fit: NovelAI's doNotTrim.
      config.trimDirection =
        budget?.trim === 'end' ? 'trimBottom' : budget?.trim === 'start' ? 'trimTop' : 'doNotTrim';
      config.maximumTrimType = budget?.trimUnit ?? 'sentence';
    }
    if (card.conditions?.length) warn('secondary-key conditions (NovelAI has no AND/NOT keys)');
    if (card.placement?.kind === 'depth') warn('depth placement');
    if (card.placement?.kind === 'authorsNote') warn("author's-note placement");
    if (card.probability !== undefined) warn('probability');
    if (card.timing) warn('timed effects');
    if (card.group) warn('inclusion groups');
    if (card.caseSensitive) warn('case-sensitive matching');
    if (changed('notes') && card.notes) warn('notes');
    if (card.activation === 'inert' && keyList(card).length > 0) warn('inert cards with keys');
    return out;
  },
};
