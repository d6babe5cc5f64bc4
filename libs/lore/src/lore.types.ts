import type { LoreFormat, StoryCard } from '@chronicle/adventure';

/** A card as a format reads it: everything but the id, the origin's raw entry kept verbatim. */
export type ParsedCard = Omit<StoryCard, 'id' | 'origin'> & {
  origin: { format: LoreFormat; raw: Record<string, unknown> };
};

/** What the import report says about one card (by its position in the file and its name). */
export interface CardNote {
  index: number;
  card: string;
}

export interface ImportReport {
  /** Features a card uses that Chronicle keeps only verbatim (exported, never executed). */
  keptOnlyVerbatim: (CardNote & { features: string[] })[];
  /** Regex keys refused or invalid: the card never fires on them. */
  badRegexes: (CardNote & { key: string; problem: string })[];
  /** Macros Chronicle does not render: left as text. */
  unknownMacros: (CardNote & { macros: string[] })[];
  /** Entries not imported, and why. */
  skipped: { index: number; reason: string }[];
  /** Notes on the file as a whole (a character card's other fields, book settings). */
  notes: string[];
}

export interface ParsedBook {
  format: LoreFormat;
  formatVersion: string | null;
  name: string;
  /** The book's own fields without its entries, verbatim. */
  raw: Record<string, unknown>;
  cards: ParsedCard[];
  report: ImportReport;
}

/** A lore file that cannot be read: the message says what is wrong with it. */
export class LoreFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LoreFileError';
  }
}

export function emptyReport(): ImportReport {
  return { keptOnlyVerbatim: [], badRegexes: [], unknownMacros: [], skipped: [], notes: [] };
}

export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export const str = (value: unknown, fallback = ''): string =>
  typeof value === 'string' ? value : fallback;
export const num = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;
export const bool = (value: unknown): boolean | undefined =>
  typeof value === 'boolean' ? value : undefined;
export const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
