import { ReadWriteLock } from '../util/rw-lock.js';
import { LruMap } from '../util/lru.js';
import { usageOf } from '../vault/tree-files.js';
import type { CommandContext } from './context.js';
import type { ResolvedQuota } from './quota-options.js';

/**
 * The usage cache: per user, the bytes and files this process knows of, and when to list them
 * again. Kept exact in-process between listings (quota-run.ts accounts each change).
 */
export interface UserUsage {
  /** Bytes and files as last listed, plus this process's own admitted changes since. */
  bytes: number;
  files: number;
  /** Reserved by writes in flight. */
  pendingBytes: number;
  pendingFiles: number;
  /** What the user's kept versions count (history-usage.ts's versionCost; null: history off), and what writes in flight will add. */
  historyBytes: number | null;
  /** Versions the history holds: as last listed, plus this process's own since (HISTORY_VERSIONS_PER_LISTING reads it too). */
  historyVersions: number;
  pendingHistoryBytes: number;
  pendingHistoryVersions: number;
  /** Listings of the files since the history was last listed (HISTORY_LISTED_EVERY). */
  listingsSinceHistory: number;
  refreshedAt: number;
  writesSinceRefresh: number;
  /** Set when a change of unknown size happened: list again before the next check. */
  stale: boolean;
  loaded: boolean;
  /** Per-user shared/exclusive gate: commands hold it shared, a usage refresh exclusively (FIFO). */
  readonly gate: ReadWriteLock;
}

/**
 * The history (up to maxVersions per file: many times the files) is listed with every
 * HISTORY_LISTED_EVERY-th listing of the files, or more rarely for a large history: at most one
 * listing per HISTORY_VERSIONS_PER_LISTING versions it held, so that a write's share of the history
 * listings stays bounded (about ten versions and a hundredth of a LIST page a write at the default
 * refresh of 20 writes) however many versions a user keeps. With every listing of the files once
 * the count this process holds is past HISTORY_LISTED_NEAR of the allowance (docs/versions.md, "Quotas").
 */
export const HISTORY_LISTED_EVERY = 10;
export const HISTORY_VERSIONS_PER_LISTING = 200;
export const HISTORY_LISTED_NEAR = 0.5;

/** A snapshot of one user's usage as this process sees it (tests and metrics). */
export interface UsageSnapshot {
  bytes: number;
  files: number;
  pendingBytes: number;
  pendingFiles: number;
}

/**
 * Users' usage by uid, bounded by `maxCachedUsers` with the one LRU rule (util/lru.ts); a user in
 * use (a command holds or waits for the gate, or a write is in flight) is never forgotten, since
 * their reservations live in the entry.
 */
export class UsageCache {
  private readonly users: LruMap<string, UserUsage>;

  constructor(
    private readonly limits: ResolvedQuota,
    private readonly now: () => number,
  ) {
    this.users = new LruMap(
      limits.maxCachedUsers,
      undefined,
      (u) => !u.gate.idle || u.pendingBytes !== 0 || u.pendingFiles !== 0,
    );
  }

  has(uid: string): boolean {
    return this.users.has(uid);
  }

  /** The user's entry (made the most recently used), created empty and not yet loaded. */
  of(uid: string): UserUsage {
    const known = this.users.get(uid);
    if (known) return known;
    const state: UserUsage = {
      bytes: 0,
      files: 0,
      pendingBytes: 0,
      pendingFiles: 0,
      historyBytes: null,
      historyVersions: 0,
      pendingHistoryBytes: 0,
      pendingHistoryVersions: 0,
      listingsSinceHistory: 0,
      refreshedAt: 0,
      writesSinceRefresh: 0,
      stale: false,
      loaded: false,
      gate: new ReadWriteLock(),
    };
    this.users.set(uid, state);
    return state;
  }

  snapshot(uid: string): UsageSnapshot | undefined {
    const u = this.users.peek(uid);
    return u?.loaded
      ? { bytes: u.bytes, files: u.files, pendingBytes: u.pendingBytes, pendingFiles: u.pendingFiles }
      : undefined;
  }

  /**
   * Refresh: lists the user's files (inside the command, so the requests are counted) when their
   * usage is due: never loaded, stale, or past `refreshEveryWrites` writes or `refreshAfterMs`. The
   * listing holds the user's gate exclusively, so no write is admitted against half-counted usage.
   */
  async refresh(ctx: CommandContext, u: UserUsage): Promise<void> {
    if (!this.due(u)) return;
    const release = await u.gate.acquire(true);
    try {
      if (!this.due(u)) return; // someone else refreshed while we waited
      // Summed by the store where it can (one statement on SQLite), else every file listed.
      const { bytes, files } = await usageOf(ctx.files);
      // The history is counted apart (its own allowance): null when the files keep none. It holds up
      // to maxVersions per file, so it is listed with every tenth listing of the files only (rarer
      // still when large), and with each once it is past half its allowance (where another
      // process's versions could matter).
      if (this.historyDue(u)) {
        const history = await ctx.files.historyUsage?.();
        Object.assign(u, {
          historyBytes: history?.bytes ?? null,
          historyVersions: history?.versions ?? 0,
          listingsSinceHistory: 0,
        });
      } else {
        u.listingsSinceHistory += 1;
      }
      Object.assign(u, { bytes, files, refreshedAt: this.now(), writesSinceRefresh: 0, stale: false, loaded: true });
    } finally {
      release();
    }
  }

  /** Stale usage is the files' (a delete of a file never sized): it says nothing new of the history. */
  private historyDue(u: UserUsage): boolean {
    const every = Math.max(HISTORY_LISTED_EVERY, Math.ceil(u.historyVersions / HISTORY_VERSIONS_PER_LISTING));
    const near =
      (u.historyBytes ?? 0) >= this.limits.maxHistoryBytes * HISTORY_LISTED_NEAR ||
      u.historyVersions >= this.limits.maxHistoryVersions * HISTORY_LISTED_NEAR;
    return !u.loaded || u.listingsSinceHistory + 1 >= every || near;
  }

  private due(u: UserUsage): boolean {
    const l = this.limits;
    return (
      !u.loaded ||
      u.stale ||
      u.writesSinceRefresh >= l.refreshEveryWrites ||
      this.now() - u.refreshedAt >= l.refreshAfterMs
    );
  }
}
