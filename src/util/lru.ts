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
 * A Map of nodes on a doubly linked list, oldest first. A `get` only relinks its node: moving the
 * key to the end of the Map itself (delete, then set) cost ten times a lookup, since it stores the
 * caller's key string (often one built for the lookup, hashed and flattened anew) and leaves a hole
 * that the Map rehashes away later. Every operation is O(1), but for `set` passing over pinned entries.
 */
interface Node<K, V> {
  key: K;
  value: V;
  older: Node<K, V> | undefined;
  newer: Node<K, V> | undefined;
}

export class LruMap<K, V> {
  private readonly nodes = new Map<K, Node<K, V>>();
  private oldest: Node<K, V> | undefined;
  private newest: Node<K, V> | undefined;
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
    return this.nodes.size;
  }

  /** The value, made the most recently used. */
  get(key: K): V | undefined {
    const node = this.nodes.get(key);
    if (node === undefined) return undefined;
    if (node !== this.newest) {
      this.unlink(node);
      this.append(node);
    }
    return node.value;
  }

  /** The value, without touching the order. */
  peek(key: K): V | undefined {
    return this.nodes.get(key)?.value;
  }

  has(key: K): boolean {
    return this.nodes.has(key);
  }

  /** Stores the value as the most recently used, then evicts the least recently used past the bound. */
  set(key: K, value: V): this {
    const known = this.nodes.get(key);
    if (known !== undefined) {
      known.value = value;
      if (known !== this.newest) {
        this.unlink(known);
        this.append(known);
      }
      return this;
    }
    const node: Node<K, V> = { key, value, older: undefined, newer: undefined };
    this.nodes.set(key, node);
    this.append(node);
    if (this.nodes.size > this.maxEntries) this.evictPastBound(node);
    return this;
  }

  /** Oldest first: the loop stops as soon as the map is within its bound (O(1) without pinned entries). */
  private evictPastBound(newest: Node<K, V>): void {
    let node = this.oldest;
    while (node !== undefined && this.nodes.size > this.maxEntries) {
      const next = node.newer;
      if (node !== newest && !this.isPinned?.(node.value, node.key)) {
        this.remove(node);
        this.onEvict?.(node.key, node.value);
      }
      node = next;
    }
  }

  delete(key: K): boolean {
    const node = this.nodes.get(key);
    if (node === undefined) return false;
    this.remove(node);
    return true;
  }

  clear(): void {
    this.nodes.clear();
    this.oldest = this.newest = undefined;
  }

  /** Values from the least to the most recently used. */
  *values(): IterableIterator<V> {
    for (let node = this.oldest; node !== undefined; node = node.newer) yield node.value;
  }

  /** Keys from the least to the most recently used. */
  *keys(): IterableIterator<K> {
    for (let node = this.oldest; node !== undefined; node = node.newer) yield node.key;
  }

  private remove(node: Node<K, V>): void {
    this.nodes.delete(node.key);
    this.unlink(node);
  }

  private unlink(node: Node<K, V>): void {
    if (node.older === undefined) this.oldest = node.newer;
    else node.older.newer = node.newer;
    if (node.newer === undefined) this.newest = node.older;
    else node.newer.older = node.older;
    node.older = node.newer = undefined;
  }

  private append(node: Node<K, V>): void {
    node.older = this.newest;
    if (this.newest === undefined) this.oldest = node;
    else this.newest.newer = node;
    this.newest = node;
  }
}
