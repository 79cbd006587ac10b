/**
 * Cache of unwrapped user keys, bounded by count (least recently used leaves first) and by age (a
 * key is re-read and re-unwrapped after `maxAgeMs`, so a forgotten user's key leaves every process
 * within that time). Evicted keys are wiped with sodium.memzero after `wipeGraceMs`: a codec handed
 * out just before the eviction may still be finishing its command; after the grace it refuses to
 * work (KEY_UNAVAILABLE, retry) rather than use zeroed keys.
 */
import { keyCacheLookup } from '../telemetry/signals.js';
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
  private readonly entries = new Map<string, CachedKeys>();
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
  }

  get size(): number {
    return this.entries.size;
  }

  get(uid: string): CachedKeys | undefined {
    const entry = this.entries.get(uid);
    keyCacheLookup(entry !== undefined && this.now() - entry.loadedAt < this.maxAgeMs);
    if (!entry) return undefined;
    if (this.now() - entry.loadedAt >= this.maxAgeMs) {
      this.evict(uid);
      return undefined;
    }
    // Re-insert: Map order is the LRU order.
    this.entries.delete(uid);
    this.entries.set(uid, entry);
    return entry;
  }

  set(uid: string, keys: UserKeyring): CachedKeys {
    this.evict(uid);
    const entry: CachedKeys = { keys, loadedAt: this.now(), wiped: false };
    this.entries.set(uid, entry);
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.evict(oldest);
    }
    return entry;
  }

  evict(uid: string): void {
    const entry = this.entries.get(uid);
    if (!entry) return;
    this.entries.delete(uid);
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
