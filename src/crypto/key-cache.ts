/**
 * Cache of unwrapped user keys, bounded by count (least recently used leaves first) and by age (a
 * key is re-read and re-unwrapped after `maxAgeMs`, so a forgotten user's key leaves every process
 * within that time). Evicted keys are wiped with sodium.memzero after `wipeGraceMs`: a codec handed
 * out just before the eviction may still be finishing its command; after the grace it refuses to
 * work (KEY_UNAVAILABLE, retry) rather than use zeroed keys.
 */
import { keyCacheLookup } from '../telemetry/signals.js';
import { LruMap } from '../util/lru.js';
import { wipeKeyring, type UserKeyring } from './format.js';

export interface KeyCacheOptions {
  /** Most users whose keys are held at once. Default 1,000. */
  maxEntries?: number;
  /** Longest time a key is held after it was unwrapped. Default 10 minutes. */
  maxAgeMs?: number;
  /** Delay between eviction and wiping. Default 5 seconds; 0 wipes at once. */
  wipeGraceMs?: number;
  /** Clock (tests). */
  now?: () => number;
}

export interface CachedKeys {
  readonly keys: UserKeyring;
  readonly loadedAt: number;
  wiped: boolean;
}

export class KeyCache {
  /** Bounded by maxEntries with the one LRU rule (util/lru.ts); an entry pushed out is retired (wiped after the grace). */
  private readonly entries: LruMap<string, CachedKeys>;
  private readonly pendingWipes = new Map<CachedKeys, NodeJS.Timeout>();
  private readonly maxEntries: number;
  private readonly maxAgeMs: number;
  private readonly wipeGraceMs: number;
  private readonly now: () => number;

  constructor(options: KeyCacheOptions = {}) {
    this.maxEntries = Math.max(1, options.maxEntries ?? 1000);
    this.maxAgeMs = options.maxAgeMs ?? 10 * 60_000;
    this.wipeGraceMs = options.wipeGraceMs ?? 5_000;
    this.now = options.now ?? Date.now;
    this.entries = new LruMap(this.maxEntries, (_uid, entry) => this.retire(entry));
  }

  get size(): number {
    return this.entries.size;
  }

  get(uid: string): CachedKeys | undefined {
    const entry = this.entries.peek(uid);
    keyCacheLookup(entry !== undefined && this.now() - entry.loadedAt < this.maxAgeMs);
    if (!entry) return undefined;
    if (this.now() - entry.loadedAt >= this.maxAgeMs) {
      this.evict(uid);
      return undefined;
    }
    this.entries.get(uid); // a hit makes the user the most recently used
    return entry;
  }

  /**
   * Caches `keys`, read from the store at `readAt` (default now). The age counts from the read, not
   * from the end of the load: a re-key waits out the cache's age after its new record, and a load
   * that read the record before it and took long to unwrap (a slow KMS) must not outlive that wait.
   */
  set(uid: string, keys: UserKeyring, readAt = this.now()): CachedKeys {
    this.evict(uid);
    const entry: CachedKeys = { keys, loadedAt: readAt, wiped: false };
    this.entries.set(uid, entry);
    return entry;
  }

  evict(uid: string): void {
    const entry = this.entries.peek(uid);
    if (!entry) return;
    this.entries.delete(uid);
    this.retire(entry);
  }

  /**
   * Keys that must not be cached (their load was overtaken by an eviction: an erasure or a re-key
   * may have made them stale): handed to the commands that waited for them, and wiped after the
   * grace like an evicted entry.
   */
  detached(keys: UserKeyring): CachedKeys {
    const entry: CachedKeys = { keys, loadedAt: this.now(), wiped: false };
    this.retire(entry);
    return entry;
  }

  /** An entry that left the cache: wiped once the grace is over (at once without one). */
  private retire(entry: CachedKeys): void {
    if (this.wipeGraceMs <= 0) {
      wipe(entry);
      return;
    }
    const timer = setTimeout(() => {
      this.pendingWipes.delete(entry);
      wipe(entry);
    }, this.wipeGraceMs);
    // A pending wipe must not keep the process alive; close() wipes anyway.
    timer.unref();
    this.pendingWipes.set(entry, timer);
  }

  /** Wipe everything now, including keys waiting out their grace. */
  clear(): void {
    for (const [entry, timer] of this.pendingWipes) {
      clearTimeout(timer);
      wipe(entry);
    }
    this.pendingWipes.clear();
    for (const entry of this.entries.values()) wipe(entry);
    this.entries.clear();
  }
}

function wipe(entry: CachedKeys): void {
  if (entry.wiped) return;
  entry.wiped = true;
  wipeKeyring(entry.keys);
}
