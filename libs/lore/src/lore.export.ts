// Writing an adventure's cards as a lore file. Through the same format an export is lossless: a
// card that came from that format starts from its source entry, and only the fields the player
// changed since are written over it. Across formats, what the target cannot say is listed in
// `warnings`, one line per loss with the number of cards it touches.

import type { Lorebook } from '@chronicle/adventure';
import { sameJson, type CardField, type ExportCard } from './lore.codec';
import { codecFor, normaliseRead } from './lore.import';
import type { Json } from './lore.types';

export const EXPORT_FORMATS = ['aid', 'sillytavern', 'ccv3', 'novelai', 'kobold'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export interface LoreExport {
  file: unknown;
  /** File name the download suggests. */
  fileName: string;
  warnings: string[];
}

const FILE_NAMES: Record<ExportFormat, string> = {
  aid: 'story-cards.json',
  sillytavern: 'world.json',
  ccv3: 'lorebook.json',
  novelai: 'lorebook.lorebook',
  kobold: 'world-info.json',
};

export function exportLore(
  format: ExportFormat,
  cards: readonly ExportCard[],
  books: readonly Lorebook[],
): LoreExport {
  const codec = codecFor(format);
  const family = codec.family;
  const own = cards.filter((card) => card.origin && family.includes(card.origin.format));
  const bookIds = [...new Set(own.map((card) => card.origin!.bookId))];
  const book = books.find((b) => b.id === bookIds[0]) ?? null;
  const losses = new Map<string, number>();
  if (bookIds.length > 1) {
    losses.set(
      `cards from ${bookIds.length} ${format} books merged into one (the first book's settings kept)`,
      own.length,
    );
  }
  const bookRaw: Json = book?.raw ?? {};
  const ctx = codec.context(
    bookRaw,
    own.map((card) => card.origin!.raw),
    { charName: own.find((card) => card.charName)?.charName },
  );
  const foreign = new Map<string, number>();
  const entries = cards.map((card, index) => {
    const fromFamily = card.origin && family.includes(card.origin.format) ? card.origin.raw : null;
    const derived = fromFamily ? codec.read(fromFamily, ctx, index) : null;
    const base = derived && !('skip' in derived) ? fromFamily : null;
    const source = derived && !('skip' in derived) ? normaliseRead(derived.card, index) : null;
    const changed = (field: CardField) =>
      !source || !sameJson(card[field], (source as Record<CardField, unknown>)[field]);
    const touched = new Set<string>();
    const entry = codec.write(card, base, changed, (loss) => touched.add(loss), index);
    for (const loss of touched) losses.set(loss, (losses.get(loss) ?? 0) + 1);
    if (card.origin && !family.includes(card.origin.format)) {
      foreign.set(card.origin.format, (foreign.get(card.origin.format) ?? 0) + 1);
    }
    return entry;
  });
  for (const [origin, count] of foreign) {
    losses.set(
      `${origin} source fields Chronicle keeps only verbatim (not carried into ${format})`,
      count,
    );
  }
  const warnings = [...losses].map(
    ([loss, count]) => `${loss}: ${count} card${count === 1 ? '' : 's'}`,
  );
  if (format === 'aid') warnings.push('AI Dungeon replaces every story card on import');
  return { file: assemble(format, entries, bookRaw, book), fileName: FILE_NAMES[format], warnings };
}

function assemble(
  format: ExportFormat,
  entries: Json[],
  bookRaw: Json,
  book: Lorebook | null,
): unknown {
  switch (format) {
    case 'aid':
    case 'kobold':
      return entries;
    case 'sillytavern': {
      const used = new Set<number>();
      for (const entry of entries) {
        if (typeof entry.uid === 'number' && !used.has(entry.uid)) used.add(entry.uid);
        else delete entry.uid;
      }
      let next = 0;
      const byUid: Record<string, Json> = {};
      for (const entry of entries) {
        if (typeof entry.uid !== 'number') {
          while (used.has(next)) next++;
          entry.uid = next;
          used.add(next);
        }
        byUid[String(entry.uid)] = entry;
      }
      return { ...(book ? bookRaw : {}), entries: byUid };
    }
    case 'ccv3':
      return {
        spec: 'lorebook_v3',
        data: { ...(book ? bookRaw : { name: 'Chronicle', extensions: {} }), entries },
      };
    case 'novelai':
      return {
        ...(book
          ? bookRaw
          : { lorebookVersion: 6, settings: { orderByKeyLocations: false }, categories: [] }),
        entries,
      };
  }
}
