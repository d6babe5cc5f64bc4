// Cutting an entry to fit its budget, as NovelAI trims lore: from the end (trimBottom) or the
// start (trimTop), back to the finest whole unit the entry allows (a line, a sentence or a
// token). Pure: the tokenizer's cut is handed in.

import type { CardBudget } from '../context.types';

export interface TokenCut {
  countTokens(text: string): number;
  /** The text of `text`'s first (or last) `n` tokens. */
  firstTokens(text: string, n: number): string;
  lastTokens(text: string, n: number): string;
}

/** A sentence's end: its stop, closing quotes or brackets, then a space or the text's end. */
const SENTENCE_END = /[.!?…]["'”’)\]]*(?=\s|$)/g;

/**
 * `text` cut to at most `tokens` tokens the way `budget` allows, or '' when nothing whole fits
 * (or the budget does not allow a cut: the entry is then left out, as NovelAI's doNotTrim).
 */
export function trimToFit(
  text: string,
  tokens: number,
  budget: CardBudget | undefined,
  cut: TokenCut,
): string {
  const direction = budget?.trim ?? 'none';
  if (direction === 'none' || tokens <= 0) return '';
  if (cut.countTokens(text) <= tokens) return text;
  const unit = budget?.trimUnit ?? 'sentence';
  const keepStart = direction === 'end';
  const piece = keepStart ? cut.firstTokens(text, tokens) : cut.lastTokens(text, tokens);
  if (unit === 'token') return piece.trim();
  return (keepStart ? upToLastBoundary(piece, unit) : fromFirstBoundary(piece, unit)).trim();
}

/** `piece` (the start of an entry) up to its last line or sentence end. */
function upToLastBoundary(piece: string, unit: 'newline' | 'sentence'): string {
  let end = piece.lastIndexOf('\n');
  if (unit === 'sentence') {
    for (const match of piece.matchAll(SENTENCE_END)) {
      end = Math.max(end, match.index + match[0].length);
    }
  }
  return end > 0 ? piece.slice(0, end) : '';
}

/** `piece` (the end of an entry) from its first line or sentence start. */
function fromFirstBoundary(piece: string, unit: 'newline' | 'sentence'): string {
  const candidates: number[] = [];
  const newline = piece.indexOf('\n');
  if (newline >= 0) candidates.push(newline + 1);
  if (unit === 'sentence') {
    const match = SENTENCE_END.exec(piece);
    SENTENCE_END.lastIndex = 0;
    if (match) candidates.push(match.index + match[0].length);
  }
  const start = candidates.length > 0 ? Math.min(...candidates) : -1;
  return start >= 0 && start < piece.length ? piece.slice(start) : '';
}

/** A budget amount in tokens: over 1 as it is, in (0, 1] a share of `contextTokens`. */
export function budgetTokens(amount: number | undefined, contextTokens: number): number {
  if (amount === undefined) return Infinity;
  return amount > 0 && amount <= 1 ? Math.floor(amount * contextTokens) : Math.floor(amount);
}
