/**
 * History retention in the sweeper (docs/versions.md). The sweep streams `u/` in key order, and a
 * user's versions (`u/{uid}/v/`) sort after their files (`u/{uid}/f/`, 'f' < 'v'): by the time the
 * sweep meets a user's versions it has seen every file key of that user and knows which ones this
 * sweep expired. A file's versions are one run of the listing, newest first (src/store/layout.ts).
 *
 * A version goes when
 * - its file was expired by this sweep (expiry of an idle file takes its history with it) and the
 *   version is of that file's generation: no younger than the expired object by more than the
 *   time one write takes (VERSION_LAG_MS). A version written later is of a file made again under the
 *   same name after the sweep deleted it (its versions sort after the files): it stays. Or its
 *   file is gone without a tombstone (expired by an earlier, interrupted sweep or by the S3
 *   lifecycle rule) and the version is older than the sweep's grace period (a file being created
 *   right now may have its version listed and its file not yet), or
 * - it is beyond the newest `maxVersions` of its file, or
 * - it is older than `retentionDays`, unless it is the newest version of a file that still exists:
 *   that one is the current version's record, which the freshness check needs.
 * Version objects are written once (create-only), so they are deleted without a condition.
 * Memory: one user's file keys at a time (bounded by what the user may store).
 */
import { parseVersionKey } from '../store/layout.js';

export interface HistoryRetention {
  retentionDays: number;
  maxVersions: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/**
 * How much younger than its file a version of the same write may be and still go with it: the
 * version is published once the file's write landed (docs/versions.md), one request later. A name
 * made again after the sweep deleted its file was idle a whole TTL before: its versions are days
 * younger. A version published later than this is kept, which is the safe side: if its name stays
 * gone, a later sweep drops it as an orphan.
 */
export const VERSION_LAG_MS = 10_000;

export class HistoryPruner {
  private uid: string | undefined;
  private readonly files = new Set<string>();
  /** Keys of the files this sweep deleted, with the LastModified of the object it deleted. */
  private readonly expired = new Map<string, number>();
  private group: { fileKey: string; index: number; orphan: boolean } | undefined;
  /** A resumed sweep starts inside a user whose file keys lie behind it: nothing is judged by their absence. */
  private filesUnknown = false;
  /**
   * The newest LastModified the listing has shown: the store's own "now", as far as this sweep knows.
   * An orphan's age is measured against it as well as against asOf, so that a sweep whose clock runs
   * ahead (a dry run for next week, a test) never takes a version written during its listing (its
   * file written after the listing passed it) for an old orphan.
   */
  private newestSeen = -Infinity;

  constructor(
    private readonly retention: HistoryRetention | undefined,
    private readonly asOf: Date,
    private readonly graceMs: number,
  ) {}

  private enter(uid: string): void {
    if (this.uid === uid) return;
    this.uid = uid;
    this.files.clear();
    this.expired.clear();
    this.group = undefined;
    this.filesUnknown = false;
  }

  /** The sweep resumes inside this user's keys. */
  resumeInside(uid: string): void {
    this.enter(uid);
    this.filesUnknown = true;
  }

  /** A key under the user's f/ (a file, or a fence marker: either way the name may be current). */
  noteFile(uid: string, key: string): void {
    this.enter(uid);
    this.files.add(key);
  }

  /**
   * This sweep deleted the file at `key`, an object last modified at `lastModified`. Deletions are
   * settled in batches, so one may be of a user the listing has passed: that user's versions (which
   * sort before the next user's keys) are behind the sweep, and the user whose keys it is in now
   * keeps what it knows of their files.
   */
  noteExpired(uid: string, key: string, lastModified: Date): void {
    if (uid !== this.uid) return;
    this.expired.set(key, lastModified.getTime());
  }

  /** Every listed object's LastModified, in listing order. */
  noteTime(lastModified: Date): void {
    this.newestSeen = Math.max(this.newestSeen, lastModified.getTime());
  }

  /** Whether a key is a version key (it then goes to `shouldDrop`). */
  isVersion(uid: string, key: string): boolean {
    return parseVersionKey(uid, key) !== null;
  }

  /** Whether the version at `key` goes; call for every version key, in listing order. */
  shouldDrop(uid: string, key: string, lastModified: Date, size: number): boolean {
    this.enter(uid);
    const parsed = parseVersionKey(uid, key);
    if (!parsed) return false;
    const same = this.group?.fileKey === parsed.fileKey;
    const index = same ? this.group!.index + 1 : 0;
    // The newest version decides whether the file's end was recorded: a tombstone is empty.
    const exists = this.filesUnknown || this.files.has(parsed.fileKey);
    const storeNow = Math.min(this.asOf.getTime(), this.newestSeen);
    const orphan = same ? this.group!.orphan : !exists && size > 0 && storeNow - lastModified.getTime() > this.graceMs;
    this.group = { fileKey: parsed.fileKey, index, orphan };
    const expiredAt = this.expired.get(parsed.fileKey);
    if ((expiredAt !== undefined && lastModified.getTime() <= expiredAt + VERSION_LAG_MS) || orphan) return true;
    if (!this.retention) return false;
    if (index >= this.retention.maxVersions) return true;
    const old = this.asOf.getTime() - lastModified.getTime() > this.retention.retentionDays * DAY_MS;
    return old && !(index === 0 && exists);
  }
}
