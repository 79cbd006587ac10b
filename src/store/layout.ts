/**
 * The storage layout and its limits: the one place each prefix, key and bound is spelled. Below
 * every layer that names objects (vault, crypto, expiry, audit, the CLI), so each imports it; the CDK
 * construct (infra/lib/memvault-storage.ts) cannot import src/ and keeps a copy that
 * test/infra/layout.test.ts holds equal to this one. docs/format.md describes the layout.
 *
 *   k/_deployment        the deployment record
 *   k/{uid}              one user's wrapped data key
 *   u/{uid}/a/{state}    the user's key state marks (src/crypto/key-state.ts): each state a re-key
 *                        took the key record to, create-only; first under u/{uid}/ in key order
 *   u/{uid}/c/{class}    the user's TTL class marker (expiry)
 *   u/{uid}/f/{names}    the user's files
 *   u/{uid}/v/{names}/@{rev}  the versions of one file (docs/versions.md): {names} as in f/, {rev}
 *                        the version's sequence number counted down, so the newest lists first
 *   u/{uid}/i/{hash}     the HTTP service's idempotency records (src/serve/idempotency.ts): {hash} a
 *                        keyed hash of the Idempotency-Key, the record sealed under the user's key; 24 h
 *   u/{uid}/p/settings   the user's settings: pause memory (src/pipeline/pause.ts)
 *   u/{uid}/p/{hash}     the memory page's ended-sessions record (src/serve/page/session-ends.ts)
 *   u/{uid}/r/{kind}/{hash}  a host's other vault.userRecords records (src/entry/host-records.ts)
 *   s/sweep-state.json   the sweeper's checkpoint
 *   audit/{instance}/... sealed audit segments
 */
export const KEYS_PREFIX = 'k/';
/** Prefix of every user's objects. */
export const USERS_PREFIX = 'u/';
export const DEPLOYMENT_RECORD_KEY = `${KEYS_PREFIX}_deployment`;
/** Prefix of the sweeper's own objects. */
export const SWEEP_STATE_PREFIX = 's/';
export const SWEEP_STATE_KEY = `${SWEEP_STATE_PREFIX}sweep-state.json`;
/** Key prefix of sealed audit segments (inside the audit store's own prefix). */
export const AUDIT_KEY_PREFIX = 'audit/';

/** Prefix of everything stored for one user (files and anything the vault keeps beside them). */
export function userPrefix(uid: string): string {
  return `${USERS_PREFIX}${uid}/`;
}

/** Prefix of one user's files. */
export function userFilesPrefix(uid: string): string {
  return `${userPrefix(uid)}f/`;
}

/** Prefix of one user's key state marks (docs/encryption.md, "Key records never move backwards"). */
export function userKeyStatePrefix(uid: string): string {
  return `${userPrefix(uid)}a/`;
}

/**
 * Where the host records of a user live (vault.userRecords, src/entry/host-records.ts): the HTTP
 * service's idempotency records under i/, the page's ended-sessions record under p/ (beside the
 * settings, which are no such record), any other kind under r/{kind}/. A record's name is 64 hex
 * digits (a keyed hash). A re-key re-seals every record it finds here (src/crypto/rekey-reseal.ts).
 */
const RECORD_FOLDERS: ReadonlyMap<string, string> = new Map([
  ['idempotency', 'i/'],
  ['page-sessions', 'p/'],
]);
const OTHER_RECORDS_FOLDER = 'r/';
/** A kind of host record: [a-z-]{1,32}, starting with a letter. */
export const USER_RECORD_KIND = /^[a-z][a-z-]{0,31}$/;
/** A host record's name: the keyed hash of the name the host gave it. */
export const USER_RECORD_NAME = /^[0-9a-f]{64}$/;

/** The prefix of one user's host records of `kind` (checked by the caller). */
export function userRecordPrefix(uid: string, kind: string): string {
  return `${userPrefix(uid)}${RECORD_FOLDERS.get(kind) ?? `${OTHER_RECORDS_FOLDER}${kind}/`}`;
}

/** The key of one user's host record of `kind` named `name` (both checked by the caller). */
export function userRecordKey(uid: string, kind: string, name: string): string {
  return userRecordPrefix(uid, kind) + name;
}

