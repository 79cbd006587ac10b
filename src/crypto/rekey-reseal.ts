/**
 * One re-key pass over a user's objects (src/crypto/rekey.ts): every file, kept version and host
 * record (vault.userRecords) still sealed under an older key version re-sealed in place under the
 * current one (If-Match on the ETag read), a version record re-sealed with its body; what does not
 * open or fails a check is left alone.
 */
import { markerOf } from '../store/fence.js';
import {
  HISTORY_TAG_KEY,
  HISTORY_TAG_VALUE,
  parseUserRecordKey,
  parseVersionKey,
  userHistoryPrefix,
  userRecordPrefixes,
} from '../store/layout.js';
import { listAll, PreconditionFailedError, type PutOptions, type StoredObject } from '../store/port.js';
import {
  contentKeyVersion,
  decryptSegment,
  deriveKeyring,
  NONCE_BYTES,
  openContent,
  sealContentWithNonce,
  wipeKeyring,
  type UserKeyring,
  type UserKeys,
} from './format.js';
import { randomNonce } from './bytes.js';
import { contentVersionsOf, type KeyRecord } from './key-provider.js';
import { userFilesPrefix } from './layout.js';
import { userRecordPath } from './record-path.js';
import { openRecordVersions } from './wrapped-secret.js';
import {
  bodyHashOf,
  checkCurrentFresh,
  checkVersionPlace,
  parseVersionRecord,
  VERSION_METADATA,
  versionRecordPath,
  type VersionRecord,
} from './version-record-format.js';
import { newestKeptSeq } from './verified-read.js';
import type { Context, PassCounts, RekeyAccess } from './rekey-types.js';

const MEMORIES_ROOT = '/memories';

export async function resealPass(
  ctx: Context,
  uid: string,
  record: KeyRecord,
  progress: (scanned: number, resealed: number) => void,
): Promise<PassCounts> {
  const secrets = await openRecordVersions(record, uid, ctx.providers, ctx.wipe);
  let keyring: UserKeyring;
  try {
    keyring = deriveKeyring(secrets, record.keyVersion, contentVersionsOf(record));
  } finally {
    for (const secret of secrets.values()) ctx.wipe(secret);
  }
  const counts: PassCounts = { resealed: 0, current: 0, skipped: 0, expired: 0, failed: 0, conflicts: 0 };
  const access = await ctx.accessFor?.(uid);
  const files = userFilesPrefix(uid);
  let scanned = 0;
  try {
    // The files, then their history (a version written meanwhile under an older key is found by a later pass).
    for (const prefix of [files, userHistoryPrefix(uid)]) {
      for await (const object of listAll(ctx.store, prefix)) {
        const outcome = await resealObject(ctx, uid, keyring, object.key, access);
        counts[outcome] += 1;
        scanned += 1;
        progress(scanned, counts.resealed);
      }
    }
    // Then the host's records (vault.userRecords): an idempotency record must still replay its
    // result, an ended-sessions record still end its sessions, after the drop.
    for (const prefix of userRecordPrefixes(uid)) {
      for await (const object of listAll(ctx.store, prefix)) {
        const record = parseUserRecordKey(uid, object.key);
        if (record === null) continue; // not a record (the settings under p/)
        const outcome = await resealRecord(ctx, uid, keyring, object.key, userRecordPath(record.kind, record.name));
        counts[outcome] += 1;
        scanned += 1;
        progress(scanned, counts.resealed);
      }
    }
  } finally {
    wipeKeyring(keyring);
  }
  return counts;
}

/** The canonical path of an object's name, or null when it is not one of the user's files. */
function pathOf(keys: UserKeys, name: string): string | null {
  let path = MEMORIES_ROOT;
  try {
    for (const encoded of name.split('/')) path = `${path}/${decryptSegment(keys, path, encoded)}`;
  } catch {
    return null;
  }
  return path === MEMORIES_ROOT ? null : path;
}

