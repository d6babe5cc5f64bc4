import { Tiktoken } from 'js-tiktoken/lite';
import cl100kBase from 'js-tiktoken/ranks/cl100k_base';
import o200kBase from 'js-tiktoken/ranks/o200k_base';

export type TokenEncoding = 'cl100k_base' | 'o200k_base';

export const DEFAULT_ENCODING: TokenEncoding = 'cl100k_base';

export interface Tokenizer {
  readonly encoding: TokenEncoding;
  /** Encodes `text` and returns its length. Exact, and costs a full encode. */
  count(text: string): number;
  /**
   * The same number as `count`, remembered per text. For the pieces of a prompt that recur
   * from turn to turn unchanged (system sections, card lines, the summary), so that a turn
   * pays to encode only what changed since the last one.
   */
  countCached(text: string): number;
  /** The text of `text`'s last `n` tokens (all of it when it has no more than `n`). */
  lastTokens(text: string, n: number): string;
  /** The text of `text`'s first `n` tokens (all of it when it has no more than `n`). */
  firstTokens(text: string, n: number): string;
}

// Built from the tables bundled with js-tiktoken, never fetched: this runs on every turn, and
// a worker must not depend on the network to count tokens.
const RANKS = { cl100k_base: cl100kBase, o200k_base: o200kBase } as const;

// A player can type "<|endoftext|>". Encoding special tokens as ordinary text counts it like
// any other prose instead of throwing in the middle of a turn.
const NO_SPECIAL: string[] = [];

// Bounds the per-process memo. The entries are the recurring pieces of the adventures a worker
// is serving; a few thousand of them hold every adventure's static block many times over, and
// the character bound keeps it to a few megabytes whatever the texts are.
const MEMO_ENTRIES = 4096;
const MEMO_TOTAL_CHARS = 4 * 1024 * 1024;
// Longer texts are rare one-offs (a pasted chapter), not worth keeping.
const MEMO_MAX_CHARS = 64 * 1024;
// The pieces' memo (see `count`): words and their spacing recur across every text, so a few tens
// of thousands of them cover a worker's adventures; full, it starts again.
const PIECES_MAX = 50_000;
const PIECE_MAX_CHARS = 64;
/**
 * A piece the pattern would cut otherwise when alone. None is known for the bundled encodings
 * (their one lookahead, `\s+(?!\S)`, only shortens a run of spaces to what it matches alone), but
 * the check is one match per new piece and keeps the count exact if a table ever has one.
 */
const NOT_ALONE = -1;

class TiktokenTokenizer implements Tokenizer {
  private readonly memo = new Map<string, number>();
  private memoChars = 0;
  /** Tokens of each piece the pattern cut a text into (NOT_ALONE: see `piece`). */
  private readonly pieces = new Map<string, number>();

  constructor(
    readonly encoding: TokenEncoding,
    private readonly encoder: Tiktoken,
    /** The encoding's split pattern (its ranks' pat_str), as the encoder applies it. */
    private readonly pattern: RegExp,
  ) {}

  /**
   * An encode cuts the text with the encoding's pattern and byte-pair merges each piece on its
   * own (special tokens are text here, NO_SPECIAL), so the count is the sum of the pieces'
   * counts, and a piece's count never changes: remembered, most of a narration costs a regex
   * match and a lookup instead of a UTF-8 encode and a merge per word. Exact: a piece the
   * pattern would cut otherwise when alone is never counted alone; its text is encoded whole.
   */
  count(text: string): number {
    if (text === '') return 0;
    let tokens = 0;
    for (const match of text.matchAll(this.pattern)) {
      const piece = this.piece(match[0]);
      if (piece === NOT_ALONE) return this.encoder.encode(text, NO_SPECIAL, NO_SPECIAL).length;
      tokens += piece;
    }
    return tokens;
  }

  private piece(text: string): number {
    const known = this.pieces.get(text);
    if (known !== undefined) return known;
    const alone = [...text.matchAll(this.pattern)];
    const tokens =
      alone.length === 1 && alone[0][0] === text
        ? this.encoder.encode(text, NO_SPECIAL, NO_SPECIAL).length
        : NOT_ALONE;
    if (text.length <= PIECE_MAX_CHARS) {
      if (this.pieces.size >= PIECES_MAX) this.pieces.clear();
      this.pieces.set(text, tokens);
    }
    return tokens;
  }

  countCached(text: string): number {
    const known = this.memo.get(text);
    if (known !== undefined) {
      // Re-inserting keeps the Map's insertion order an LRU order.
      this.memo.delete(text);
      this.memo.set(text, known);
      return known;
    }
    const tokens = this.count(text);
    if (text.length <= MEMO_MAX_CHARS) {
      while (
        this.memo.size >= MEMO_ENTRIES ||
        (this.memo.size > 0 && this.memoChars + text.length > MEMO_TOTAL_CHARS)
      ) {
        const oldest = this.memo.keys().next().value as string;
        this.memo.delete(oldest);
        this.memoChars -= oldest.length;
      }
      this.memo.set(text, tokens);
      this.memoChars += text.length;
    }
    return tokens;
  }

  lastTokens(text: string, n: number): string {
    if (n <= 0) return '';
    const tokens = this.encoder.encode(text, NO_SPECIAL, NO_SPECIAL);
    if (tokens.length <= n) return text;
    return this.encoder.decode(tokens.slice(tokens.length - n));
  }

  firstTokens(text: string, n: number): string {
    if (n <= 0) return '';
    const tokens = this.encoder.encode(text, NO_SPECIAL, NO_SPECIAL);
    if (tokens.length <= n) return text;
    return this.encoder.decode(tokens.slice(0, n));
  }
}

const tokenizers = new Map<TokenEncoding, Tokenizer>();

/**
 * The process-wide tokenizer for `encoding`. Building an encoder parses its rank table, which
 * takes about half a second, so each one is built once, on first use.
 */
export function tokenizer(encoding: TokenEncoding = DEFAULT_ENCODING): Tokenizer {
  let existing = tokenizers.get(encoding);
  if (!existing) {
    const ranks = RANKS[encoding];
    if (!ranks) throw new Error(`unknown token encoding: ${String(encoding)}`);
    existing = new TiktokenTokenizer(
      encoding,
      new Tiktoken(ranks),
      new RegExp(ranks.pat_str, 'ug'),
    );
    tokenizers.set(encoding, existing);
  }
  return existing;
}
