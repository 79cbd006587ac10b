/**
 * The one bounded map. Eviction rule (the only one in memvault): at most `maxEntries` entries;
 * `get` and `set` make an entry the most recently used; when a `set` takes the map past its bound,
 * the least recently used entries leave, oldest first, until it is within the bound again. `peek`
 * and `has` read without changing the order. `onEvict` hears of every entry that leaves because of
 * the bound (not of `delete`, `clear` or a value replaced by `set`), so an owner can wipe or close
 * what it held. An owner whose entries can be in use passes `isPinned`: a pinned entry is passed
 * over (the next least recently used one leaves instead), and the entry just set never leaves, so
 * the map may stay over its bound while everything else is pinned.
 *
 * Built on Map's insertion order: re-inserting a key moves it to the end, so the first key is the
 * least recently used one. Every operation is O(1), but for `set` passing over pinned entries.
 */
export class LruMap<K, V> {
  private readonly entries = new Map<K, V>();
  readonly maxEntries: number;

  constructor(
    maxEntries: number,
    private readonly onEvict?: (key: K, value: V) => void,
    private readonly isPinned?: (value: V, key: K) => boolean,
  ) {
    if (!(maxEntries >= 1)) throw new RangeError('LruMap: maxEntries must be at least 1');
    this.maxEntries = Math.floor(maxEntries);
  }

  get size(): number {
    return this.entries.size;
  }

  /** The value, made the most recently used. */
  get(key: K): V | undefined {
    const value = this.entries.get(key);
    // One lookup on the common path; `has` only to tell a stored undefined from a miss.
    if (value === undefined && !this.entries.has(key)) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value as V);
    return value;
  }

  /** The value, without touching the order. */
  peek(key: K): V | undefined {
    return this.entries.get(key);
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  /** Stores the value as the most recently used, then evicts the least recently used past the bound. */
  set(key: K, value: V): this {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.maxEntries) this.evictPastBound(key);
    return this;
  }

  /** Oldest first: the loop stops as soon as the map is within its bound (O(1) without pinned entries). */
  private evictPastBound(newest: K): void {
    for (const [key, value] of this.entries) {
      if (this.entries.size <= this.maxEntries) return;
      if (key === newest || this.isPinned?.(value, key)) continue;
      this.entries.delete(key);
      this.onEvict?.(key, value);
    }
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  /** Values from the least to the most recently used. */
  values(): IterableIterator<V> {
    return this.entries.values();
  }

  /** Keys from the least to the most recently used. */
  keys(): IterableIterator<K> {
    return this.entries.keys();
  }
}
