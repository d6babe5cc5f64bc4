import type { CARD_FIELDS, LoreFormat, StoryCard } from '@chronicle/adventure';
import type { Json, ParsedCard } from './lore.types';

/** A card as an export reads it (an adventure's card; the id and origin may be absent). */
export type ExportCard = Omit<StoryCard, 'id'> & { id?: string };

/** The normalised fields the "changed since import" comparison covers: every field a card has. */
export type CardField = (typeof CARD_FIELDS)[number];

export type ReadEntry = { card: Omit<ParsedCard, 'origin'>; verbatim: string[] } | { skip: string };

/**
 * One format's entries, both ways. `context` is what the book as a whole decides for every
 * entry (SillyTavern turns recursion on when any entry uses it); an export recomputes it from
 * the stored book and the cards' source entries, so `read` gives the same card it gave at import.
 */
export interface Codec<Ctx> {
  format: LoreFormat;
  /** Origins an export to this format may take its raw entries from. */
  family: readonly LoreFormat[];
  context(bookRaw: Json, entries: readonly Json[], hints: { charName?: string }): Ctx;
  read(raw: Json, ctx: Ctx, index: number): ReadEntry;
  /**
   * The entry for `card`. `base` is its source entry when it came from this family (else null);
   * `changed(field)` says whether the player changed that field since the import (always true
   * without a base), so unchanged fields keep their source spelling byte for byte.
   */
  write(
    card: ExportCard,
    base: Json | null,
    changed: (field: CardField) => boolean,
    warn: (loss: string) => void,
    index: number,
  ): Json;
}

export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** Keys as a list, whatever the card's syntax. */
export function keyList(card: Pick<ExportCard, 'keys' | 'keySyntax'>): string[] {
  const syntax = card.keySyntax ?? 'plain';
  if (syntax === 'aid') return card.keys.split(',').filter((k) => k.trim() !== '');
  return card.keys
    .split(syntax === 'lines' ? '\n' : ',')
    .map((k) => k.trim())
    .filter(Boolean);
}
