// The current path as the only filter that decides which stored passages a turn may use, kept
// per adventure across its projections. Built whole it was a Map of every node on the path per
// query (3 ms at 10,000 actions, the largest step of recall after the full-text query); a turn's
// path differs from the last one's by a few entries (the new action and narration, an undo),
// so `sync` compares the path entry by entry and changes only the entries that moved.
import {
  excludedActionId,
  isStoryEntry,
  type AdventureState,
  type PathEntry,
} from '@chronicle/adventure';

/** A stored passage: a node of the story tree at one text version. */
export interface PassageRef {
  actionId: string;
  textVersion: number;
}

/** A node in the story at the head, with its place in the story (storyPath's index). */
export interface StoryPlace {
  entry: PathEntry;
  position: number;
}

/**
 * The story at the head as `storyPath` reads it (the take being retried and erased nodes left
 * out), by node id. It answers for the state it was last synced to, so a reader syncs and reads
 * with no await between: a concurrent turn of the same adventure may sync it to its own state.
 */
export class StoryPathIndex {
  // Per depth of the path last synced: the node, its text version, whether the story holds it.
  // Copies, not the entries, so a comparison never trusts an object that could have changed.
  private readonly ids: string[] = [];
  private readonly versions: number[] = [];
  private readonly held: boolean[] = [];
  /** The depth of each node the story holds. */
  private readonly depths = new Map<string, number>();
  private path: readonly PathEntry[] = [];
  /** The depths the story leaves out, ascending; null until a position is asked for. */
  private gaps: number[] | null = null;

  /** Brings the index to `state`'s path: O(path) comparisons, Map writes only for what moved. */
  sync(state: Pick<AdventureState, 'path' | 'inFlight'>): this {
    const excluded = excludedActionId(state);
    const path = state.path;
    let changed = path.length !== this.ids.length;
    for (let depth = path.length; depth < this.ids.length; depth++) {
      if (this.held[depth]) this.depths.delete(this.ids[depth]);
    }
    this.ids.length =
      this.versions.length =
      this.held.length =
        Math.min(this.ids.length, path.length);
    for (let depth = 0; depth < path.length; depth++) {
      const entry = path[depth];
      const held = isStoryEntry(entry, excluded);
      if (
        this.ids[depth] === entry.id &&
        this.versions[depth] === entry.textVersion &&
        this.held[depth] === held
      ) {
        continue;
      }
      // A node's depth never changes, so the id written here is nowhere else in the index.
      if (this.held[depth]) this.depths.delete(this.ids[depth]);
      this.ids[depth] = entry.id;
      this.versions[depth] = entry.textVersion;
      this.held[depth] = held;
      if (held) this.depths.set(entry.id, depth);
      changed = true;
    }
    if (changed) this.gaps = null;
    this.path = path;
    return this;
  }

  /** The text version the story reads of the node, or undefined when the story does not hold it. */
  textVersionOf(actionId: string): number | undefined {
    const depth = this.depths.get(actionId);
    return depth === undefined ? undefined : this.versions[depth];
  }

  /** The node's path entry and its position in the story, or undefined when it is not there. */
  placeOf(actionId: string): StoryPlace | undefined {
    const depth = this.depths.get(actionId);
    if (depth === undefined) return undefined;
    if (this.gaps === null) {
      this.gaps = [];
      for (let at = 0; at < this.held.length; at++) if (!this.held[at]) this.gaps.push(at);
    }
    let below = 0;
    while (below < this.gaps.length && this.gaps[below] < depth) below++;
    return { entry: this.path[depth], position: depth - below };
  }
}

/** The story at the head of one projection, built whole (an adventure's turns keep one: sync). */
export function pathIndex(state: Pick<AdventureState, 'path' | 'inFlight'>): StoryPathIndex {
  return new StoryPathIndex().sync(state);
}

/**
 * Whether a passage belongs to the story at the head: its node is on the current path (not
 * undone, not on another branch, not erased, not the take being retried) at the text version
 * the path reads.
 */
export function onPath(passage: PassageRef, path: StoryPathIndex): boolean {
  return path.textVersionOf(passage.actionId) === passage.textVersion;
}
