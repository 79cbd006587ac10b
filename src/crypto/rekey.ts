/**
 * Re-keying a user's data key (docs/encryption.md, "Re-keying"): a new key version in the user's key
 * record, every object still sealed under an older version re-sealed under it in the background, and
 * the older versions dropped from the record once no object needs them.
 *
 * Names and audit pseudonyms stay derived from the user's first key version (the name root, kept in
 * the record until `forget`): re-sealing rewrites an object's bytes IN PLACE, under the same key,
 * with If-Match on the ETag it read. No object moves, so no fence is needed and no edit can be lost:
 * an edit that races a re-seal either lands first (the re-seal's If-Match fails; the object is read
 * again, and is already current or re-sealed again) or lands after (it replaces the re-sealed bytes
 * with its own, which is what the user asked for).
 *
 * Safe while the service runs. Instances that cached the record before the new version keep sealing
 * under the old one until their key-cache age runs out; they read re-sealed objects by re-reading the
 * record when a header names a version they lack (src/crypto/codec.ts, ensureKeyFor). So the old
 * version is dropped only after a pass that STARTED `settleMs` (the longest key-cache age, plus
 * grace) after the record's last write found no object under it: no stale instance can write one
 * after that. A crash anywhere leaves every object readable (each put is atomic, and the record
 * holds every version an object may carry); running again continues.
 *
 * File history (docs/versions.md) is re-sealed with the files: every kept version under
 * `u/{uid}/v/` gets its body re-sealed and its version record (which binds the body by its hash)
 * opened, given the new body's hash, and sealed again under the new key version, in the same one
 * put (If-Match), so each version is whole under the old or the new key. The record keeps its
 * number, actor and time, and gains the time the store first kept the version (`k`), since the
 * rewrite moves the object's LastModified that a restore otherwise goes by. A current file's own
 * record is re-sealed the same way.
 */
import { setTimeout as sleepFor } from 'node:timers/promises';
import { MemvaultError } from '../errors.js';
import { markerOf } from '../store/fence.js';
import { HISTORY_TAG_KEY, HISTORY_TAG_VALUE, parseVersionKey, userHistoryPrefix } from '../store/layout.js';
import { listAll, PreconditionFailedError, type ObjectStore } from '../store/port.js';
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
import { contentVersionsOf, describeKey, encodeKeyRecord, NAME_ROOT_KEY_VERSION, sealKeyRecord, type KeyProvider, type KeyRecord } from './key-provider.js';
import { isUid, iterateUsers, userFilesPrefix, userKeyKey } from './layout.js';
import { loadSodium } from './sodium.js';
import { keyStateOf, markKeyState } from './key-state.js';
import { newSecret, openRecordVersions, readUserRecord, type DeploymentBinding, type ReadUserRecord } from './wrapped-secret.js';
import { openDeployment } from './operations.js';
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

/** Default settle time: the default key-cache age (10 minutes) plus a minute for the wipe grace and clock skew. */
export const DEFAULT_REKEY_SETTLE_MS = 11 * 60_000;
const MEMORIES_ROOT = '/memories';

export interface RekeyProgress {
  uid: string;
  phase: 'version' | 'reseal' | 'settle' | 'drop' | 'done';
  /** The version new content is sealed under. */
  keyVersion: number;
  /** Objects looked at in the current pass. */
  scanned: number;
  /** Objects re-sealed so far (all passes). */
  resealed: number;
  /** Set in phase 'settle': when the old versions may be dropped. */
  settlesAt?: string;
}

