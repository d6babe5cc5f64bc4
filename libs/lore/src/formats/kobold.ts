// KoboldAI Lite world info: a bare array of {key, keysecondary, keyanti, content, comment,
// folder, selective, constant, probability, wigroup, widisabled} (keys as comma strings), or a
// Lite save holding it as `worldinfo` beside `wisearchdepth` (characters; 0 = everything).

import type { CardCondition } from '@chronicle/context';
import type { Codec } from '../lore.codec';
import { keyList } from '../lore.codec';
import { num, str, type Json } from '../lore.types';

const commaList = (value: unknown) =>
  str(value)
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);

export const koboldCodec: Codec<{ searchChars: number }> = {
  format: 'kobold',
  family: ['kobold'],
  context: (book) => ({ searchChars: num(book.wisearchdepth) ?? 0 }),
  read(raw, ctx, index) {
    const keys = commaList(raw.key);
    const conditions: CardCondition[] = [];
    if (raw.selective === true) {
      // Lite: primary AND any secondary AND NOT any anti-key, whichever lists are non-empty.
      const secondary = commaList(raw.keysecondary);
      const anti = commaList(raw.keyanti);
      if (secondary.length > 0) conditions.push({ mode: 'anyOf', keys: secondary });
      if (anti.length > 0) conditions.push({ mode: 'noneOf', keys: anti });
    }
    const verbatim: string[] = [];
    const probability = num(raw.probability);
    if (str(raw.folder) !== '') verbatim.push('folder');
    return {
      card: {
        name: str(raw.comment) || keys[0] || `Entry ${index + 1}`,
        keys: str(raw.key),
        entry: str(raw.content),
        type: str(raw.wigroup) || 'lore',
        notes: '',
        ...(raw.widisabled === true && { enabled: false }),
        ...(raw.constant === true
          ? { activation: 'always' as const }
          : keys.length === 0
            ? { activation: 'inert' as const }
            : {}),
        ...(conditions.length > 0 && { conditions }),
        ...(ctx.searchChars > 0 && { scan: { chars: ctx.searchChars } }),
        // Lite rolls 1..100 < p; Chronicle keeps p percent.
        ...(probability !== undefined &&
          probability < 100 && { probability: Math.max(0, probability) }),
      },
      verbatim,
    };
  },
  write(card, base, changed, warn) {
    const out: Json = base
      ? { ...base }
      : {
          key: '',
          keysecondary: '',
          keyanti: '',
          content: '',
          comment: '',
          folder: null,
          selective: false,
          constant: false,
          probability: 100,
          wigroup: '',
          widisabled: false,
        };
    if (changed('keys') || changed('keySyntax')) {
      out.key =
        card.keySyntax === 'plain' || card.keySyntax === undefined
          ? card.keys
          : keyList(card).join(',');
    }
    if (changed('conditions')) {
      const conditions = card.conditions ?? [];
      const any = conditions.filter((c) => c.mode === 'anyOf').flatMap((c) => c.keys);
      const none = conditions.filter((c) => c.mode === 'noneOf').flatMap((c) => c.keys);
      if (conditions.some((c) => c.mode === 'allOf' || c.mode === 'notAllOf')) {
        warn('allOf and notAllOf conditions');
      }
      out.keysecondary = any.join(',');
      out.keyanti = none.join(',');
      out.selective = any.length > 0 || none.length > 0;
    }
    if (changed('entry')) out.content = card.entry;
    if (changed('name')) out.comment = card.name;
    if (changed('activation')) out.constant = card.activation === 'always';
    if (changed('enabled')) out.widisabled = card.enabled === false;
    if (changed('type')) out.wigroup = card.type;
    if (changed('probability')) out.probability = card.probability ?? 100;
    if (card.group) warn('inclusion groups');
    if (card.timing) warn('timed effects');
    if (card.priority !== undefined && card.priority !== 100) warn('priority (kept as list order)');
    if (card.placement?.kind === 'depth') warn('depth placement');
    if (card.placement?.kind === 'authorsNote') warn("author's-note placement");
    if (card.scan && changed('scan')) warn('per-card scan windows');
    if (card.recursion) warn('recursion');
    if (card.notes && changed('notes')) warn('notes');
    if (card.caseSensitive || card.wholeWords) warn('case-sensitive and whole-word matching');
    return out;
  },
};
