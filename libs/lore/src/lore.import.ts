// Reading a lore file: the container (PNG card, .charx zip, JSON text), then the format (sniffed
// in KoboldAI Lite's order, or named by the caller), then every entry through its format's
// codec. Pure apart from node:zlib; the file is untrusted, so every failure is a LoreFileError
// naming what is wrong, and nothing is half-read.

import { LIMITS, LORE_FORMATS, type LoreFormat } from '@chronicle/adventure';
import { isPng, isZip, pngTextChunks, zipEntry } from './containers';
import { agnaiReader, risuReader, type LoreReader } from './formats/agnai-risu';
import { aidCodec } from './formats/aid';
import { characterBookCodec } from './formats/character-book';
import { koboldCodec } from './formats/kobold';
import { novelAiCodec } from './formats/novelai';
import { sillyTavernCodec } from './formats/sillytavern';
import type { Codec } from './lore.codec';
import { noteCard } from './lore.report';
import {
  LoreFileError,
  emptyReport,
  isObject,
  num,
  str,
  type Json,
  type ParsedBook,
  type ParsedCard,
} from './lore.types';

/** Every format Chronicle reads: the card origins the decider accepts. */
export const IMPORT_FORMATS = LORE_FORMATS;

/** The formats Chronicle writes as well as reads. */
export type WritableFormat = Exclude<LoreFormat, 'agnai' | 'risu'>;

/** How a format's entries are read: its codec, or a read-only format's reader. */
export function readerFor(format: LoreFormat): LoreReader<unknown> {
  if (format === 'agnai') return agnaiReader as LoreReader<unknown>;
  if (format === 'risu') return risuReader as LoreReader<unknown>;
  return codecFor(format);
}

export function codecFor(format: WritableFormat): Codec<unknown> {
  switch (format) {
    case 'aid':
      return aidCodec as Codec<unknown>;
    case 'sillytavern':
      return sillyTavernCodec as Codec<unknown>;
    case 'ccv2':
    case 'ccv3':
      return characterBookCodec(format) as Codec<unknown>;
    case 'novelai':
      return novelAiCodec as Codec<unknown>;
    case 'kobold':
      return koboldCodec as Codec<unknown>;
  }
}

interface Located {
  format: LoreFormat;
  formatVersion: string | null;
  name: string;
  raw: Json;
  entries: unknown[];
  charName?: string;
  notes: string[];
}

/** Deeper than any lore format nests: a file nested further is refused before it is parsed. */
export const MAX_LORE_JSON_DEPTH = 64;

