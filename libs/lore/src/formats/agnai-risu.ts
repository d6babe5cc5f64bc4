// Agnai memory books and Risu lorebooks: recognised and mapped to the basics (spec §2.6), read
// only (Chronicle does not write them: a card from one exports to the formats it does write).
//
// Agnai: `{kind: "memory", name, description?, entries: [{name, entry, keywords[], priority,
// weight, enabled}]}`. `priority`: the lowest is dropped first at the budget, which is
// Chronicle's priority; `weight`: the highest is rendered last, which Chronicle's priority also
// decides, so a weight that orders the entries otherwise is kept only verbatim.
//
// Risu: `{type: "risu", data: [{key, secondkey, comment, content, alwaysActive, selective,
// insertorder, activationPercent}]}`, keys as comma strings; a selective entry also needs one of
// its second keys.

import type { ReadEntry } from '../lore.codec';
import { bool, num, str, strings, type Json } from '../lore.types';

/** A read-only format: how its book frames its entries, and each entry as a card. */
export interface LoreReader<Ctx> {
  context(bookRaw: Json, entries: readonly Json[], hints: { charName?: string }): Ctx;
  read(raw: Json, ctx: Ctx, index: number): ReadEntry;
}

/** Agnai's default priority and weight (an entry that names neither). */
const AGNAI_DEFAULT = 0;

export const agnaiReader: LoreReader<{ weightDisagrees: boolean }> = {
  // The weights disagree with the priorities when sorting by one does not sort by the other.
  context: (_book, entries) => {
    const pairs = entries.map((e) => [
      num(e.priority) ?? AGNAI_DEFAULT,
      num(e.weight) ?? AGNAI_DEFAULT,
    ]);
    const weightDisagrees = pairs.some(([p1, w1]) =>
      pairs.some(([p2, w2]) => (p1 < p2 && w1 > w2) || (p1 === p2 && w1 !== w2)),
    );
    return { weightDisagrees };
  },
  read(raw, ctx, index) {
    const keys = strings(raw.keywords)
      .map((key) => key.trim())
      .filter(Boolean);
    const enabled = bool(raw.enabled) ?? true;
    return {
      card: {
        name: str(raw.name) || keys[0] || `Entry ${index + 1}`,
        keys: keys.join('\n'),
        keySyntax: 'lines',
        entry: str(raw.entry),
        type: 'lore',
        notes: '',
        ...(enabled ? {} : { enabled: false }),
        ...(keys.length === 0 && { activation: 'inert' as const }),
        priority: num(raw.priority) ?? AGNAI_DEFAULT,
      },
      verbatim: ctx.weightDisagrees && raw.weight !== undefined ? ['weight (render order)'] : [],
    };
  },
};

/** Risu's comma-separated keys, trimmed, empties dropped. */
const commaKeys = (value: unknown): string[] =>
  str(value)
    .split(',')
    .map((key) => key.trim())
    .filter(Boolean);

export const risuReader: LoreReader<null> = {
  context: () => null,
  read(raw, _ctx, index) {
    if (raw.mode === 'folder') return { skip: 'a folder, not an entry' };
    const keys = commaKeys(raw.key);
    const secondary = commaKeys(raw.secondkey);
    const always = bool(raw.alwaysActive) === true;
    const percent = num(raw.activationPercent);
    return {
      card: {
        name: str(raw.comment) || keys[0] || `Entry ${index + 1}`,
        keys: keys.join('\n'),
        keySyntax: 'lines',
        entry: str(raw.content),
        type: 'lore',
        notes: '',
        ...(always
          ? { activation: 'always' as const }
          : keys.length === 0
            ? { activation: 'inert' as const }
            : {}),
        priority: num(raw.insertorder) ?? 100,
        ...(raw.selective === true &&
          secondary.length > 0 && { conditions: [{ mode: 'anyOf' as const, keys: secondary }] }),
        ...(percent !== undefined &&
          percent < 100 && { probability: Math.max(0, Math.min(100, percent)) }),
      },
      verbatim: [],
    };
  },
};