/** Every kept version carries the history tag (the CDK construct's lifecycle rule filters on it), never a TTL class. */
const VERSION_TAGS = { [HISTORY_TAG_KEY]: HISTORY_TAG_VALUE };

/** Where a listed key lives: a file (its name below f/) or a kept version of one (docs/versions.md), with its number. */
function placeOf(uid: string, key: string): { name: string; version: boolean; seq?: number } | null {
  const files = userFilesPrefix(uid);
  if (key.startsWith(files)) return { name: key.slice(files.length), version: false };
  const parsed = parseVersionKey(uid, key);
  return parsed ? { name: parsed.fileKey.slice(files.length), version: true, seq: parsed.seq } : null;
}

/**
 * Re-seal one sealed value under the current key: unchanged when it is current already, null when
 * its version is not in the record or it does not open (INTEGRITY: left alone, the pass fails closed).
 */
function resealed(
  ctx: Context,
  uid: string,
  keyring: UserKeyring,
  path: string,
  sealed: Uint8Array,
  change?: (plain: Uint8Array) => Uint8Array,
): Uint8Array | null {
  const version = contentKeyVersion(sealed);
  if (version === keyring.current.keyVersion && !change) return sealed;
  const keys = version === null ? undefined : keyring.byVersion.get(version);
  if (!keys) return null;
  let plaintext: Uint8Array;
  try {
    plaintext = openContent(keys, ctx.binding.deploymentId, uid, path, sealed);
  } catch {
    return null;
  }
  const changed = change ? change(plaintext) : plaintext;
  const out = sealContentWithNonce(
    keyring.current,
    ctx.binding.deploymentId,
    uid,
    path,
    changed,
    randomNonce(NONCE_BYTES),
  );
  ctx.wipe(plaintext);
  return out;
}

/**
 * A version record for the re-sealed body: the same number, actor, time and end, the new body's
 * hash, and when the store first kept the version (set once; a later re-key keeps it). Null when the
 * record fails the checks every read makes (src/crypto/verified-read.ts): it does not open, does
 * not describe the body it sits on, or (`check`) names another place in the history or is older
 * than the history. Left alone: fail closed.
 */
function resealedRecord(
  ctx: Context,
  uid: string,
  keyring: UserKeyring,
  path: string,
  stored: { body: Uint8Array; lastModified: Date },
  sealedRecord: string,
  newBody: Uint8Array,
  check: (record: VersionRecord) => void,
  version: boolean,
): string | null {
  let broken = false;
  const out = resealed(ctx, uid, keyring, versionRecordPath(path), Buffer.from(sealedRecord, 'base64url'), (plain) => {
    let record: VersionRecord;
    try {
      record = parseVersionRecord(plain, stored.body);
      check(record);
    } catch {
      broken = true;
      return plain;
    }
    const keptAt = record.keptAt ?? (version ? stored.lastModified.getTime() : undefined);
    const next = {
      s: record.seq,
      a: record.actor,
      t: record.time,
      h: bodyHashOf(newBody),
      ...(record.end !== undefined ? { d: record.end } : {}),
      ...(keptAt !== undefined ? { k: keptAt } : {}),
    };
    return new TextEncoder().encode(JSON.stringify(next));
  });
  return out === null || broken ? null : Buffer.from(out).toString('base64url');
}

/** What one look at an object decides: an outcome, a PUT of these bytes If-Match what was read, or a read again (not an attempt). */
type Step = keyof PassCounts | 'read again' | { body: Uint8Array; options: PutOptions };

/**
 * The one re-seal loop: reads `key` and asks `decide`; a PUT If-Match the ETag read that loses to
 * a write which landed first (an edit, a delete, a fence: its bytes win) reads again, up to
 * maxAttemptsPerObject PUTs, then counts as a conflict.
 */
