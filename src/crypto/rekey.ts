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
 * record when a header names a version they lack (src/crypto/encrypted-user-codec.ts, ensureKeyFor). So the old
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
 *
 * So are the host's records beside the files (vault.userRecords: serve's idempotency records, the
 * page's ended-sessions record; src/store/layout.ts says where each kind lives): a retry still
 * replays its first result and a logged-out session stays out once the old version is dropped.
 */
import { setTimeout as sleepFor } from 'node:timers/promises';
import { MemvaultError } from '../errors.js';
import { PreconditionFailedError } from '../store/port.js';
import { describeKey, encodeKeyRecord, NAME_ROOT_KEY_VERSION, sealKeyRecord, type KeyRecord } from './key-provider.js';
import { isUid, iterateUsers, userKeyKey } from './layout.js';
import { loadSodium } from './sodium.js';
import { keyStateMarkKey, keyStateOf, markKeyState, markKeyStateWhileCurrent } from './key-state.js';
import { newSecret, readUserRecord, type ReadUserRecord } from './wrapped-secret.js';
import { openDeployment } from './operations.js';
import { resealPass } from './rekey-reseal.js';
import type { Context, RekeyAllResult, RekeyOptions, RekeyProgress, RekeyUserResult } from './rekey-types.js';

export type { RekeyAccess, RekeyAllResult, RekeyOptions, RekeyProgress, RekeyUserResult } from './rekey-types.js';

/** Default settle time: the default key-cache age (10 minutes) plus a minute for the wipe grace and clock skew. */
export const DEFAULT_REKEY_SETTLE_MS = 11 * 60_000;

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
        if (final !== null)
          results.set(uid, {
            ...final,
            resealed: result.resealed + final.resealed,
            startedVersion: result.startedVersion,
          });
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
  return new MemvaultError(
    'NOT_FOUND',
    'There is no key record for this user (never used, or forgotten); nothing was re-keyed.',
  );
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
    if (!isPending(record))
      return { ...base, current: 0, skipped: 0, expired: 0, failed: 0, conflicts: 0, oldVersionsDropped: true };
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
    report({
      phase: 'settle',
      keyVersion: record.keyVersion,
      scanned: pass.current + pass.skipped,
      resealed,
      settlesAt: at,
    });
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
    if (next > 0xffffffff)
      throw new MemvaultError('CONFIG', 'This user has used every key version; nothing was changed.');
    const fresh = await newSecret(ctx.primary, { deploymentId: ctx.binding.deploymentId, uid, keyVersion: next });
    ctx.wipe(fresh.secret); // opened again from the record like every other version
    const older = [...(record.older ?? []), { keyVersion: record.keyVersion, wrapped: record.wrapped }];
    const updated = sealKeyRecord(
      {
        deployment: record.deployment,
        kind: record.kind,
        keyId: record.keyId,
        keyVersion: next,
        wrapped: fresh.wrapped,
        readFrom: record.keyVersion,
        older,
      },
      uid,
      ctx.binding.macKey,
    );
    try {
      const written = await ctx.store.put(userKeyKey(uid), encodeKeyRecord(updated), { ifMatch: etag });
      // After the put: the old record is refused from now on. Erased right after it: no mark stays.
      const state = keyStateOf(updated);
      const current = await markKeyStateWhileCurrent(ctx.store, uid, state, ctx.binding, written.etag);
      ctx.evict?.(uid);
      if (!current) throw noRecordError();
      ctx.onProgress?.({ uid, phase: 'version', keyVersion: next, scanned: 0, resealed: 0 });
      return true;
    } catch (e) {
      if (!(e instanceof PreconditionFailedError)) throw e;
      // Rotated, forgotten, or another re-key started it: read again.
    }
  }
  throw new MemvaultError('CONFLICT', "This user's key record kept changing; run the re-key again.");
}

/** Rewrite the record without the older content versions (version 1 stays: the name root). */
async function dropOlderVersions(ctx: Context, uid: string, keyVersion: number): Promise<void> {
  const marked: string[] = [];
  for (let attempt = 1; attempt <= 5; attempt++) {
    const read = await readRecord(ctx, uid);
    if (!read) {
      // Erased meanwhile: a mark this drop wrote after the erasure listed the user's objects would
      // outlive it, and the user id could never start afresh (its next key would look rolled back).
      if (marked.length > 0) await ctx.store.deleteMany(marked).catch(() => undefined);
      throw noRecordError();
    }
    const { record, etag } = read;
    // Another run dropped them already, or a new re-key started after that: nothing to do here.
    if (record.keyVersion !== keyVersion || !isPending(record)) return;
    const root = (record.older ?? []).find((o) => o.keyVersion === NAME_ROOT_KEY_VERSION);
    if (!root) throw new MemvaultError('INTEGRITY', "This user's key record lacks its first key version.");
    const dropped = sealKeyRecord(
      {
        deployment: record.deployment,
        kind: record.kind,
        keyId: record.keyId,
        keyVersion,
        wrapped: record.wrapped,
        readFrom: keyVersion,
        older: [root],
      },
      uid,
      ctx.binding.macKey,
    );
    // Marked before the put: from here on no reader uses the older versions, whatever record it meets.
    await markKeyState(ctx.store, uid, keyStateOf(dropped), ctx.binding);
    marked.push(keyStateMarkKey(uid, keyStateOf(dropped), ctx.binding));
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
