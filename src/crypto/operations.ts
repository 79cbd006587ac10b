/**
 * Key and user operations behind the CLI (`memvault keys rotate`, `memvault user forget`,
 * `memvault user export`: src/lifecycle/export-archive.ts). Each takes a store and providers and reports progress through a
 * callback, so the CLI can drive a progress bar and tests can interrupt and resume.
 */
import { MemvaultError } from '../errors.js';
import { listAll, PreconditionFailedError, type ObjectStore } from '../store/port.js';
import { randomFillSync } from 'node:crypto';
import { computeDeploymentFingerprint, deriveRecordMacKey } from './format.js';
import {
  decodeKeyRecord,
  describeKey,
  encodeKeyRecord,
  sealKeyRecord,
  selectUnwrapProvider,
  type KeyProvider,
  type KeyRecord,
} from './key-provider.js';
import { DEPLOYMENT_CONTEXT_UID, DEPLOYMENT_RECORD_KEY, isUid, KEYS_PREFIX } from './layout.js';
import { loadSodium } from './sodium.js';
import {
  isAuthenticRecord,
  NoMatchingKeyError,
  openRecordVersions,
  readDeployment,
  type DeploymentBinding,
} from './wrapped-secret.js';

// ---------------------------------------------------------------------------------------------
// Rotation

export interface RotationProgress {
  done: number;
  total: number;
  rewrapped: number;
  skipped: number;
}

export interface RotateKeysOptions {
  store: ObjectStore;
  /** The key(s) records are wrapped with now. */
  from: KeyProvider | KeyProvider[];
  /** The key to re-wrap every record with. */
  to: KeyProvider;
  onProgress?: (progress: RotationProgress) => void;
  /** Conditional-put attempts per record before giving up (a live service rarely rewrites a key record). */
  maxAttemptsPerRecord?: number;
}

export interface RotationResult {
  total: number;
  rewrapped: number;
  /**
   * Records proven done (authenticated and opened with `to`: a resumed run) or deleted meanwhile
   * (a forgotten user). A record that only claims `to` in its unauthenticated-looking fields is
   * never counted here: its MAC covers them, and it must open with `to`.
   */
  skipped: number;
}

/** Every key record of the store: the deployment record first, then users in key order. */
async function keyRecordKeys(store: ObjectStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const object of listAll(store, KEYS_PREFIX)) {
    if (object.key === DEPLOYMENT_RECORD_KEY || isUid(object.key.slice(KEYS_PREFIX.length))) keys.push(object.key);
  }
  keys.sort((a, b) => Number(b === DEPLOYMENT_RECORD_KEY) - Number(a === DEPLOYMENT_RECORD_KEY));
  return keys;
}

function uidOfRecordKey(key: string): string {
  return key === DEPLOYMENT_RECORD_KEY ? DEPLOYMENT_CONTEXT_UID : key.slice(KEYS_PREFIX.length);
}

/** Open the deployment (authenticated) with any of `providers`; CONFIG when there is none. */
export async function openDeployment(
  store: ObjectStore,
  providers: KeyProvider[],
  wipe: (b: Uint8Array) => void,
): Promise<{ secret: Uint8Array; binding: DeploymentBinding }> {
  let opened;
  try {
    opened = await readDeployment(store, providers, wipe);
  } catch (e) {
    if (e instanceof NoMatchingKeyError) {
      throw new MemvaultError(
        'KEY_UNAVAILABLE',
        `The deployment record ${DEPLOYMENT_RECORD_KEY} is wrapped with the ${describeKey(e.record.kind, e.record.keyId)}, which is neither the old key nor the new one; give that key as the old key. Nothing was changed.`,
        { cause: e },
      );
    }
    throw e;
  }
  if (!opened)
    throw new MemvaultError(
      'CONFIG',
      `There is no deployment record (${DEPLOYMENT_RECORD_KEY}) in this store; nothing was changed.`,
    );
  return {
    secret: opened.secret,
    binding: { deploymentId: opened.record.deployment, macKey: deriveRecordMacKey(opened.secret) },
  };
}

function alteredRecordError(key: string): MemvaultError {
  return new MemvaultError(
    'INTEGRITY',
    `Key record ${key} fails its integrity check (altered, relabelled, replaced or copied from another deployment); it is not counted as rotated. ` +
      'Restore it from a backup or an earlier object version and run again (records done so far stay done).',
  );
}