export interface RekeyOptions {
  store: ObjectStore;
  /** Wraps the new version; the record must be wrapped with it (finish a rotation first). */
  primary: KeyProvider;
  /** Every provider that may open records (primary and previous keys). */
  providers: readonly KeyProvider[];
  /**
   * The longest key-cache age of any instance serving this store, plus grace. Older versions are
   * dropped only by a pass that started this long after the record's last write. Default 11 minutes.
   */
  settleMs?: number;
  /** Wait out the settle time in this call (default true); false returns with `oldVersionsDropped: false` and `settlesAt`. */
  wait?: boolean;
  /** Only continue a re-key that is under way; never start a new version (a rerun of `--all` after a crash). */
  continueOnly?: boolean;
  /**
   * Idle expiry for one user: the tags their writes carry (the TTL class; re-sealed objects keep
   * them) and whether a file is expired (left as it is: re-sealing would resurrect it; it keeps its
   * version, and so the old version, until swept).
   */
  accessFor?: (uid: string) => Promise<RekeyAccess | undefined>;
  /** Drop this process's cached keys of the user when the record changes. */
  evict?: (uid: string) => void;
  onProgress?: (progress: RekeyProgress) => void;
  /** Conditional-put attempts per object before it counts as a conflict (default 5). */
  maxAttemptsPerObject?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export interface RekeyUserResult {
  uid: string;
  /** The version new content is sealed under now. */
  keyVersion: number;
  /** True when this run wrote the new version (false: it continued one under way, or continueOnly found none). */
  startedVersion: boolean;
  /** Objects re-sealed under the new version. */
  resealed: number;
  /** Objects already under the new version (written by the service since, or re-sealed by an earlier run). */
  current: number;
  /** Objects under the prefix that are not the user's files (fence markers, names that do not decrypt); untouched. */
  skipped: number;
  /** Expired objects left as they were (they keep an older version until the sweeper removes them). */
  expired: number;
  /** Objects that name a version the record does not hold, or do not open under theirs (INTEGRITY); untouched. */
  failed: number;
  /** Objects that kept changing during the pass (each change is an edit already under the new version: run again). */
  conflicts: number;
  /** True when the record holds no older content version any more. */
  oldVersionsDropped: boolean;
  /** When older versions remain only because instances may still cache the old record: when they may be dropped. */
  settlesAt?: string;
}

export interface RekeyAllResult {
  users: number;
  /** Users whose older versions are dropped. */
  completed: number;
  resealed: number;
  failed: number;
  conflicts: number;
  expired: number;
  results: RekeyUserResult[];
}

export interface RekeyAccess {
  writeTags?: Record<string, string>;
  isExpired?(lastModified: Date): boolean;
}

interface Context extends RekeyOptions {
  binding: DeploymentBinding;
  wipe: (bytes: Uint8Array) => void;
}

/** Re-key one user (by uid). See the module comment; resumable and safe while the service runs. */
export async function rekeyUid(options: RekeyOptions & { uid: string }): Promise<RekeyUserResult> {
  if (!isUid(options.uid)) throw new MemvaultError('INVALID_USER', 'Not a memvault uid.');
  return withDeployment(options, (ctx) => rekeyOne(ctx, options.uid));
}

/**
 * Re-key every user: a new version for each (or the one under way), every object re-sealed, then,
 * after one shared settle wait, a last pass per user that drops the old versions.
 */
export async function rekeyAll(options: RekeyOptions): Promise<RekeyAllResult> {
  return withDeployment(options, async (ctx) => {
    const results = new Map<string, RekeyUserResult>();
    for await (const uid of iterateUsers(options.store)) {
      const result = await forgottenIsNull(rekeyOne({ ...ctx, wait: false }, uid));
      if (result !== null) results.set(uid, result);
    }
    if (options.wait ?? true) {
      // The users waiting only for the settle time: one wait for all, then a last pass each.
      for (const [uid, result] of results) {
        if (result.oldVersionsDropped || result.settlesAt === undefined) continue;
        const final = await forgottenIsNull(rekeyOne({ ...ctx, continueOnly: true }, uid));
        if (final !== null) results.set(uid, { ...final, resealed: result.resealed + final.resealed, startedVersion: result.startedVersion });
      }
    }
    const all = [...results.values()];
    const sum = (pick: (r: RekeyUserResult) => number) => all.reduce((n, r) => n + pick(r), 0);
    return {
      users: all.length,
      completed: all.filter((r) => r.oldVersionsDropped).length,
      resealed: sum((r) => r.resealed),
      failed: sum((r) => r.failed),
      conflicts: sum((r) => r.conflicts),
      expired: sum((r) => r.expired),
      results: all,
    };
  });
}

/** A user forgotten since the listing has nothing left to re-key. */
async function forgottenIsNull<T>(running: Promise<T>): Promise<T | null> {
  try {
    return await running;
  } catch (e) {
    if (e instanceof MemvaultError && e.code === 'NOT_FOUND') return null;
    throw e;
  }
}

async function withDeployment<T>(options: RekeyOptions, run: (ctx: Context) => Promise<T>): Promise<T> {
  const sodium = await loadSodium();
  const wipe = (b: Uint8Array) => sodium.memzero(b);
  const deployment = await openDeployment(options.store, [...options.providers], wipe);
  try {
    return await run({ ...options, binding: deployment.binding, wipe });
  } finally {
    wipe(deployment.secret);
    wipe(deployment.binding.macKey);
  }
}

function noRecordError(): MemvaultError {
  return new MemvaultError('NOT_FOUND', 'There is no key record for this user (never used, or forgotten); nothing was re-keyed.');
}

/** A record with an older content version still readable: a re-key under way. */
function isPending(record: KeyRecord): boolean {
  return record.readFrom !== undefined && record.readFrom < record.keyVersion;
}

async function readRecord(ctx: Context, uid: string): Promise<ReadUserRecord | null> {
  // Checked against the user's key state marks: a retired record put back is never re-keyed from.
  return readUserRecord(ctx.store, uid, ctx.binding);
}

async function rekeyOne(ctx: Context, uid: string): Promise<RekeyUserResult> {
  const now = ctx.now ?? Date.now;
  const sleep = ctx.sleep ?? ((ms: number) => sleepFor(ms));
  const settleMs = ctx.settleMs ?? DEFAULT_REKEY_SETTLE_MS;
  const report = (progress: Omit<RekeyProgress, 'uid'>) => ctx.onProgress?.({ uid, ...progress });

  const started = await startVersion(ctx, uid);
  let resealed = 0;
  for (;;) {
    const passStartedAt = now();
    const read = await readRecord(ctx, uid);
    if (!read) throw noRecordError();
    const { record } = read;
    const base = {
      uid,
      keyVersion: record.keyVersion,
      startedVersion: started,
      resealed,
    };
    if (!isPending(record)) return { ...base, current: 0, skipped: 0, expired: 0, failed: 0, conflicts: 0, oldVersionsDropped: true };
    // Under the marks' versions (read.usable): an object of a dropped version is never re-sealed into a current one.
    const pass = await resealPass(ctx, uid, read.usable, (scanned, n) =>
      report({ phase: 'reseal', keyVersion: record.keyVersion, scanned, resealed: resealed + n }),
    );
    resealed += pass.resealed;
    const result = { ...base, ...pass, resealed, oldVersionsDropped: false };
    if (pass.failed + pass.conflicts + pass.expired > 0) return result; // fail closed: the old versions stay
    // Every object is current. Drop only if this pass began after every instance must have re-read the record.
    const settlesAt = read.lastModified.getTime() + settleMs;
    if (passStartedAt >= settlesAt) {
      report({ phase: 'drop', keyVersion: record.keyVersion, scanned: pass.current + pass.skipped, resealed });
      await dropOlderVersions(ctx, uid, record.keyVersion);
      report({ phase: 'done', keyVersion: record.keyVersion, scanned: pass.current + pass.skipped, resealed });
      return { ...result, oldVersionsDropped: true };
    }
    const at = new Date(settlesAt).toISOString();
    report({ phase: 'settle', keyVersion: record.keyVersion, scanned: pass.current + pass.skipped, resealed, settlesAt: at });
    if (!(ctx.wait ?? true)) return { ...result, settlesAt: at };
    await sleep(Math.max(0, settlesAt - now()));
  }
}

/** Write the next key version, unless one is under way (or continueOnly). Returns whether it did. */
async function startVersion(ctx: Context, uid: string): Promise<boolean> {
  for (let attempt = 1; attempt <= 5; attempt++) {
    const read = await readRecord(ctx, uid);
    if (!read) throw noRecordError();
    const { record, etag } = read;
    if (isPending(record) || ctx.continueOnly) return false;
    if (record.kind !== ctx.primary.kind || record.keyId !== ctx.primary.keyId) {
      throw new MemvaultError(
        'KEY_UNAVAILABLE',
        `This user's key record is wrapped with the ${describeKey(record.kind, record.keyId)}, not the configured ${describeKey(ctx.primary.kind, ctx.primary.keyId)}: finish the rotation (memvault keys rotate) first. Nothing was changed.`,
      );
    }
    const next = record.keyVersion + 1;
    if (next > 0xffffffff) throw new MemvaultError('CONFIG', 'This user has used every key version; nothing was changed.');
    const fresh = await newSecret(ctx.primary, { deploymentId: ctx.binding.deploymentId, uid, keyVersion: next });
    ctx.wipe(fresh.secret); // opened again from the record like every other version
    const older = [...(record.older ?? []), { keyVersion: record.keyVersion, wrapped: record.wrapped }];
    const updated = sealKeyRecord(
      { deployment: record.deployment, kind: record.kind, keyId: record.keyId, keyVersion: next, wrapped: fresh.wrapped, readFrom: record.keyVersion, older },
      uid,
      ctx.binding.macKey,
    );
    try {
      await ctx.store.put(userKeyKey(uid), encodeKeyRecord(updated), { ifMatch: etag });
      await markKeyState(ctx.store, uid, keyStateOf(updated), ctx.binding); // after the put: the old record is refused from now on
      ctx.evict?.(uid);
      ctx.onProgress?.({ uid, phase: 'version', keyVersion: next, scanned: 0, resealed: 0 });
      return true;
    } catch (e) {
      if (!(e instanceof PreconditionFailedError)) throw e;
      // Rotated, forgotten, or another re-key started it: read again.
    }
  }
  throw new MemvaultError('CONFLICT', "This user's key record kept changing; run the re-key again.");
}

type PassCounts = Pick<RekeyUserResult, 'resealed' | 'current' | 'skipped' | 'expired' | 'failed' | 'conflicts'>;

async function resealPass(ctx: Context, uid: string, record: KeyRecord, progress: (scanned: number, resealed: number) => void): Promise<PassCounts> {
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
  const out = sealContentWithNonce(keyring.current, ctx.binding.deploymentId, uid, path, changed, randomNonce(NONCE_BYTES));
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

async function resealObject(ctx: Context, uid: string, keyring: UserKeyring, key: string, access: RekeyAccess | undefined): Promise<keyof PassCounts> {
  const place = placeOf(uid, key);
  const path = place === null ? null : pathOf(keyring.current, place.name);
  if (place === null || path === null) return 'skipped';
  // A version is never idle-expired (its age is the history's retention) and carries the history tag.
  const tags = place.version ? VERSION_TAGS : access?.writeTags;
  const current = keyring.current;
  // A file to re-seal is checked against its history's newest number, listed before the GET that
  // is compared with it (src/crypto/verified-read.ts); a version against its key's number.
  let newest: number | null | undefined = place.version ? null : undefined;
  for (let attempt = 1; attempt <= (ctx.maxAttemptsPerObject ?? 5); attempt++) {
    const stored = await ctx.store.get(key);
    if (!stored) return 'skipped'; // deleted since the listing
    const sealedRecord = stored.metadata[VERSION_METADATA];
    // A fence marker holds no content (its file moved or is being deleted); an expired file is left to the sweeper.
    // An empty version is a tombstone: only its record is sealed.
    if (markerOf(stored.metadata) || (stored.body.byteLength === 0 && !(place.version && sealedRecord !== undefined))) return 'skipped';
    if (!place.version && access?.isExpired?.(stored.lastModified)) return 'expired';
    const bodyCurrent = stored.body.byteLength === 0 || contentKeyVersion(stored.body) === current.keyVersion;
    const recordCurrent = sealedRecord === undefined || contentKeyVersion(Buffer.from(sealedRecord, 'base64url')) === current.keyVersion;
    if (bodyCurrent && recordCurrent) return 'current';
    if (newest === undefined) {
      newest = await newestKeptSeq(ctx.store, uid, key);
      attempt -= 1; // read again after the listing; not a lost race
      continue;
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
    const record = sealedRecord === undefined ? undefined : resealedRecord(ctx, uid, keyring, path, stored, sealedRecord, body, check, place.version);
    if (record === null) return 'failed';
    const metadata = record === undefined ? stored.metadata : { ...stored.metadata, [VERSION_METADATA]: record };
    try {
      await ctx.store.put(key, body, { ifMatch: stored.etag, metadata, ...(tags ? { tags } : {}) });
      return 'resealed';
    } catch (e) {
      if (!(e instanceof PreconditionFailedError)) throw e;
      // An edit (or a delete, or a fence) raced: its bytes win; look again.
    }
  }
  return 'conflicts';
}

/** Rewrite the record without the older content versions (version 1 stays: the name root). */
async function dropOlderVersions(ctx: Context, uid: string, keyVersion: number): Promise<void> {
  for (let attempt = 1; attempt <= 5; attempt++) {
    const read = await readRecord(ctx, uid);
    if (!read) throw noRecordError();
    const { record, etag } = read;
    // Another run dropped them already, or a new re-key started after that: nothing to do here.
    if (record.keyVersion !== keyVersion || !isPending(record)) return;
    const root = (record.older ?? []).find((o) => o.keyVersion === NAME_ROOT_KEY_VERSION);
    if (!root) throw new MemvaultError('INTEGRITY', "This user's key record lacks its first key version.");
    const dropped = sealKeyRecord(
      { deployment: record.deployment, kind: record.kind, keyId: record.keyId, keyVersion, wrapped: record.wrapped, readFrom: keyVersion, older: [root] },
      uid,
      ctx.binding.macKey,
    );
    // Marked before the put: from here on no reader uses the older versions, whatever record it meets.
    await markKeyState(ctx.store, uid, keyStateOf(dropped), ctx.binding);
    try {
      await ctx.store.put(userKeyKey(uid), encodeKeyRecord(dropped), { ifMatch: etag });
      ctx.evict?.(uid);
      return;
    } catch (e) {
      if (!(e instanceof PreconditionFailedError)) throw e;
    }
  }
  throw new MemvaultError('CONFLICT', "This user's key record kept changing; run the re-key again.");
}
