// What the player watches while a reply streams is the prose. The state block after it is
// machine text for the referee, so the stream stops at the first fence; the `done` frame then
// carries the exact narration that was stored. Everything in the reply after a fence leaves the
// narration anyway (see `parseReply`), so nothing the player should read is held back.

import { FENCE_MARK as FENCE } from './reply.parser';

export class ProseStreamFilter {
  private text = '';
  private sent = 0;
  private fenced = false;

  /** Adds a piece of the reply; returns the new text that is safe to show (may be empty). */
  push(piece: string): string {
    if (this.fenced) return '';
    this.text += piece;
    const fence = this.text.indexOf(FENCE, Math.max(0, this.sent - (FENCE.length - 1)));
    let end: number;
    if (fence >= 0) {
      this.fenced = true;
      end = fence;
    } else {
      // Trailing backticks may be the first half of a fence: keep them until the next piece.
      end = this.text.length;
      while (end > this.sent && this.text[end - 1] === '`') end--;
    }
    const out = this.text.slice(this.sent, Math.max(this.sent, end));
    this.sent = Math.max(this.sent, end);
    return out;
  }

  /** The rest, when the reply ended without a fence (backticks held back for nothing). */
  flush(): string {
    if (this.fenced) return '';
    const out = this.text.slice(this.sent);
    this.sent = this.text.length;
    return out;
  }
}
