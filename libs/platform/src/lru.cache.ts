// A bounded in-process map for the access check's lookups: the least recently used entry goes
// first when it is full, and an entry given a time to live is gone once that has passed. The
// time is read through `now`, so a test moves it instead of waiting.

export interface LruCacheOptions {
  /** The most entries kept. */
  capacity: number;
  /** How long an entry stays valid; undefined: until evicted. */
  ttlMs?: number;
  now?: () => number;
}

export class LruCache<K, V> {
  private readonly entries = new Map<K, { value: V; expiresAt: number }>();
  private readonly capacity: number;
  private readonly ttlMs: number | undefined;
  private readonly now: () => number;

  constructor(options: LruCacheOptions) {
    this.capacity = Math.max(1, options.capacity);
    this.ttlMs = options.ttlMs;
    this.now = options.now ?? Date.now;
  }

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    // Map keeps insertion order: re-inserting makes this the most recently used.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: K, value: V): void {
    const expiresAt = this.ttlMs === undefined ? Infinity : this.now() + this.ttlMs;
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt });
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value as K;
      this.entries.delete(oldest);
    }
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Drops every entry whose value matches (a key revoked by id, say). */
  deleteWhere(matches: (value: V) => boolean): void {
    for (const [key, entry] of this.entries) if (matches(entry.value)) this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
