/**
 * What a user's history holds, and pruning it to an allowance (docs/versions.md, "Quotas"). The
 * quota middleware counts versions apart from the current files: the history may hold up to its
 * own byte allowance (plaintext bytes of every kept version, the current versions included, since
 * write-through keeps each once). When a write would pass it, the oldest versions are dropped first
 * until the history is back under a low-water mark; the newest version of every file is never
 * dropped (it is what a read checks its freshness against, and what a deleted file's undo needs).
 *
 * One LIST per 1,000 versions (the listing carries each object's size and age; no GET).
 */
import type { UserCodec } from '../crypto/user-codec.js';
import { DELETE_BATCH_KEYS, parseVersionKey, userHistoryPrefix } from '../store/layout.js';
import { listAll, type ObjectStore } from '../store/port.js';

export interface HistoryUsage {
  /** Plaintext bytes of every kept version (tombstones count 0). */
  bytes: number;
  versions: number;
}

interface Candidate {
  key: string;
  bytes: number;
  time: number;
  seq: number;
}

/** Plaintext bytes of a kept version from its stored size (a tombstone is empty). */
function versionBytes(codec: UserCodec, storedSize: number): number {
  return storedSize === 0 ? 0 : Math.max(0, codec.plaintextSize(storedSize));
}

/**
 * Lists the user's history; when `pruneTo` is given and the history holds more, deletes its oldest
 * versions (never a file's newest) until it holds at most that, or nothing more may go. Returns
 * what is left. A delete that fails is counted as still there (the next listing sees the truth).
 */
export async function meterHistory(store: ObjectStore, codec: UserCodec, pruneTo?: number): Promise<HistoryUsage> {
  let bytes = 0;
  let versions = 0;
  const candidates: Candidate[] = [];
  let lastFile: string | undefined;
  for await (const object of listAll(store, userHistoryPrefix(codec.uid))) {
    const parsed = parseVersionKey(codec.uid, object.key);
    if (!parsed) continue; // a stray object is not a version (and not the user's to count)
    const size = versionBytes(codec, object.size);
    bytes += size;
    versions += 1;
    // A file's versions list newest first: all but the first of each run may be pruned.
    if (parsed.fileKey === lastFile && pruneTo !== undefined)
      candidates.push({ key: object.key, bytes: size, time: object.lastModified.getTime(), seq: parsed.seq });
    lastFile = parsed.fileKey;
  }
  if (pruneTo === undefined || bytes <= pruneTo) return { bytes, versions };
  // Oldest first by the store's clock; within one tick (S3 counts whole seconds) the lower number is the older.
  candidates.sort((a, b) => a.time - b.time || a.seq - b.seq);
  const doomed: Candidate[] = [];
  let left = bytes;
  for (const candidate of candidates) {
    if (left <= pruneTo) break;
    doomed.push(candidate);
    left -= candidate.bytes;
  }
  for (let i = 0; i < doomed.length; i += DELETE_BATCH_KEYS) {
    const batch = doomed.slice(i, i + DELETE_BATCH_KEYS);
    const { failed } = await store.deleteMany(batch.map((c) => c.key));
    const kept = new Set(failed);
    for (const c of batch) {
      if (kept.has(c.key)) continue;
      bytes -= c.bytes;
      versions -= 1;
    }
  }
  return { bytes, versions };
}