/** Whether `text` nests arrays and objects deeper than `max`, by its brackets outside strings. */
function nestsDeeper(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

function parseJson(text: string, what: string): unknown {
  // Walking a structure nested thousands deep (to copy, compare or store it) overflows the stack.
  if (nestsDeeper(text, MAX_LORE_JSON_DEPTH)) {
    throw new LoreFileError(
      `${what} nests arrays and objects more than ${MAX_LORE_JSON_DEPTH} deep`,
    );
  }
  try {
    return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (error) {
    throw new LoreFileError(`${what} is not valid JSON: ${(error as Error).message}`);
  }
}

function decodeBase64Json(text: string, what: string): unknown {
  const compact = text.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) {
    throw new LoreFileError(`${what} is not base64`);
  }
  return parseJson(Buffer.from(compact, 'base64').toString('utf8'), `${what} (decoded)`);
}

/** The JSON a file holds, out of its container; `container` says which. */
export function openLoreFile(bytes: Buffer): {
  json: unknown;
  container: 'png' | 'charx' | 'json';
} {
  if (bytes.length === 0) throw new LoreFileError('the file is empty');
  if (bytes.length > LIMITS.loreFileBytes) {
    throw new LoreFileError(
      `the file is ${bytes.length} bytes; keep it to ${LIMITS.loreFileBytes}`,
    );
  }
  if (isPng(bytes)) {
    const chunks = pngTextChunks(bytes);
    // A V3 card carries both; `ccv3` is the newer and preferred. A NovelAI lorebook image
    // carries its book in `naidata`.
    const name = ['ccv3', 'chara', 'naidata'].find((chunk) => chunks.has(chunk));
    if (name === undefined) {
      throw new LoreFileError(
        'the PNG has no "chara", "ccv3" or "naidata" text chunk: it is neither a character card nor a NovelAI lorebook image',
      );
    }
    const text = chunks.get(name)!;
    return {
      json:
        name === 'naidata' && text.trimStart().startsWith('{')
          ? parseJson(text, "the PNG's naidata chunk")
          : decodeBase64Json(text, `the PNG's ${name} chunk`),
      container: 'png',
    };
  }
  if (isZip(bytes)) {
    const card = zipEntry(bytes, 'card.json');
    if (!card) throw new LoreFileError('the .charx zip has no card.json at its root');
    return { json: parseJson(card.toString('utf8'), "the .charx's card.json"), container: 'charx' };
  }
  const text = bytes.toString('utf8');
  if (text.includes('\uFFFD'))
    throw new LoreFileError('the file is neither UTF-8 text, a PNG nor a zip');
  return { json: parseJson(text, 'the file'), container: 'json' };
}

const without = (object: Json, ...keys: string[]): Json =>
  Object.fromEntries(Object.entries(object).filter(([key]) => !keys.includes(key)));

function entriesOf(value: unknown, what: string): unknown[] {
  if (Array.isArray(value)) return value;
  if (isObject(value)) return Object.values(value);
  throw new LoreFileError(`${what} must be a list or an object of entries`);
}

function characterBook(
  book: unknown,
  format: LoreFormat,
  version: string | null,
  charName: string,
  notes: string[],
): Located {
  if (!isObject(book))
    throw new LoreFileError('the character card has no character_book: it holds no lore');
  return {
    format,
    formatVersion: version,
    name: str(book.name),
    raw: without(book, 'entries'),
    entries: entriesOf(book.entries, 'character_book.entries'),
    charName,
    notes,
  };
}

/** Which format a parsed file is, by shape (KoboldAI Lite's sniffing order, narrowed). */
export function sniffFormat(json: unknown): LoreFormat | null {
  if (Array.isArray(json)) {
    const first = json.find(isObject);
    if (!first) return json.length === 0 ? 'aid' : null;
    if (typeof first.key === 'string' && 'content' in first) return 'kobold';
    if (typeof first.keys === 'string' && ('value' in first || 'entry' in first)) return 'aid';
    return null;
  }
  if (!isObject(json)) return null;
  if (json.spec === 'chara_card_v3' || json.spec === 'lorebook_v3') return 'ccv3';
  if (json.spec === 'chara_card_v2') return 'ccv2';
  if (num(json.lorebookVersion) !== undefined && Array.isArray(json.entries)) return 'novelai';
  // A NovelAI story (`content.lorebook`) or scenario (`lorebook`, with `scenarioVersion`).
  if (num(json.storyContainerVersion) !== undefined || num(json.scenarioVersion) !== undefined) {
    return 'novelai';
  }
  if (json.kind === 'memory' && Array.isArray(json.entries)) return 'agnai';
  if (json.type === 'risu' && Array.isArray(json.data)) return 'risu';
  if (Array.isArray(json.worldinfo)) return 'kobold';
  if (json.entries !== undefined) {
    const first = entriesOf(json.entries, 'entries').find(isObject);
    if (!first || 'uid' in first || typeof first.key !== 'undefined') return 'sillytavern';
    if (Array.isArray(first.keys) && 'content' in first) return 'ccv2';
    return 'sillytavern';
  }
  if (isObject(json.data) && isObject(json.data.character_book)) return 'ccv2';
  return null;
}

// eslint-disable-next-line max-lines-per-function -- one switch over the formats, each case finding where its file keeps the entries and the book's own fields
function locate(json: unknown, format: LoreFormat): Located {
  const notes: string[] = [];
  switch (format) {
    case 'aid': {
      if (!Array.isArray(json))
        throw new LoreFileError('an AI Dungeon export is a JSON list of cards');
      const legacy = json.some(
        (card) => isObject(card) && card.value === undefined && 'entry' in card,
      );
      return {
        format,
        formatVersion: legacy ? 'world-info' : 'story-cards',
        name: '',
        raw: {},
        entries: json,
        notes,
      };
    }
    case 'kobold': {
      if (Array.isArray(json))
        return { format, formatVersion: null, name: '', raw: {}, entries: json, notes };
      if (!isObject(json) || !Array.isArray(json.worldinfo)) {
        throw new LoreFileError(
          'a KoboldAI Lite world info file is a list, or a save with "worldinfo"',
        );
      }
      notes.push("only the save's world info and its search depth are imported");
      const raw: Json = {};
      for (const key of ['wisearchdepth', 'wiinsertlocation'])
        if (key in json) raw[key] = json[key];
      return {
        format,
        formatVersion: 'save',
        name: str(json.title),
        raw,
        entries: json.worldinfo,
        notes,
      };
    }
    case 'sillytavern': {
      if (!isObject(json) || json.entries === undefined) {
        throw new LoreFileError('a SillyTavern world is an object with "entries"');
      }
      return {
        format,
        formatVersion: null,
        name: str(json.name),
        raw: without(json, 'entries'),
        entries: entriesOf(json.entries, 'entries'),
        notes,
      };
    }
    case 'novelai': {
      const container = isObject(json) ? naiContainer(json) : null;
      if (container) {
        const book = container.book;
        if (!isObject(book) || !Array.isArray(book.entries)) {
          throw new LoreFileError(
            `the NovelAI ${container.kind} holds no lorebook: ${container.path} must be an object with "entries"`,
          );
        }
        notes.push(`only the ${container.kind}'s lorebook is imported; its other fields are not`);
        const version = num(book.lorebookVersion);
        return {
          format,
          formatVersion: `${container.kind}${version === undefined ? '' : ` ${version}`}`,
          name: str(container.title),
          raw: without(book, 'entries'),
          entries: book.entries,
          notes,
        };
      }
      if (!isObject(json) || !Array.isArray(json.entries)) {
        throw new LoreFileError(
          'a NovelAI lorebook is an object with "lorebookVersion" and "entries"',
        );
      }
      const version = num(json.lorebookVersion);
      return {
        format,
        formatVersion: version === undefined ? null : String(version),
        name: '',
        raw: without(json, 'entries'),
        entries: json.entries,
        notes,
      };
    }
    case 'agnai': {
      if (!isObject(json) || !Array.isArray(json.entries)) {
        throw new LoreFileError(
          'an Agnai memory book is an object {kind: "memory", entries: [{name, entry, keywords, …}]}',
        );
      }
      return {
        format,
        formatVersion: null,
        name: str(json.name),
        raw: without(json, 'entries'),
        entries: json.entries,
        notes,
      };
    }
    case 'risu': {
      if (!isObject(json) || !Array.isArray(json.data)) {
        throw new LoreFileError(
          'a Risu lorebook is an object {type: "risu", data: [{key, content, …}]}',
        );
      }
      return {
        format,
        formatVersion: str(json.ver) || null,
        name: str(json.name),
        raw: without(json, 'data'),
        entries: json.data,
        notes,
      };
    }
    case 'ccv2':
    case 'ccv3': {
      if (!isObject(json)) throw new LoreFileError('a character card or lorebook is a JSON object');
      if (json.spec === 'lorebook_v3') {
        return characterBook(json.data, 'ccv3', 'lorebook_v3', '', notes);
      }
      const data = isObject(json.data) ? json.data : null;
      if (data) {
        notes.push("only the card's character_book is imported; its other fields are not");
        const charName = str(data.nickname) || str(data.name);
        const version = str(json.spec_version) || str(json.spec) || null;
        return characterBook(
          data.character_book,
          json.spec === 'chara_card_v3' ? 'ccv3' : format,
          version,
          charName,
          notes,
        );
      }
      // A bare character_book.
      return characterBook(json, format, null, '', notes);
    }
  }
}

/** A NovelAI story or scenario around a lorebook: where its book is, or null for a bare book. */
function naiContainer(
  json: Json,
): { kind: 'story' | 'scenario'; path: string; book: unknown; title: unknown } | null {
  if (num(json.storyContainerVersion) !== undefined) {
    const content = isObject(json.content) ? json.content : {};
    const metadata = isObject(json.metadata) ? json.metadata : {};
    return {
      kind: 'story',
      path: 'content.lorebook',
      book: content.lorebook,
      title: metadata.title,
    };
  }
  if (num(json.scenarioVersion) !== undefined) {
    return { kind: 'scenario', path: 'lorebook', book: json.lorebook, title: json.title };
  }
  return null;
}

/**
 * The last touches every read card gets, on import and when an export compares a card with its
 * source: a display name past the card limit is cut (the source keeps it whole), a blank one
 * replaced.
 */
export function normaliseRead<T extends { name: string }>(card: T, index: number): T {
  const name = card.name.slice(0, LIMITS.cardNameChars);
  return { ...card, name: name.trim() === '' ? `Entry ${index + 1}` : name };
}

/** A lore file read: its format, its book, its cards (normalised, source kept) and the report. */
export function readLoreFile(bytes: Buffer, format?: LoreFormat): ParsedBook {
  const { json } = openLoreFile(bytes);
  const detected = format ?? sniffFormat(json);
  if (!detected) {
    throw new LoreFileError(
      'the file is not a lore format Chronicle reads (AI Dungeon, SillyTavern, Character Card V2/V3, NovelAI lorebook, story or scenario, KoboldAI Lite, Agnai, Risu); name one with ?format=',
    );
  }
  const located = locate(json, detected);
  const codec = readerFor(located.format);
  const entries = located.entries;
  const objects = entries.filter(isObject);
  const ctx = codec.context(located.raw, objects, {
    charName: located.charName || located.name || undefined,
  });
  const report = emptyReport();
  report.notes.push(...located.notes);
  const cards: ParsedCard[] = [];
  entries.forEach((raw, index) => {
    if (!isObject(raw)) {
      report.skipped.push({ index, reason: 'not an object' });
      return;
    }
    const read = codec.read(raw, ctx, index);
    if ('skip' in read) {
      report.skipped.push({ index, reason: read.skip });
      return;
    }
    const card: ParsedCard = {
      ...normaliseRead(read.card, index),
      origin: { format: located.format, raw },
    };
    noteCard(report, index, card, read.verbatim);
    cards.push(card);
  });
  return {
    format: located.format,
    formatVersion: located.formatVersion,
    name: located.name,
    raw: located.raw,
    cards,
    report,
  };
}
