/**
 * The one verified read of a user's stored data (docs/versions.md, "Freshness"): every reader that
 * serves or rewrites what the store holds (the vault's reads, history and restore, the user export,
 * re-keying) makes the same checks, so a swapped or put-back object that one of them refuses is
 * refused by all:
 *
 * - a kept version: its record opens for the file's path and matches its body, and its number is
 *   the key's (two versions swapped on disk each open and match; only the number tells);
 * - a current file: its record (when it has one) opens and matches, and it is not older than the
 *   newest version its history keeps (an older object put back in its place is never current).
 *
 * The history's newest number is listed BEFORE the file is read: a writer's version only ever
 * follows its file, so a file read after the listing is at least as new as anything listed unless
 * it was put back. (The vault's own read sends the two side by side, to spare a round trip, and
 * confirms a mismatch in this order: lookAgainWhileStale.) One write can still be seen half-way in
 * either order: a create that landed below a number kept meanwhile renumbers itself one round trip
 * later (docs/versions.md, "Sequence numbers"), which is why a mismatch is looked at again until the
 * same object has stayed older than its history for CONFIRM_WAIT_MS.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { markerOf } from '../store/fence.js';
import { parseVersionKey, versionsPrefixOf } from '../store/layout.js';
import type { ObjectStore, StoredObject } from '../store/port.js';
import type { UserCodec } from './user-codec.js';
import {
  checkCurrentFresh,
  checkVersionPlace,
  openVersionRecord,
  VERSION_METADATA,
  type VersionRecord,
} from './version-record-format.js';

/** The newest number the history keeps of the file at `fileKey` (one LIST of one key: version keys sort newest first), or null for none. */
export async function newestKeptSeq(store: ObjectStore, uid: string, fileKey: string): Promise<number | null> {
  const newest = (await store.list(versionsPrefixOf(uid, fileKey), { maxKeys: 1 })).objects[0];
  return newest ? (parseVersionKey(uid, newest.key)?.seq ?? null) : null;
}

/**
 * How long an object that reads as older than its history must stay the same object before it is
 * called a put-back, and the first pause between two looks at it (doubling). Spent only on a
 * mismatch: a write in flight settles within a few round trips; a put-back stays put.
 */
export const CONFIRM_WAIT_MS = 500;
const CONFIRM_FIRST_PAUSE_MS = 10;
/** Looks at most, however often the object changes (a bound, not a wait). */
const CONFIRM_MAX_LOOKS = 12;

/** What one look at a current file saw: its object's ETag and record number, and the history's newest number. */
export interface FreshnessLook {
  etag: string;
  seq: number | undefined;
  newest: number | null;
}

/** Whether a current version numbered `seq` is at least as new as the history's newest (the test checkCurrentFresh refuses). */
export function isFresh(seq: number | undefined, newest: number | null): boolean {
  return newest === null || (seq !== undefined && seq >= newest);
}

/**
 * A look at a current file (`first`) that saw it older than its history, looked at again in the
 * safe order (`look`: LIST, then GET) until it is settled: no file there (deleted, fenced), a file
 * as new as the history (another instance's write seen half-way), or the same stale object for
 * CONFIRM_WAIT_MS (a put-back: the caller refuses it; an object that changed starts the wait
 * afresh, up to CONFIRM_MAX_LOOKS looks). `view` tells what a look saw of a file, or null for no file. Returns the last look.
 */
export async function lookAgainWhileStale<T>(
  first: T,
  look: () => Promise<T>,
  view: (seen: T) => FreshnessLook | null,
): Promise<T> {
  let seen = first;
  let stale = view(seen);
  let staleSince: number | undefined;
  for (
    let pause = CONFIRM_FIRST_PAUSE_MS, looks = 0;
    stale !== null && !isFresh(stale.seq, stale.newest) && looks < CONFIRM_MAX_LOOKS;
    looks++
  ) {
    const waited = staleSince === undefined ? 0 : performance.now() - staleSince;
    if (waited >= CONFIRM_WAIT_MS) break;
    if (staleSince !== undefined) {
      await sleep(Math.min(pause, CONFIRM_WAIT_MS - waited));
      pause *= 2;
    }
    seen = await look();
    const now = view(seen);
    // The first confirming look, or an object that changed, starts the wait afresh.
    staleSince = staleSince !== undefined && now?.etag === stale.etag ? staleSince : performance.now();
    if (now?.etag !== stale.etag) pause = CONFIRM_FIRST_PAUSE_MS;
    stale = now;
  }
  return seen;
}

/** Load the key version stored bytes name, when the codec lacks it (another instance re-keyed the user). */
async function keyFor(codec: UserCodec, sealed: Uint8Array): Promise<void> {
  const reloading = codec.ensureKeyFor?.(sealed);
  if (reloading) await reloading;
}

export interface VerifiedVersion {
  record: VersionRecord;
  /** Its content (empty for a tombstone). */
  data: Uint8Array;
  stored: StoredObject;
}

/**
 * The kept version `seq` of the file at `path` (its object at `versionKey`), read and checked, or
 * null when it is gone (dropped or expired since it was listed). Throws INTEGRITY when it does not
 * open, does not match its body, or names another place in the history.
 */
export async function readKeptVersion(
  store: ObjectStore,
  codec: UserCodec,
  path: string,
  versionKey: string,
  seq: number,
): Promise<VerifiedVersion | null> {
  const stored = await store.get(versionKey);
  if (!stored) return null;
  // A tombstone has no body: its record names the key version it was sealed under.
  await keyFor(
    codec,
    stored.body.byteLength > 0 ? stored.body : Buffer.from(stored.metadata[VERSION_METADATA] ?? '', 'base64url'),
  );
  const record = checkVersionPlace(openVersionRecord(codec, path, stored.metadata, stored.body), seq);
  const data = record.end ? new Uint8Array(0) : codec.open(path, stored.body);
  return { record, data, stored };
}

export interface VerifiedFile {
  data: Uint8Array;
  stored: StoredObject;
  /** Its record's number (undefined: written before records were, with no history to compare). */
  seq: number | undefined;
}

/**
 * The current file at `path` (its object at `key`), read and checked, or null when no file is
 * there (nothing, or a fence marker: a file being moved or deleted). Throws INTEGRITY when it does
 * not open, its record does not match, or it is older than its history. `history`: false for a
 * path that keeps none (memvault's own bookkeeping), whose listing is then spared.
 */
export async function readCurrentFile(
  store: ObjectStore,
  codec: UserCodec,
  path: string,
  key: string,
  history = true,
): Promise<VerifiedFile | null> {
  const look = async (): Promise<{ file: VerifiedFile; newest: number | null } | null> => {
    const newest = history ? await newestKeptSeq(store, codec.uid, key) : null;
    const stored = await store.get(key);
    if (!stored || markerOf(stored.metadata)) return null;
    await keyFor(codec, stored.body);
    const data = codec.open(path, stored.body);
    const seq = openVersionRecord(codec, path, stored.metadata, stored.body)?.seq;
    return { file: { data, stored, seq }, newest };
  };
  const seen = await lookAgainWhileStale(await look(), look, (s) =>
    s ? { etag: s.file.stored.etag, seq: s.file.seq, newest: s.newest } : null,
  );
  if (!seen) return null;
  checkCurrentFresh(path, seen.file.seq, seen.newest);
  return seen.file;
}
