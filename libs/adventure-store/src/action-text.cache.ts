import { LruCache } from '@chronicle/platform';
import type { ActionTextReader } from './turn-context';

// A turn's history window is its last hundred or so actions, and the next turn's window is the
// same one moved by two rows; reading every text of it from the log each turn (the events whole:
// a Narrated event carries its manifest and usage too) was most of a turn's database work and of
// the worker's CPU. A text is keyed by the version of the event that holds it, and an event at a
// version never changes in an append-only log — an edit writes a new event, so a new key — so a
// text read once is that text for good, and the cache needs no invalidation.
//
// The two newest rows of a window are the ones a turn has just written (the player's action, the
// previous narration), and the process has those events in hand already: the repository hands
// them over (`remember`) as it folds or appends them, so a turn reads no text from the log.

/** The most texts kept; at about a kilobyte each, tens of megabytes at most. */
const DEFAULT_CAPACITY = 20_000;

/** Action texts by (adventure, event version, action id), read from the log only when unseen. */
export class ActionTextCache implements ActionTextReader {
  private readonly texts: LruCache<string, string>;

  constructor(
    private readonly store: ActionTextReader,
    capacity = DEFAULT_CAPACITY,
  ) {
    this.texts = new LruCache({ capacity });
  }

  async readActionTexts(
    adventureId: string,
    entries: readonly { id: string; textVersion: number }[],
  ): Promise<string[]> {
    const texts = entries.map((entry) => this.texts.get(textKey(adventureId, entry)));
    const missing = entries.filter((_, i) => texts[i] === undefined);
    if (missing.length > 0) {
      const read = await this.store.readActionTexts(adventureId, missing);
      let next = 0;
      texts.forEach((text, i) => {
        if (text !== undefined) return;
        texts[i] = read[next++];
        this.texts.set(textKey(adventureId, entries[i]), texts[i] as string);
      });
    }
    return texts as string[];
  }

  /** Texts seen in events this process read or wrote. */
  remember(
    adventureId: string,
    entries: readonly { id: string; textVersion: number; text: string }[],
  ): void {
    for (const entry of entries) this.texts.set(textKey(adventureId, entry), entry.text);
  }
}

function textKey(adventureId: string, entry: { id: string; textVersion: number }): string {
  return `${adventureId}:${entry.textVersion}:${entry.id}`;
}
