/**
 * A user's key state never moves backwards (docs/encryption.md, "Key records never move backwards").
 *
 * The key state of a record is (keyVersion, readFrom): a re-key raises the first, the drop of the
 * older versions the second. Each state a record reaches is witnessed by a create-only, empty
 * object, a key state mark, `u/{uid}/a/{keyVersion counted down}-{readFrom counted down}-{mac}`,
 * the way a file's kept versions prove its current version cannot go back (docs/versions.md):
 * putting an old record back cannot take a mark away. A record of a key version below the newest
 * mark's is refused; the versions a marked drop retired are never used again, whatever the record
 * lists. A new version is marked once its record is written; a drop before (so that a crash between
 * the two leaves nothing to refuse). The MAC (keyed from the deployment secret, like the record's
 * own) is in the key, and the counted-down numbers sort the newest first, so one LIST of one key of
 * the marks' own folder reads the newest mark (a listing of the whole user prefix would walk every
 * file on the file store). The marks go with the user's other objects on `forget`.
 */
import { PreconditionFailedError, listAll, type ObjectInfo, type ObjectStore } from '../store/port.js';
import {
  constantTimeEqual,
  concatBytes,
  fromBase64UrlStrict,
  lengthPrefixed,
  toBase64Url,
  u32be,
  utf8,
} from './bytes.js';
import { keyedHash } from './format.js';
import { decodeKeyRecord, type KeyRecord } from './key-provider.js';
import { userKeyKey } from './layout.js';
import { userKeyStatePrefix } from '../store/layout.js';

const MARK_MAC_BYTES = 16;
/**
 * Key versions are u32: counted down from this, every one is 10 digits (9999999999 - 0xffffffff is
 * 5705032704), so newer states sort first.
 */
const COUNT_DOWN_FROM = 9_999_999_999;
const MARK_NAME = /^(\d{10})-(\d{10})-([A-Za-z0-9_-]{22})$/;

export interface KeyState {
  /** The version new content is sealed under. */
  keyVersion: number;
  /** The oldest version content may carry (the key version itself for a single-version record). */
  readFrom: number;
}

/** What a mark's MAC is keyed by and bound to (the deployment's record MAC key and id). */
export interface KeyStateBinding {
  deploymentId: string;
  macKey: Uint8Array;
}

export function keyStateOf(record: Pick<KeyRecord, 'keyVersion' | 'readFrom'>): KeyState {
  return { keyVersion: record.keyVersion, readFrom: record.readFrom ?? record.keyVersion };
}

/** True when `state` comes before `than`: a lower key version, or the same one with older versions still readable. */
export function isOlderKeyState(state: KeyState, than: KeyState): boolean {
  return state.keyVersion < than.keyVersion || (state.keyVersion === than.keyVersion && state.readFrom < than.readFrom);
}

/**
 * The record as it may be used under the newest mark: without the versions the mark says were
 * dropped (below its readFrom; version 1, the name root, always stays). A drop is marked before its
 * record is written, so a record that still lists them is either that write not landed yet (a
 * crash) or the pre-drop record put back: in both cases no object needs them any more.
 */
export function withoutDroppedVersions(record: KeyRecord, mark: KeyState | null): KeyRecord {
  if (mark === null || record.older === undefined || keyStateOf(record).readFrom >= mark.readFrom) return record;
  return {
    ...record,
    readFrom: mark.readFrom,
    older: record.older.filter((o) => o.keyVersion === 1 || o.keyVersion >= mark.readFrom),
  };
}

/** Where a user's marks live (src/store/layout.ts). */
export function keyStateMarkPrefix(uid: string): string {
  return userKeyStatePrefix(uid);
}

function markMac(binding: KeyStateBinding, uid: string, state: KeyState): Uint8Array {
  const message = concatBytes(
    lengthPrefixed(utf8('memvault/v2/key-state')), // the label: no other MAC under this key hashes this message
    lengthPrefixed(utf8(binding.deploymentId)),
    lengthPrefixed(utf8(uid)),
    u32be(state.keyVersion),
    u32be(state.readFrom),
  );
  return keyedHash(binding.macKey, message, MARK_MAC_BYTES);
}

