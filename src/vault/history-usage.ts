/**
 * What a user's history holds, and pruning it to an allowance (docs/versions.md, "Quotas"). The
 * quota middleware counts versions apart from the current files: the history may hold up to its
 * own allowance of bytes and of versions (every kept version, the current versions included, since
 * write-through keeps each once). A kept version counts its plaintext bytes and never less than
 * VERSION_FLOOR_BYTES, what storing an object costs beyond its content: an empty file's version
 * and a tombstone are objects too, and counted as nothing they let the history grow without bound.
 * When a write would pass the allowance, the oldest versions are dropped first until the history
 * is back under a low-water mark; the newest version of every file is never dropped (it is what a
 * read checks its freshness against, and what a deleted file's undo needs).
 *
 * One LIST per 1,000 versions (the listing carries each object's size and age; no GET), or one
 * statement where the store sums in place (ObjectStore.summarize) and nothing is to be pruned.
 */
import type { UserCodec } from '../crypto/user-codec.js';
import { DELETE_BATCH_KEYS, parseVersionKey, userHistoryPrefix } from '../store/layout.js';
import { listAll, type ObjectStore } from '../store/port.js';

export interface HistoryUsage {
  /** What every kept version counts (versionCost): its plaintext bytes, at least VERSION_FLOOR_BYTES each. */
  bytes: number;
  versions: number;
}

/** What pruning brings the history down to: at most these bytes (as counted) and versions. */
export interface HistoryTarget {
  bytes: number;
  versions: number;
}

/**
 * The least a kept version counts against the allowance, content or not: its key (up to 1,024
 * bytes, typically 150 to 300), the sealed version record in its metadata (about 200) and the
 * envelope (40) are stored for a tombstone or an empty file's version too.
 */
export const VERSION_FLOOR_BYTES = 512;

/** What a kept version of `plaintextBytes` counts against the history's allowance. */
export function versionCost(plaintextBytes: number): number {
  return Math.max(plaintextBytes, VERSION_FLOOR_BYTES);
}

interface Candidate {
  key: string;
  bytes: number;
  time: number;
  seq: number;
}

/** What a kept version counts, from its stored size (a tombstone is empty). */
function versionBytes(codec: UserCodec, storedSize: number): number {
  return versionCost(storedSize === 0 ? 0 : codec.plaintextSize(storedSize));
}

/**
 * Lists the user's history; when `pruneTo` is given and the history holds more bytes or versions,
 * deletes its oldest versions (never a file's newest) until it holds at most both, or nothing more
 * may go. Returns what is left. A delete that fails is counted as still there (the next listing
 * sees the truth).
 */
export async function meterHistory(
  store: ObjectStore,
  codec: UserCodec,
  pruneTo?: HistoryTarget,
): Promise<HistoryUsage> {
  // Only counted: a store that sums in place does it in one statement (versionBytes is the size less
  // the seal's overhead, never below the floor; a stray object under the history counts there too).
  if (pruneTo === undefined && store.summarize && codec.sealOverhead !== undefined) {
    const summary = await store.summarize(userHistoryPrefix(codec.uid), {
      overhead: codec.sealOverhead,
      floor: VERSION_FLOOR_BYTES,
    });
    return { bytes: summary.bytes, versions: summary.objects };
  }
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
  if (pruneTo === undefined || (bytes <= pruneTo.bytes && versions <= pruneTo.versions)) return { bytes, versions };
  // Oldest first by the store's clock; within one tick (S3 counts whole seconds) the lower number is the older.
  candidates.sort((a, b) => a.time - b.time || a.seq - b.seq);
  const doomed: Candidate[] = [];
  let left = bytes;
  for (const candidate of candidates) {
    if (left <= pruneTo.bytes && versions - doomed.length <= pruneTo.versions) break;
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