/** The prefixes a user's host records live under. */
export function userRecordPrefixes(uid: string): string[] {
  return [...RECORD_FOLDERS.values(), OTHER_RECORDS_FOLDER].map((folder) => userPrefix(uid) + folder);
}

/** A listed key as a host record's kind and name, or null for any other key (the settings under p/). */
export function parseUserRecordKey(uid: string, key: string): { kind: string; name: string } | null {
  const prefix = userPrefix(uid);
  if (!key.startsWith(prefix)) return null;
  const rest = key.slice(prefix.length);
  const name = rest.slice(rest.lastIndexOf('/') + 1);
  const folder = rest.slice(0, rest.length - name.length);
  const kind = folder.startsWith(OTHER_RECORDS_FOLDER)
    ? folder.slice(OTHER_RECORDS_FOLDER.length, -1)
    : [...RECORD_FOLDERS].find(([, known]) => known === folder)?.[0];
  if (kind === undefined || !USER_RECORD_KIND.test(kind) || !USER_RECORD_NAME.test(name)) return null;
  // Another spelling of a known kind's place (r/idempotency/...) is not where that kind lives.
  return userRecordKey(uid, kind, name) === key ? { kind, name } : null;
}

/** Prefix of one user's file versions (docs/versions.md). */
export function userHistoryPrefix(uid: string): string {
  return `${userPrefix(uid)}v/`;
}

/**
 * Marks the last segment of a version key. The encrypted names are base64url and the plain codec's
 * are encodeURIComponent's output: neither ever holds '@', so a file's versions (`.../{name}/@`)
 * never share a prefix with the files below a directory of the same name (`.../{name}/{child}/...`).
 */
export const VERSION_MARK = '@';
/** Object tag of every kept version (the CDK construct's lifecycle rule filters on it). */
export const HISTORY_TAG_KEY = 'memvault-history';
export const HISTORY_TAG_VALUE = 'version';
/** Digits of a version key's counted-down sequence number (Number.MAX_SAFE_INTEGER has 16). */
export const VERSION_DIGITS = 16;
/** Bytes a version key adds to its file key: '/', the mark, the digits, and f/ -> v/ keeps the length. */
export const VERSION_KEY_EXTRA_BYTES = 2 + VERSION_DIGITS;

/** The prefix of every version of the file stored at `fileKey` (a key under `userFilesPrefix(uid)`). */
export function versionsPrefixOf(uid: string, fileKey: string): string {
  const files = userFilesPrefix(uid);
  if (!fileKey.startsWith(files)) throw new Error('not a file key of this user');
  return `${userHistoryPrefix(uid)}${fileKey.slice(files.length)}/${VERSION_MARK}`;
}

/** The key of version `seq` of the file stored at `fileKey`; newer versions sort first. */
export function versionKeyOf(uid: string, fileKey: string, seq: number): string {
  if (!Number.isSafeInteger(seq) || seq < 1) throw new Error('bad version sequence number');
  return versionsPrefixOf(uid, fileKey) + String(Number.MAX_SAFE_INTEGER - seq).padStart(VERSION_DIGITS, '0');
}

/**
 * A version key split into the file key it belongs to and its sequence number, or null for any
 * other key (a stray object under v/ is ignored, as listings ignore one under f/).
 */
export function parseVersionKey(uid: string, key: string): { fileKey: string; seq: number } | null {
  const history = userHistoryPrefix(uid);
  if (!key.startsWith(history)) return null;
  const at = key.lastIndexOf(`/${VERSION_MARK}`);
  const digits = key.slice(at + 2);
  if (at <= history.length || digits.length !== VERSION_DIGITS || !/^[0-9]+$/.test(digits)) return null;
  const seq = Number.MAX_SAFE_INTEGER - Number(digits);
  if (!Number.isSafeInteger(seq) || seq < 1) return null;
  return { fileKey: userFilesPrefix(uid) + key.slice(history.length, at), seq };
}

/** The longest object key S3 accepts, in UTF-8 bytes (the file store keeps to it too). */
export const MAX_STORE_KEY_BYTES = 1024;
/** Keys per batch delete: S3's DeleteObjects limit, and the page size of a listing. */
export const DELETE_BATCH_KEYS = 1000;
/** The longest user id the host may pass, in UTF-16 code units. */
export const MAX_USER_ID_LENGTH = 256;
