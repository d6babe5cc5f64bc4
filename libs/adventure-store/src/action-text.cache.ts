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
  private readonly texts = new Map<string, string>();

  constructor(
    private readonly store: ActionTextReader,
    private readonly capacity = DEFAULT_CAPACITY,
  ) {}

  async readActionTexts(
    adventureId: string,
    entries: readonly { id: string; textVersion: number }[],
  ): Promise<string[]> {
    const keys = entries.map((entry) => `${adventureId}:${entry.textVersion}:${entry.id}`);
    const found = new Map<string, string>();
    const missing: { id: string; textVersion: number }[] = [];
    entries.forEach((entry, i) => {
      const text = this.texts.get(keys[i]);
      if (text === undefined) missing.push(entry);
      else found.set(keys[i], text);
    });
    if (missing.length > 0) {
      const read = await this.store.readActionTexts(adventureId, missing);
      missing.forEach((entry, i) =>
        found.set(`${adventureId}:${entry.textVersion}:${entry.id}`, read[i]),
      );
    }
    this.touch(found);
    return keys.map((key) => found.get(key) as string);
  }

  /** Texts seen in events this process read or wrote. */
  remember(
    adventureId: string,
    entries: readonly { id: string; textVersion: number; text: string }[],
  ) {
    this.touch(
      new Map(
        entries.map((entry) => [`${adventureId}:${entry.textVersion}:${entry.id}`, entry.text]),
      ),
    );
  }

  /** Puts `used` newest, so eviction takes the texts unused longest. */
  private touch(used: ReadonlyMap<string, string>): void {
    for (const [key, text] of used) {
      this.texts.delete(key);
      this.texts.set(key, text);
    }
    for (const key of this.texts.keys()) {
      if (this.texts.size <= this.capacity) break;
      this.texts.delete(key);
    }
  }
}
