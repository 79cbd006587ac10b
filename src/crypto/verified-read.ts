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
 * it was put back. (The vault's own read sends the two side by side, to spare a round trip.)
 */
import { markerOf } from '../store/fence.js';
import { parseVersionKey, versionsPrefixOf } from '../store/layout.js';
import type { ObjectStore, StoredObject } from '../store/port.js';
import type { UserCodec } from './user-codec.js';
import { checkCurrentFresh, checkVersionPlace, openVersionRecord, VERSION_METADATA, type VersionRecord } from './version-record-format.js';

/** The newest number the history keeps of the file at `fileKey` (one LIST of one key: version keys sort newest first), or null for none. */
export async function newestKeptSeq(store: ObjectStore, uid: string, fileKey: string): Promise<number | null> {
  const newest = (await store.list(versionsPrefixOf(uid, fileKey), { maxKeys: 1 })).objects[0];
  return newest ? (parseVersionKey(uid, newest.key)?.seq ?? null) : null;
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
export async function readKeptVersion(store: ObjectStore, codec: UserCodec, path: string, versionKey: string, seq: number): Promise<VerifiedVersion | null> {
  const stored = await store.get(versionKey);
  if (!stored) return null;
  // A tombstone has no body: its record names the key version it was sealed under.
  await keyFor(codec, stored.body.byteLength > 0 ? stored.body : Buffer.from(stored.metadata[VERSION_METADATA] ?? '', 'base64url'));
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
export async function readCurrentFile(store: ObjectStore, codec: UserCodec, path: string, key: string, history = true): Promise<VerifiedFile | null> {
  const newest = history ? await newestKeptSeq(store, codec.uid, key) : null;
  const stored = await store.get(key);
  if (!stored || markerOf(stored.metadata)) return null;
  await keyFor(codec, stored.body);
  const data = codec.open(path, stored.body);
  const seq = openVersionRecord(codec, path, stored.metadata, stored.body)?.seq;
  checkCurrentFresh(path, seq, newest);
  return { data, stored, seq };
}
