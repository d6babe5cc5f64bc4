// The containers a lore file may arrive in: a PNG character card (text chunks) and a .charx
// zip. Both are read as hostile input: every length is checked against the bytes that are
// there, and every inflate is capped (LIMITS.loreInflatedBytes), so a zip or PNG bomb stops at
// the cap instead of filling memory.

import { inflateRawSync, inflateSync } from 'node:zlib';
import { LIMITS } from '@chronicle/adventure';
import { LoreFileError } from './lore.types';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const ZIP_LOCAL = 0x04034b50;
const ZIP_CENTRAL = 0x02014b50;
const ZIP_END = 0x06054b50;
/** Chunks a PNG may hold before it is refused (a real card has a handful). */
const MAX_PNG_CHUNKS = 10_000;
const MAX_ZIP_ENTRIES = 10_000;

export function isPng(bytes: Buffer): boolean {
  return bytes.length >= 8 && bytes.subarray(0, 8).equals(PNG_SIGNATURE);
}

export function isZip(bytes: Buffer): boolean {
  return bytes.length >= 4 && bytes.readUInt32LE(0) === ZIP_LOCAL;
}

function inflateCapped(data: Buffer, raw: boolean, what: string): Buffer {
  try {
    const options = { maxOutputLength: LIMITS.loreInflatedBytes };
    return raw ? inflateRawSync(data, options) : inflateSync(data, options);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ERR_BUFFER_TOO_LARGE' || /Cannot create a Buffer larger/.test(String(error))) {
      throw new LoreFileError(
        `${what} inflates past ${LIMITS.loreInflatedBytes} bytes (limit loreInflatedBytes); it is refused`,
      );
    }
    throw new LoreFileError(`${what} is not valid deflate data: ${(error as Error).message}`);
  }
}

/** The PNG's text chunks (tEXt, zTXt, iTXt) by keyword; the image data is skipped unread. */
export function pngTextChunks(bytes: Buffer): Map<string, string> {
  if (!isPng(bytes)) throw new LoreFileError('the file is not a PNG (bad signature)');
  const texts = new Map<string, string>();
  let at = 8;
  let inflated = 0;
  for (let count = 0; at < bytes.length; count++) {
    if (count >= MAX_PNG_CHUNKS)
      throw new LoreFileError(`the PNG has over ${MAX_PNG_CHUNKS} chunks`);
    if (at + 12 > bytes.length) throw new LoreFileError(`the PNG is cut short at byte ${at}`);
    const length = bytes.readUInt32BE(at);
    const type = bytes.toString('latin1', at + 4, at + 8);
    const start = at + 8;
    const end = start + length;
    if (end + 4 > bytes.length) {
      throw new LoreFileError(
        `the PNG's ${type} chunk at byte ${at} runs past the end of the file`,
      );
    }
    const data = bytes.subarray(start, end);
    if (type === 'tEXt' || type === 'zTXt' || type === 'iTXt') {
      const nul = data.indexOf(0);
      if (nul <= 0 || nul > 79) throw new LoreFileError(`the PNG's ${type} chunk has no keyword`);
      const keyword = data.toString('latin1', 0, nul);
      let text: string;
      if (type === 'tEXt') {
        text = data.toString('latin1', nul + 1);
      } else if (type === 'zTXt') {
        const out = inflateCapped(data.subarray(nul + 2), false, `the PNG's zTXt "${keyword}"`);
        inflated += out.length;
        text = out.toString('latin1');
      } else {
        // iTXt: keyword, compression flag, method, language\0, translated keyword\0, text (UTF-8).
        const compressed = data[nul + 1] === 1;
        const language = data.indexOf(0, nul + 3);
        const translated = language < 0 ? -1 : data.indexOf(0, language + 1);
        if (translated < 0) throw new LoreFileError(`the PNG's iTXt "${keyword}" is malformed`);
        const body = data.subarray(translated + 1);
        const out = compressed ? inflateCapped(body, false, `the PNG's iTXt "${keyword}"`) : body;
        inflated += compressed ? out.length : 0;
        text = out.toString('utf8');
      }
      if (inflated > LIMITS.loreInflatedBytes) {
        throw new LoreFileError(
          `the PNG's text chunks inflate past ${LIMITS.loreInflatedBytes} bytes (limit loreInflatedBytes)`,
        );
      }
      // The first chunk of a keyword wins, as readers of card PNGs do.
      if (!texts.has(keyword)) texts.set(keyword, text);
    }
    at = end + 4;
    if (type === 'IEND') break;
  }
  return texts;
}

/** One file of a zip, by its exact name, inflated within the cap; null when it is not there. */
export function zipEntry(bytes: Buffer, name: string): Buffer | null {
  // The end-of-central-directory record sits in the last 65,557 bytes (22 + a comment).
  let end = -1;
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 65_557); i--) {
    if (bytes.readUInt32LE(i) === ZIP_END) {
      end = i;
      break;
    }
  }
  if (end < 0) throw new LoreFileError('the zip has no central directory (is it cut short?)');
  const entries = bytes.readUInt16LE(end + 10);
  const directorySize = bytes.readUInt32LE(end + 12);
  let at = bytes.readUInt32LE(end + 16);
  if (entries > MAX_ZIP_ENTRIES)
    throw new LoreFileError(`the zip lists over ${MAX_ZIP_ENTRIES} files`);
  if (at + directorySize > end)
    throw new LoreFileError('the zip central directory is out of bounds');
  for (let i = 0; i < entries; i++) {
    if (at + 46 > end || bytes.readUInt32LE(at) !== ZIP_CENTRAL) {
      throw new LoreFileError('the zip central directory is malformed');
    }
    const method = bytes.readUInt16LE(at + 10);
    const compressedSize = bytes.readUInt32LE(at + 20);
    const size = bytes.readUInt32LE(at + 24);
    const nameLength = bytes.readUInt16LE(at + 28);
    const extraLength = bytes.readUInt16LE(at + 30);
    const commentLength = bytes.readUInt16LE(at + 32);
    const localOffset = bytes.readUInt32LE(at + 42);
    const entryName = bytes.toString('utf8', at + 46, at + 46 + nameLength);
    at += 46 + nameLength + extraLength + commentLength;
    if (entryName !== name) continue;
    if (size > LIMITS.loreInflatedBytes) {
      throw new LoreFileError(
        `the zip's ${name} is ${size} bytes; keep it to ${LIMITS.loreInflatedBytes} (limit loreInflatedBytes)`,
      );
    }
    if (localOffset + 30 > bytes.length || bytes.readUInt32LE(localOffset) !== ZIP_LOCAL) {
      throw new LoreFileError(`the zip's local header for ${name} is malformed`);
    }
    const dataStart =
      localOffset +
      30 +
      bytes.readUInt16LE(localOffset + 26) +
      bytes.readUInt16LE(localOffset + 28);
    if (dataStart + compressedSize > bytes.length) {
      throw new LoreFileError(`the zip's ${name} runs past the end of the file`);
    }
    const data = bytes.subarray(dataStart, dataStart + compressedSize);
    if (method === 0) return Buffer.from(data);
    if (method === 8) return inflateCapped(data, true, `the zip's ${name}`);
    throw new LoreFileError(
      `the zip's ${name} uses compression method ${method}; use deflate or none`,
    );
  }
  return null;
}