async function rewriteInPlace(
  ctx: Context,
  key: string,
  decide: (stored: StoredObject) => Step | Promise<Step>,
): Promise<keyof PassCounts> {
  for (let attempt = 1; attempt <= (ctx.maxAttemptsPerObject ?? 5);) {
    const stored = await ctx.store.get(key);
    if (!stored) return 'skipped'; // deleted since the listing
    const step = await decide(stored);
    if (step === 'read again') continue;
    if (typeof step === 'string') return step;
    attempt += 1;
    try {
      await ctx.store.put(key, step.body, { ...step.options, ifMatch: stored.etag });
      return 'resealed';
    } catch (e) {
      if (!(e instanceof PreconditionFailedError)) throw e;
    }
  }
  return 'conflicts';
}

/**
 * One host record re-sealed in place (If-Match). A write of the host that races it wins, as an edit
 * does; one that does not open stays as it is and keeps the old version (fail closed, as a file).
 */
function resealRecord(
  ctx: Context,
  uid: string,
  keyring: UserKeyring,
  key: string,
  path: string,
): Promise<keyof PassCounts> {
  return rewriteInPlace(ctx, key, (stored) => {
    if (contentKeyVersion(stored.body) === keyring.current.keyVersion) return 'current';
    const body = resealed(ctx, uid, keyring, path, stored.body);
    return body === null ? 'failed' : { body, options: { metadata: stored.metadata } };
  });
}

async function resealObject(
  ctx: Context,
  uid: string,
  keyring: UserKeyring,
  key: string,
  access: RekeyAccess | undefined,
): Promise<keyof PassCounts> {
  const place = placeOf(uid, key);
  const path = place === null ? null : pathOf(keyring.current, place.name);
  if (place === null || path === null) return 'skipped';
  // A version is never idle-expired (its age is the history's retention) and carries the history tag.
  const tags = place.version ? VERSION_TAGS : access?.writeTags;
  const current = keyring.current;
  // A file to re-seal is checked against its history's newest number, listed before the GET that
  // is compared with it (src/crypto/verified-read.ts); a version against its key's number.
  let newest: number | null | undefined = place.version ? null : undefined;
  return rewriteInPlace(ctx, key, async (stored) => {
    const sealedRecord = stored.metadata[VERSION_METADATA];
    // A fence marker holds no content (its file moved or is being deleted); an expired file is left to the sweeper.
    // An empty version is a tombstone: only its record is sealed.
    if (markerOf(stored.metadata) || (stored.body.byteLength === 0 && !(place.version && sealedRecord !== undefined)))
      return 'skipped';
    if (!place.version && access?.isExpired?.(stored.lastModified)) return 'expired';
    const bodyCurrent = stored.body.byteLength === 0 || contentKeyVersion(stored.body) === current.keyVersion;
    const recordCurrent =
      sealedRecord === undefined || contentKeyVersion(Buffer.from(sealedRecord, 'base64url')) === current.keyVersion;
    if (bodyCurrent && recordCurrent) return 'current';
    if (newest === undefined) {
      newest = await newestKeptSeq(ctx.store, uid, key);
      return 'read again'; // after the listing (once: newest is known from now on)
    }
    const known = newest;
    const check = (record: VersionRecord | undefined): void =>
      void (place.version ? checkVersionPlace(record, place.seq!) : checkCurrentFresh(path, record?.seq, known));
    if (sealedRecord === undefined) {
      try {
        check(undefined); // a version without a record, or a file without one beside a history: put back
      } catch {
        return 'failed';
      }
    }
    const body = stored.body.byteLength === 0 ? stored.body : resealed(ctx, uid, keyring, path, stored.body);
    if (body === null) return 'failed';
    const record =
      sealedRecord === undefined
        ? undefined
        : resealedRecord(ctx, uid, keyring, path, stored, sealedRecord, body, check, place.version);
    if (record === null) return 'failed';
    const metadata = record === undefined ? stored.metadata : { ...stored.metadata, [VERSION_METADATA]: record };
    return { body, options: { metadata, ...(tags ? { tags } : {}) } };
  });
}