/**
 * Re-wrap the deployment record and every user's data key with `to`, without touching content.
 * Resumable: a record already wrapped with `to` counts as done only after its MAC verifies and it
 * opens with `to`. Safe beside a running service: each record is replaced with If-Match on the ETag
 * it was read at, and re-read on conflict. Run the service with `to` as its key and `from` as a
 * previous key while this runs (or restart it afterwards), so it opens both kinds of record.
 */
export async function rotateKeys(options: RotateKeysOptions): Promise<RotationResult> {
  const sodium = await loadSodium();
  const wipe = (b: Uint8Array) => sodium.memzero(b);
  const { store, to } = options;
  const from = Array.isArray(options.from) ? options.from : [options.from];
  const maxAttempts = options.maxAttemptsPerRecord ?? 5;
  await preflight(to);

  const keys = await keyRecordKeys(store);
  // The deployment record first: a failure to open it (wrong --from) stops the run before any user.
  const deployment = await openDeployment(store, [...from, to], wipe);
  const progress: RotationProgress = { done: 0, total: keys.length, rewrapped: 0, skipped: 0 };
  options.onProgress?.({ ...progress });
  try {
    for (const key of keys) {
      const outcome = await rewrapRecord(
        store,
        key,
        uidOfRecordKey(key),
        deployment.binding,
        from,
        to,
        maxAttempts,
        wipe,
      );
      progress.done += 1;
      if (outcome === 'rewrapped') progress.rewrapped += 1;
      else progress.skipped += 1;
      options.onProgress?.({ ...progress });
    }
  } finally {
    wipe(deployment.secret);
    wipe(deployment.binding.macKey);
  }
  return { total: progress.total, rewrapped: progress.rewrapped, skipped: progress.skipped };
}

/** Prove that `to` can wrap and unwrap (KMS permissions, key state) before any record changes. */
async function preflight(to: KeyProvider): Promise<void> {
  const probe = randomFillSync(new Uint8Array(32));
  const context = { deploymentId: 'rotation-check', uid: '_rotation-check', keyVersion: 1 };
  const unwrapped = await to.unwrap(await to.wrap(probe, context), context);
  if (Buffer.compare(Buffer.from(unwrapped), Buffer.from(probe)) !== 0) {
    throw new MemvaultError(
      'KEY_UNAVAILABLE',
      `The new key (${describeKey(to.kind, to.keyId)}) did not return what it wrapped; nothing was changed.`,
    );
  }
}

/** Decode and authenticate one record (the MAC covers kind, key id, version and the wrapped bytes). */
export function authenticRecord(body: Uint8Array, key: string, uid: string, binding: DeploymentBinding): KeyRecord {
  let record: KeyRecord;
  try {
    record = decodeKeyRecord(body);
  } catch {
    throw alteredRecordError(key);
  }
  if (!isAuthenticRecord(record, uid, binding)) throw alteredRecordError(key);
  return record;
}

async function rewrapRecord(
  store: ObjectStore,
  key: string,
  uid: string,
  binding: DeploymentBinding,
  from: KeyProvider[],
  to: KeyProvider,
  maxAttempts: number,
  wipe: (bytes: Uint8Array) => void,
): Promise<'rewrapped' | 'skipped'> {
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const stored = await store.get(key);
    if (!stored) return 'skipped';
    const record = authenticRecord(stored.body, key, uid, binding);
    if (record.kind === to.kind && record.keyId === to.keyId) {
      // Done only if it really opens with the new key alone (every version it holds).
      const opened = await openRecordVersions(record, uid, [to], wipe).catch((e: unknown) => {
        throw new MemvaultError(
          'INTEGRITY',
          `Key record ${key} names the new key but does not open with it; it is not counted as rotated. Restore it from a backup.`,
          { cause: e },
        );
      });
      for (const secret of opened.values()) wipe(secret);
      return 'skipped';
    }
    let secrets: Map<number, Uint8Array>;
    try {
      secrets = await openRecordVersions(record, uid, [...from, to], wipe);
    } catch (e) {
      if (e instanceof NoMatchingKeyError) {
        throw new MemvaultError(
          'KEY_UNAVAILABLE',
          `Key record ${key} is wrapped with the ${describeKey(record.kind, record.keyId)}, which is neither the old key nor the new one; give that key as the old key and run again (records done so far stay done).`,
          { cause: e },
        );
      }
      throw e;
    }
    let rewrapped: KeyRecord;
    try {
      // Every version the record holds (a re-keyed user's older ones too) is re-wrapped with `to`.
      const wrapAt = (keyVersion: number) =>
        to.wrap(secrets.get(keyVersion)!, { deploymentId: binding.deploymentId, uid, keyVersion });
      const wrapped = await wrapAt(record.keyVersion);
      const older =
        record.older === undefined
          ? undefined
          : await Promise.all(
              record.older.map(async (o) => ({ keyVersion: o.keyVersion, wrapped: await wrapAt(o.keyVersion) })),
            );
      rewrapped = sealKeyRecord(
        {
          deployment: binding.deploymentId,
          kind: to.kind,
          keyId: to.keyId,
          keyVersion: record.keyVersion,
          wrapped,
          ...(older !== undefined ? { readFrom: record.readFrom!, older } : {}),
        },
        uid,
        binding.macKey,
      );
    } finally {
      for (const secret of secrets.values()) wipe(secret);
    }
    try {
      await store.put(key, encodeKeyRecord(rewrapped), { ifMatch: stored.etag });
      return 'rewrapped';
    } catch (e) {
      if (!(e instanceof PreconditionFailedError)) throw e;
      // Someone rewrote the record (another rotation, or the user was forgotten and re-created): read again.
    }
  }
  throw new MemvaultError('CONFLICT', `Key record ${key} kept changing during rotation; run the rotation again.`);
}

