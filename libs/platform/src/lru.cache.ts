// A bounded in-process map for the access check's lookups: the least recently used entry goes
// first when it is full, and an entry given a time to live is gone once that has passed. The
// time is read through `now`, so a test moves it instead of waiting.

export interface LruCacheOptions<V = unknown> {
  /** The most entries kept. */
  capacity: number;
  /** How long an entry stays valid; undefined: until evicted. */
  ttlMs?: number;
  now?: () => number;
  /**
   * A bound on the entries' total weight (`weigh`), besides their count: values whose size
   * varies by orders of magnitude (a young adventure's projection, a five-thousand-turn one's)
   * are bounded by what they hold, not by how many they are. The newest entry is kept whatever
   * it weighs.
   */
  maxWeight?: number;
  weigh?: (value: V) => number;
}

export class LruCache<K, V> {
  private readonly entries = new Map<K, { value: V; expiresAt: number; weight: number }>();
  private readonly capacity: number;
  private readonly ttlMs: number | undefined;
  private readonly now: () => number;
  private readonly maxWeight: number;
  private readonly weigh: ((value: V) => number) | undefined;
  private weight = 0;

  constructor(options: LruCacheOptions<V>) {
    this.capacity = Math.max(1, options.capacity);
    this.ttlMs = options.ttlMs;
    this.now = options.now ?? Date.now;
    this.maxWeight = options.maxWeight ?? Infinity;
    this.weigh = options.weigh;
  }

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.delete(key);
      return undefined;
    }
    // Map keeps insertion order: re-inserting makes this the most recently used.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: K, value: V): void {
    const expiresAt = this.ttlMs === undefined ? Infinity : this.now() + this.ttlMs;
    const weight = this.weigh ? Math.max(0, this.weigh(value)) : 0;
    this.delete(key);
    this.entries.set(key, { value, expiresAt, weight });
    this.weight += weight;
    while (
      this.entries.size > this.capacity ||
      (this.entries.size > 1 && this.weight > this.maxWeight)
    ) {
      this.delete(this.entries.keys().next().value as K);
    }
  }

  delete(key: K): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.weight -= entry.weight;
  }

  /** Drops every entry whose value matches (a key revoked by id, say). */
  deleteWhere(matches: (value: V) => boolean): void {
    for (const [key, entry] of this.entries) if (matches(entry.value)) this.delete(key);
  }

  /** The entries' total weight (0 without `weigh`). */
  get totalWeight(): number {
    return this.weight;
  }

  get size(): number {
    return this.entries.size;
  }
}
