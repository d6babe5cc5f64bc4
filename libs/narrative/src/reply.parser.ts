// Parses one model reply into narration and candidate events. Tolerant by design: a broken block
// never breaks a turn. Whatever cannot be read becomes a rejection with a fix and the narration
// is kept; only a reply with no narration at all fails the turn.
//
// Only the model's output comes here. The player's action text is prose, even when the player
// types a fenced `state` block into it: it reaches the prompt defused, and a model that echoes
// it anyway has the echoed events refused by the referee (see player-text.guard.ts).

import { checkEventShape, clipLine, rejection } from './event-shape.validator';
import { MAX_BLOCK_BYTES, MAX_EVENTS_PER_BLOCK } from './narrative.limits';
import type { ParsedReply, Rejection, StateEvent } from './narrative.types';

/**
 * What every state fence starts with: the one mark the parser reads blocks by and the stream
 * filter stops the player's view at (see prose-stream.filter.ts), owned here so both agree.
 */
export const FENCE_MARK = '```';
/** A `state` fence: three or more backticks, `state`, and at most one more word ("jsonl"). */
const FENCE = `\`{${FENCE_MARK.length},}[ \\t]*state(?:[ \\t]+[\\w-]*)?[ \\t]*`;
/** A line that opens a `state` block, possibly after narration on the same line. */
const OPENER = new RegExp(`^(.*?)${FENCE}$`, 'i');
/** Fence debris at the end of the narration before an opener ("```state ```state"). */
const DEBRIS = new RegExp(`(?:${FENCE})+$`, 'i');
/** A closing fence, possibly glued to the end of the last JSON line or followed by narration. */
const CLOSER = /^(.*?)`{3,}(.*)$/;
/** How many lines an object written over several lines (pretty-printed) may span. */
const MAX_OBJECT_SPAN_LINES = 32;

interface Block {
  lines: string[];
  closed: boolean;
}

interface Entry {
  value: unknown;
  raw: string;
}

export function parseReply(text: string): ParsedReply {
  const source = typeof text === 'string' ? text.replace(/\r\n?/g, '\n') : '';
  const { segments, blocks } = splitBlocks(source);
  const narration = segments
    .map((segment) => segment.trim())
    .filter((segment) => segment !== '')
    .join('\n\n');
  const last = blocks[blocks.length - 1];
  const { events, rejections } = last ? readBlock(last) : { events: [], rejections: [] };
  return {
    narration,
    events,
    rejections,
    onlyBlock: narration === '',
    truncated: last !== undefined && !last.closed,
  };
}

/**
 * Separates narration from every `state` block. All blocks leave the narration (none of them is
 * prose); only the last one is read, because a model that writes two has revised itself.
 */
function splitBlocks(source: string): { segments: string[]; blocks: Block[] } {
  const segments: string[] = [];
  const blocks: Block[] = [];
  let prose: string[] = [];
  let block: Block | undefined;
  const lines = source.split('\n');

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const opener = OPENER.exec(line);
    if (opener) {
      // A new opener inside an unclosed block abandons that block: the model started over.
      // Fence debris before the opener ("```state ```state") is not prose either.
      prose.push(opener[1].replace(DEBRIS, ''));
      segments.push(prose.join('\n'));
      prose = [];
      block = { lines: [], closed: false };
      blocks.push(block);
      continue;
    }
    if (block === undefined) {
      prose.push(line);
      continue;
    }
    const closer = CLOSER.exec(line);
    if (closer) {
      if (closer[1].trim() !== '') block.lines.push(closer[1]);
      block.closed = true;
      block = undefined;
      // What follows the closing fence on its line is read again as a line of its own: it is
      // prose, or the opener of the next block.
      if (closer[2].trim() !== '') lines.splice(i + 1, 0, closer[2]);
      continue;
    }
    block.lines.push(line);
  }
  segments.push(prose.join('\n'));
  return { segments, blocks };
}

function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

function tryJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** Strips what models wrap around JSON Lines: array brackets, separators, list markers. */
function unwrap(line: string): string {
  return line
    .replace(/^(?:[-*][ \t]+|[[,\s]+)/, '')
    .replace(/[\s,;\]]+$/, '')
    .trim();
}

function readBlock(block: Block): { events: StateEvent[]; rejections: Rejection[] } {
  const rejections: Rejection[] = [];

  // The byte limit applies first, on whole lines, so a partial line is never parsed as if whole.
  const lines: string[] = [];
  let bytes = 0;
  for (let i = 0; i < block.lines.length; i++) {
    bytes += utf8Length(block.lines[i]) + 1;
    if (bytes > MAX_BLOCK_BYTES) {
      const rest = block.lines.slice(i).filter((line) => line.trim() !== '');
      if (rest.length > 0) {
        rejections.push(
          rejection(
            rest[0].trim(),
            `block over ${MAX_BLOCK_BYTES} bytes; ${rest.length} more line(s) not read`,
            `Keep the state block under ${MAX_BLOCK_BYTES / 1024} KB: report only what changed this turn, one short line per event.`,
          ),
        );
      }
      break;
    }
    lines.push(block.lines[i]);
  }

  const entries = readEntries(lines, block.closed, rejections);
  const events: StateEvent[] = [];
  for (const entry of entries) {
    const check = checkEventShape(entry.value, entry.raw);
    if (check.ok) events.push(check.event);
    else rejections.push(check.rejection);
  }
  return { events, rejections };
}

/**
 * Reads JSON values from the block's lines: a JSON array of events, or JSON Lines (also with
 * array brackets and commas around them, or one object pretty-printed over several lines). Every
 * value and every unreadable line counts towards `MAX_EVENTS_PER_BLOCK`.
 */
function readEntries(lines: string[], closed: boolean, rejections: Rejection[]): Entry[] {
  const entries: Entry[] = [];
  let counted = 0;
  const overLimit = (raw: string, more: number) =>
    rejections.push(
      rejection(
        raw,
        `over the limit of ${MAX_EVENTS_PER_BLOCK} events per block; ${more} more not read`,
        `Report at most ${MAX_EVENTS_PER_BLOCK} events per turn: merge or drop minor changes.`,
      ),
    );

  const whole = lines.join('\n').trim();
  if (whole.startsWith('[')) {
    const parsed = tryJson(whole);
    if (parsed.ok && Array.isArray(parsed.value)) {
      const values = parsed.value as unknown[];
      for (const value of values.slice(0, MAX_EVENTS_PER_BLOCK)) {
        entries.push({ value, raw: JSON.stringify(value) ?? String(value) });
      }
      if (values.length > MAX_EVENTS_PER_BLOCK) {
        const first = values[MAX_EVENTS_PER_BLOCK];
        overLimit(JSON.stringify(first) ?? String(first), values.length - MAX_EVENTS_PER_BLOCK);
      }
      return entries;
    }
  }

  // In a block the output cap cut off, an unreadable line after the last readable one is where
  // the cut fell.
  const lastReadable = closed
    ? lines.length
    : findLastIndex(lines, (line) => !!readLine(line.trim()));
  const restCount = (from: number) => lines.slice(from).filter((line) => !isFiller(line)).length;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i].trim();
    if (isFiller(raw)) continue;
    if (counted >= MAX_EVENTS_PER_BLOCK) {
      overLimit(raw, restCount(i));
      break;
    }

    const values = readLine(raw);
    if (values) {
      const taken = values.slice(0, MAX_EVENTS_PER_BLOCK - counted);
      for (const value of taken) {
        entries.push({ value, raw: values.length === 1 ? raw : (JSON.stringify(value) ?? raw) });
      }
      counted += taken.length;
      if (taken.length < values.length) {
        const first = values[taken.length];
        overLimit(JSON.stringify(first) ?? raw, values.length - taken.length + restCount(i + 1));
        break;
      }
      continue;
    }

    counted++;
    const spanned = raw.startsWith('{') ? readSpan(lines, i) : undefined;
    if (spanned) {
      entries.push({ value: spanned.value, raw: spanned.raw });
      i = spanned.end;
      continue;
    }

    rejections.push(
      i > lastReadable
        ? rejection(
            raw,
            'truncated',
            'The output limit cut this line off. Finish the narration sooner so the whole block fits, and send this event again if it still applies.',
          )
        : rejection(
            raw,
            'not valid JSON',
            'Write each event as one complete JSON object on its own line, e.g. {"type":"move","id":"mira","to":"harbor"}.',
          ),
    );
  }
  return entries;
}

/** Blank lines and the bare brackets and commas of an array written one element per line. */
function isFiller(line: string): boolean {
  return /^[\s,[\]]*$/.test(line);
}

function readLine(raw: string): unknown[] | undefined {
  for (const candidate of raw === unwrap(raw) ? [raw] : [raw, unwrap(raw)]) {
    if (candidate === '') continue;
    const parsed = tryJson(candidate);
    if (parsed.ok) {
      return Array.isArray(parsed.value) && parsed.value.length > 0
        ? (parsed.value as unknown[])
        : [parsed.value];
    }
  }
  return undefined;
}

/** An object pretty-printed over lines `start`…: the shortest span that parses, if any. */
function readSpan(
  lines: string[],
  start: number,
): { value: unknown; raw: string; end: number } | undefined {
  const last = Math.min(lines.length - 1, start + MAX_OBJECT_SPAN_LINES - 1);
  let joined = lines[start].trim();
  for (let end = start + 1; end <= last; end++) {
    const next = lines[end].trim();
    // A line that is itself a whole object starts a new event: the open one is broken.
    if (next.startsWith('{') && readLine(next)) return undefined;
    joined += `\n${next}`;
    const parsed = tryJson(unwrap(joined));
    if (parsed.ok && typeof parsed.value === 'object' && parsed.value !== null) {
      return { value: parsed.value, raw: clipLine(joined.replace(/\s*\n\s*/g, ' ')), end };
    }
  }
  return undefined;
}

function findLastIndex<T>(items: T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i])) return i;
  return -1;
}