// ---------------------------------------------------------------------------------------------
// Verification (before an old key may be destroyed)

export interface VerifyKeysOptions {
  store: ObjectStore;
  /** The keys that must open every record: after a rotation, the new key alone. */
  providers: KeyProvider | KeyProvider[];
  onProgress?: (progress: { done: number; total: number }) => void;
}

export interface KeyRecordFailure {
  /** Store key of the record (k/_deployment or k/{uid}: pseudonymous). */
  key: string;
  reason: string;
}

export interface VerifyKeysResult {
  total: number;
  opened: number;
  failed: KeyRecordFailure[];
  /** The deployment fingerprint to pin (encryption.deploymentFingerprint / MEMVAULT_DEPLOYMENT_FINGERPRINT). */
  deploymentFingerprint: string;
}

/**
 * Open every key record with `providers` alone: its MAC must verify and the wrapped secret must
 * unwrap. A record that does not is listed with its reason; the caller fails closed (exit non-zero)
 * when any is. A deployment record that does not open throws (nothing else can be checked).
 */
export async function verifyKeys(options: VerifyKeysOptions): Promise<VerifyKeysResult> {
  const sodium = await loadSodium();
  const wipe = (b: Uint8Array) => sodium.memzero(b);
  const providers = Array.isArray(options.providers) ? options.providers : [options.providers];
  const keys = await keyRecordKeys(options.store);
  const deployment = await openDeployment(options.store, providers, wipe);
  const fingerprint = computeDeploymentFingerprint(deployment.secret, deployment.binding.deploymentId);
  const failed: KeyRecordFailure[] = [];
  let opened = 0;
  let done = 0;
  options.onProgress?.({ done, total: keys.length });
  try {
    for (const key of keys) {
      const uid = uidOfRecordKey(key);
      try {
        const stored = await options.store.get(key);
        if (stored) {
          const record = authenticRecord(stored.body, key, uid, deployment.binding);
          const provider = selectUnwrapProvider(record, providers);
          if (!provider)
            throw new MemvaultError(
              'KEY_UNAVAILABLE',
              `still wrapped with the ${describeKey(record.kind, record.keyId)} (rotation not finished)`,
            );
          for (const secret of (await openRecordVersions(record, uid, providers, wipe)).values()) wipe(secret);
          opened += 1;
        } else if (key === DEPLOYMENT_RECORD_KEY) {
          throw new MemvaultError('STORE_INCONSISTENT', 'the deployment record disappeared during verification');
        } else {
          opened += 1; // forgotten since the listing: nothing left to open
        }
      } catch (e) {
        failed.push({
          key,
          reason: e instanceof MemvaultError ? e.message.replace(/^Error: /, '') : 'could not be read',
        });
        if (!(e instanceof MemvaultError)) throw e;
      }
      done += 1;
      options.onProgress?.({ done, total: keys.length });
    }
  } finally {
    wipe(deployment.secret);
    wipe(deployment.binding.macKey);
  }
  return { total: keys.length, opened, failed, deploymentFingerprint: fingerprint };
}

export { forgetUid, forgetUser, type ForgetProgress, type ForgetResult, type ForgetUserOptions } from './erasure.js';
