// Character Card V2/V3 `character_book` entries, embedded in a card or standalone as V3's
// `{spec: "lorebook_v3", data}`. SillyTavern writes the world fields the spec lacks into each
// entry's `extensions` in snake_case; those are read as SillyTavern's fields. `use_regex` is
// noise (SillyTavern sets it on every entry): regex keys are recognised by shape only.

import type { LoreFormat } from '@chronicle/adventure';
import { isRegexShaped } from '@chronicle/context';
import type { Codec } from '../lore.codec';
import { bool, isObject, num, str, strings, type Json } from '../lore.types';
import {
  ST_SCAN_MESSAGES,
  readStFields,
  stVerbatim,
  writeStFields,
  type StContext,
  type StFields,
} from './sillytavern';

const snake = (field: string) => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function extensionsOf(raw: Json): Json {
  return isObject(raw.extensions) ? raw.extensions : {};
}

function fieldsOf(raw: Json): StFields {
  const ext = extensionsOf(raw);
  return {
    key: strings(raw.keys),
    keysecondary: strings(raw.secondary_keys),
    // A card book's secondary keys are off unless `selective` says so (standalone ST: on).
    selective: bool(raw.selective) ?? false,
    selectiveLogic: num(ext.selectiveLogic) ?? 0,
    comment: str(raw.name) || str(raw.comment),
    content: str(raw.content),
    constant: bool(raw.constant) ?? false,
    disable: bool(raw.enabled) === false,
    order: num(raw.insertion_order) ?? 100,
    position: num(ext.position) ?? (raw.position === 'after_char' ? 1 : 0),
    depth: num(ext.depth) ?? 4,
    role: num(ext.role) ?? 0,
    scanDepth: num(ext.scan_depth) ?? null,
    caseSensitive: bool(raw.case_sensitive) ?? bool(ext.case_sensitive) ?? null,
    matchWholeWords: bool(ext.match_whole_words) ?? null,
    excludeRecursion: bool(ext.exclude_recursion) ?? false,
    preventRecursion: bool(ext.prevent_recursion) ?? false,
    delayUntilRecursion: num(ext.delay_until_recursion) ?? 0,
    probability: num(ext.probability) ?? 100,
    useProbability: bool(ext.useProbability) ?? bool(ext.use_probability) ?? true,
    group: str(ext.group),
    groupWeight: num(ext.group_weight) ?? 100,
    groupOverride: bool(ext.group_override) ?? false,
    delay: num(ext.delay) ?? 0,
    sticky: num(ext.sticky) ?? 0,
    cooldown: num(ext.cooldown) ?? 0,
  };
}

export interface BookContext extends StContext {
  /** `{{char}}`: the card's nickname or name, or the book's name. */
  charName: string;
}

// eslint-disable-next-line max-lines-per-function -- one codec object (read, write, its entries' fields both ways), so each field's import sits beside its export
export function characterBookCodec(format: LoreFormat): Codec<BookContext> {
  return {
    format,
    family: ['ccv2', 'ccv3'],
    context: (book, entries, hints) => ({
      recursive:
        book.recursive_scanning === true ||
        entries.some((entry) => {
          const ext = extensionsOf(entry);
          return (
            ext.exclude_recursion === true ||
            ext.prevent_recursion === true ||
            (num(ext.delay_until_recursion) ?? 0) > 0
          );
        }),
      scanMessages: num(book.scan_depth) ?? ST_SCAN_MESSAGES,
      charName: hints.charName ?? str(book.name),
    }),
    read(raw, ctx, index) {
      const { card, verbatim } = readStFields(fieldsOf(raw), ctx, index);
      const ext = extensionsOf(raw);
      const features = stVerbatim((field) => ext[snake(field)]);
      if (num(raw.priority) !== undefined) features.push('priority (budget drop order)');
      return {
        card: { ...card, ...(ctx.charName && { charName: ctx.charName }) },
        verbatim: [...verbatim, ...features],
      };
    },
    write(card, base, changed, warn, index) {
      const st = writeStFields(card, warn);
      const out: Json = base
        ? { ...base, extensions: { ...extensionsOf(base) } }
        : {
            keys: [],
            content: '',
            extensions: {},
            enabled: true,
            insertion_order: 100,
            use_regex: false,
            constant: false,
            selective: false,
            secondary_keys: [],
            name: '',
            comment: '',
            id: index,
            position: 'before_char',
          };
      const ext = out.extensions as Json;
      if (changed('keys') || changed('keySyntax')) {
        out.keys = st.key;
        if (format === 'ccv3' || !base) out.use_regex = st.key!.some(isRegexShaped);
      }
      if (changed('conditions')) {
        out.secondary_keys = st.keysecondary;
        out.selective = st.selective;
        ext.selectiveLogic = st.selectiveLogic;
      }
      if (changed('name')) {
        out.name = card.name;
        out.comment = card.name;
      }
      if (changed('entry')) out.content = card.entry;
      if (changed('activation') || changed('enabled')) {
        out.constant = st.constant;
        out.enabled = !st.disable;
      }
      if (changed('priority')) out.insertion_order = st.order;
      if (changed('placement')) {
        ext.position = st.position;
        ext.depth = st.depth;
        ext.role = st.role;
      }
      if (changed('scan')) ext.scan_depth = st.scanDepth;
      if (changed('caseSensitive')) out.case_sensitive = st.caseSensitive;
      if (changed('wholeWords')) ext.match_whole_words = st.matchWholeWords;
      if (changed('recursion')) {
        ext.exclude_recursion = st.excludeRecursion;
        ext.prevent_recursion = st.preventRecursion;
        ext.delay_until_recursion = st.delayUntilRecursion;
      }
      if (!base || changed('type') || changed('notes')) {
        ext.chronicle = { type: card.type, notes: card.notes, ...(card.id && { id: card.id }) };
      }
      if (changed('probability')) {
        ext.probability = st.probability;
        ext.useProbability = st.useProbability;
      }
      if (changed('timing')) {
        ext.delay = st.delay;
        ext.sticky = st.sticky;
        ext.cooldown = st.cooldown;
      }
      if (changed('group')) {
        ext.group = st.group;
        ext.group_weight = st.groupWeight;
        ext.group_override = st.groupOverride;
      }
      if (card.scan?.chars !== undefined)
        warn('character scan windows (card books count messages)');
      return out;
    },
  };
}
