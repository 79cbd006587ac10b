/**
 * The one bounded map. Eviction rule (the only one in memvault): at most `maxEntries` entries;
 * `get` and `set` make an entry the most recently used; when a `set` takes the map past its bound,
 * the least recently used entries leave, oldest first, until it is within the bound again. `peek`
 * and `has` read without changing the order. `onEvict` hears of every entry that leaves because of
 * the bound (not of `delete`, `clear` or a value replaced by `set`), so an owner can wipe or close
 * what it held.
 *
 * Built on Map's insertion order: re-inserting a key moves it to the end, so the first key is the
 * least recently used one. Every operation is O(1).
 */
export class LruMap<K, V> {
  private readonly entries = new Map<K, V>();
  readonly maxEntries: number;

  constructor(
    maxEntries: number,
    private readonly onEvict?: (key: K, value: V) => void,
  ) {
    if (!(maxEntries >= 1)) throw new RangeError('LruMap: maxEntries must be at least 1');
    this.maxEntries = Math.floor(maxEntries);
  }

  get size(): number {
    return this.entries.size;
  }

  /** The value, made the most recently used. */
  get(key: K): V | undefined {
    if (!this.entries.has(key)) return undefined;
    const value = this.entries.get(key) as V;
    this.entries.delete(key);
    this.entries.set(key, value);
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
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      const evicted = this.entries.get(oldest.value) as V;
      this.entries.delete(oldest.value);
      this.onEvict?.(oldest.value, evicted);
    }
    return this;
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