const countDown = (n: number): string => String(COUNT_DOWN_FROM - n);

export function keyStateMarkKey(uid: string, state: KeyState, binding: KeyStateBinding): string {
  return `${keyStateMarkPrefix(uid)}${countDown(state.keyVersion)}-${countDown(state.readFrom)}-${toBase64Url(markMac(binding, uid, state))}`;
}

/** The state a mark witnesses, or null when the key is no mark this deployment made for this user. */
export function parseKeyStateMark(uid: string, key: string, binding: KeyStateBinding): KeyState | null {
  const prefix = keyStateMarkPrefix(uid);
  if (!key.startsWith(prefix)) return null;
  const match = MARK_NAME.exec(key.slice(prefix.length));
  if (!match) return null;
  const state = { keyVersion: COUNT_DOWN_FROM - Number(match[1]), readFrom: COUNT_DOWN_FROM - Number(match[2]) };
  if (state.keyVersion > 0xffffffff || state.readFrom < 1 || state.readFrom > state.keyVersion) return null;
  const mac = fromBase64UrlStrict(match[3]!);
  return mac !== null && constantTimeEqual(mac, markMac(binding, uid, state)) ? state : null;
}

/**
 * The newest genuine mark, given the first key listed in the marks' folder (one LIST of one key).
 * Only when that first key does not verify (planted) is the folder listed in full, for the newest
 * mark that does: a planted key neither hides a genuine mark nor denies the user.
 */
export async function newestKeyStateMark(
  store: ObjectStore,
  uid: string,
  binding: KeyStateBinding,
  first: ObjectInfo | undefined,
): Promise<KeyState | null> {
  if (first === undefined) return null;
  const state = parseKeyStateMark(uid, first.key, binding);
  if (state) return state;
  for await (const object of listAll(store, keyStateMarkPrefix(uid))) {
    const found = parseKeyStateMark(uid, object.key, binding);
    if (found) return found;
  }
  return null;
}

/**
 * Witness that the user's record reached `state`: a create-only PUT of an empty object (one that is
 * there already is the same mark, written by another instance). A single-version record at
 * version 1 needs none: there is no older state to put back.
 */
export async function markKeyState(
  store: ObjectStore,
  uid: string,
  state: KeyState,
  binding: KeyStateBinding,
): Promise<void> {
  await putMark(store, uid, state, binding);
}

/** markKeyState; true when this call created the mark. */
async function putMark(store: ObjectStore, uid: string, state: KeyState, binding: KeyStateBinding): Promise<boolean> {
  if (state.keyVersion <= 1) return false;
  try {
    await store.put(keyStateMarkKey(uid, state, binding), new Uint8Array(0), { ifNoneMatch: '*' });
    return true;
  } catch (e) {
    if (!(e instanceof PreconditionFailedError)) throw e;
    return false;
  }
}

/**
 * markKeyState for the state of the record read with ETag `etag`, which an erasure may delete
 * meanwhile: a mark landing after the erasure listed the user's objects would outlive it, a genuine
 * witness of the erased key, and the user id could never start afresh. So a mark this call created
 * is checked against the record (mark, then HEAD: an erasure that deletes the record after the HEAD
 * lists the mark); the record gone, or rewritten at an older state (a new key since), the mark is
 * taken away and false returned. One HEAD more, only when a mark is written.
 */
export async function markKeyStateWhileCurrent(
  store: ObjectStore,
  uid: string,
  state: KeyState,
  binding: KeyStateBinding,
  etag: string,
): Promise<boolean> {
  if (!(await putMark(store, uid, state, binding))) return true;
  const head = await store.head(userKeyKey(uid));
  if (head?.etag === etag) return true;
  const stored = head ? await store.get(userKeyKey(uid)) : null;
  if (stored) {
    let current: KeyState;
    try {
      current = keyStateOf(decodeKeyRecord(stored.body));
    } catch {
      return true; // not a record to judge by: the mark stays, a load refuses the record itself
    }
    if (!isOlderKeyState(current, state)) return true;
  }
  await store.delete(keyStateMarkKey(uid, state, binding));
  return false;
}
