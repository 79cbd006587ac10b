/**
 * Create-once, authenticated wrapped secrets: the deployment secret (k/_deployment) and per-user
 * data keys (k/{uid}). Format 2 (docs/format.md):
 *
 * - every record carries the deployment id, bound into its wrap (AD or KMS encryption context), so
 *   two deployments sharing a master key refuse each other's records;
 * - every record carries a MAC keyed from the deployment secret (the deployment record: from its
 *   own secret). A user record is checked BEFORE it is unwrapped, so someone who can write the
 *   bucket and call kms:Encrypt (but not Decrypt) cannot substitute a key of their own.
 *
 * A secret is created with `ifNoneMatch: '*'`: when two processes race, one put wins and the other
 * reads and unwraps the winner's record, so a uid never has two secrets. A user's key is created
 * only when the user has no objects at all: a key record that vanished while files remain is an
 * error naming the recovery, never a silent new key.
 */
import { randomBytes, randomFillSync } from 'node:crypto';
import { MemvaultError } from '../errors.js';
import { PreconditionFailedError, type ObjectStore } from '../store/port.js';
import { toBase64Url } from './bytes.js';
import { DEPLOYMENT_ID_BYTES, deriveRecordMacKey, KEY_BYTES, verifyRecordMac } from './format.js';
import {
  decodeKeyRecord,
  encodeKeyRecord,
  recordMacFields,
  recordVersions,
  sealKeyRecord,
  selectUnwrapProvider,
  type KeyProvider,
  type KeyRecord,
  type WrapContext,
} from './key-provider.js';
import {
  isOlderKeyState,
  keyStateMarkPrefix,
  keyStateOf,
  markKeyStateWhileCurrent,
  newestKeyStateMark,
  withoutDroppedVersions,
} from './key-state.js';
import { DEPLOYMENT_CONTEXT_UID, DEPLOYMENT_RECORD_KEY, userKeyKey, userPrefix } from './layout.js';

export const INITIAL_KEY_VERSION = 1;

export interface OpenedSecret {
  secret: Uint8Array;
  record: KeyRecord;
  /** ETag of the record as read or written (re-validation compares it). */
  etag: string;
  created: boolean;
  /**
   * User records: every secret the record holds, by key version (the current one is `secret`
   * itself). Wipe them all when done.
   */
  versions?: Map<number, Uint8Array>;
}

/** What authenticates user records: the deployment id and the record MAC key. */
export interface DeploymentBinding {
  deploymentId: string;
  macKey: Uint8Array;
}

/** Thrown when a record's key is among none of the configured providers. */
export class NoMatchingKeyError extends MemvaultError {
  constructor(
    readonly record: KeyRecord,
    message: string,
  ) {
    super('KEY_UNAVAILABLE', message);
  }
}

/** The model-facing text when a key record fails authentication (names no record, user or key). */
export const KEY_RECORD_INTEGRITY_MESSAGE =
  "Error: This user's key record failed its integrity check: it was altered, replaced or copied from another deployment, so memvault will not use it. " +
  'Nothing was read or written. Recovery: the operator restores the key record from a backup or an earlier object version.';

/** A user has files but no key record (deleted, lost): never answered with a new, empty key. */
export const KEY_RECORD_MISSING_MESSAGE =
  "Error: This user's key record is missing although their memory files exist; memvault will not create a new key (the files would become unreadable). " +
  'Nothing was written. Recovery: the operator restores the key record from a backup or an earlier object version (docs/encryption.md, "A missing or changed key record").';

export function keyRecordIntegrityError(): MemvaultError {
  return new MemvaultError('INTEGRITY', KEY_RECORD_INTEGRITY_MESSAGE);
}

/** A genuine record older than a state the user's key already reached (a retired record put back). */
export const KEY_RECORD_ROLLED_BACK_MESSAGE =
  "Error: This user's key record is older than one memvault has already used (a retired key record was put back), so memvault will not use it. " +
  'Nothing was read or written. Recovery: the operator restores the newest key record (docs/encryption.md, "Key records never move backwards").';

export async function openRecord(
  record: KeyRecord,
  uid: string,
  providers: readonly KeyProvider[],
): Promise<Uint8Array> {
  const provider = selectUnwrapProvider(record, providers);
  if (!provider) {
    throw new NoMatchingKeyError(
      record,
      'Error: The key that protects this user is not configured; the service cannot open it.',
    );
  }
  return provider.unwrap(record.wrapped, { deploymentId: record.deployment, uid, keyVersion: record.keyVersion });
}

/**
 * Unwrap every secret a record holds (the current version and the older ones a re-key keeps), each
 * with its own version in the wrap context; on any failure the ones already opened are wiped.
 */
export async function openRecordVersions(
  record: KeyRecord,
  uid: string,
  providers: readonly KeyProvider[],
  wipe: (bytes: Uint8Array) => void,
): Promise<Map<number, Uint8Array>> {
  const provider = selectUnwrapProvider(record, providers);
  if (!provider) {
    throw new NoMatchingKeyError(
      record,
      'Error: The key that protects this user is not configured; the service cannot open it.',
    );
  }
  const opened = new Map<number, Uint8Array>();
  try {
    for (const { keyVersion, wrapped } of recordVersions(record)) {
      opened.set(keyVersion, await provider.unwrap(wrapped, { deploymentId: record.deployment, uid, keyVersion }));
    }
  } catch (e) {
    for (const secret of opened.values()) wipe(secret);
    throw e;
  }
  return opened;
}

/** True when a user record belongs to this deployment and its MAC verifies (no unwrap, no KMS call). */
export function isAuthenticRecord(record: KeyRecord, uid: string, binding: DeploymentBinding): boolean {
  return (
    record.deployment === binding.deploymentId &&
    verifyRecordMac(binding.macKey, recordMacFields(record, uid), record.mac)
  );
}

/** Open a user record: authenticate first, then unwrap. */
export async function openUserRecord(
  record: KeyRecord,
  uid: string,
  binding: DeploymentBinding,
  providers: readonly KeyProvider[],
): Promise<Uint8Array> {
  if (!isAuthenticRecord(record, uid, binding)) throw keyRecordIntegrityError();
  return openRecord(record, uid, providers);
}

export async function newSecret(
  primary: KeyProvider,
  context: WrapContext,
): Promise<{ secret: Uint8Array; wrapped: Uint8Array }> {
  if (primary.generateDataKey) {
    const generated = await primary.generateDataKey(context);
    return { secret: generated.plaintext, wrapped: generated.wrapped };
  }
  // A fresh buffer, never a slice of Node's shared pool (it is wiped when no longer needed).
  const secret = randomFillSync(new Uint8Array(KEY_BYTES));
  return { secret, wrapped: await primary.wrap(secret, context) };
}

// ---------------------------------------------------------------------------------------------
// Deployment record

/** The deployment record's MAC key is derived from its own secret (nothing else exists yet). */
function deploymentMacValid(record: KeyRecord, secret: Uint8Array): boolean {
  const macKey = deriveRecordMacKey(secret);
  try {
    return verifyRecordMac(macKey, recordMacFields(record, DEPLOYMENT_CONTEXT_UID), record.mac);
  } finally {
    macKey.fill(0);
  }
}

export const DEPLOYMENT_RECORD_INTEGRITY_MESSAGE = `The deployment record (${DEPLOYMENT_RECORD_KEY}) opens but fails its integrity check: it was altered. Restore it from a backup or an earlier object version.`;

export async function readDeployment(
  store: ObjectStore,
  providers: readonly KeyProvider[],
  wipe: (b: Uint8Array) => void,
): Promise<OpenedSecret | null> {
  const stored = await store.get(DEPLOYMENT_RECORD_KEY);
  if (!stored) return null;
  const record = decodeKeyRecord(stored.body);
  const secret = await openRecord(record, DEPLOYMENT_CONTEXT_UID, providers);
  if (!deploymentMacValid(record, secret)) {
    wipe(secret);
    throw new MemvaultError('INTEGRITY', DEPLOYMENT_RECORD_INTEGRITY_MESSAGE);
  }
  return { secret, record, etag: stored.etag, created: false };
}

export function newDeploymentId(): string {
  return toBase64Url(new Uint8Array(randomBytes(DEPLOYMENT_ID_BYTES)));
}

export async function readOrCreateDeployment(
  store: ObjectStore,
  primary: KeyProvider,
  providers: readonly KeyProvider[],
  wipe: (bytes: Uint8Array) => void,
): Promise<OpenedSecret> {
  const existing = await readDeployment(store, providers, wipe);
  if (existing) return existing;
  const deploymentId = newDeploymentId();
  const { secret, wrapped } = await newSecret(primary, {
    deploymentId,
    uid: DEPLOYMENT_CONTEXT_UID,
    keyVersion: INITIAL_KEY_VERSION,
  });
  const macKey = deriveRecordMacKey(secret);
  const record = sealKeyRecord(
    { deployment: deploymentId, kind: primary.kind, keyId: primary.keyId, keyVersion: INITIAL_KEY_VERSION, wrapped },
    DEPLOYMENT_CONTEXT_UID,
    macKey,
  );
  wipe(macKey);
  try {
    const { etag } = await store.put(DEPLOYMENT_RECORD_KEY, encodeKeyRecord(record), { ifNoneMatch: '*' });
    return { secret, record, etag, created: true };
  } catch (e) {
    wipe(secret);
    if (!(e instanceof PreconditionFailedError)) throw e;
  }
  const winner = await readDeployment(store, providers, wipe);
  if (!winner)
    throw new MemvaultError('CONFLICT', 'Error: A key record was created and removed concurrently; please try again.');
  return winner;
}

// ---------------------------------------------------------------------------------------------
// User key records

/** Decode and authenticate a user record (no unwrap): INTEGRITY with the model-facing message otherwise. */
export function authenticUserRecord(body: Uint8Array, uid: string, binding: DeploymentBinding): KeyRecord {
  let record: KeyRecord;
  try {
    record = decodeKeyRecord(body);
  } catch {
    throw keyRecordIntegrityError();
  }
  if (!isAuthenticRecord(record, uid, binding)) throw keyRecordIntegrityError();
  return record;
}

/** A user's key record as read: authenticated and checked against the user's newest key state mark. */
export interface ReadUserRecord {
  /** The record as stored (what a conditional write of the record replaces). */
  record: KeyRecord;
  /** The record as it may be used: without the versions a marked drop retired. */
  usable: KeyRecord;
  etag: string;
  lastModified: Date;
}

/**
 * Read a user's record (GET) and, beside it, the newest of their key state marks (one LIST of one
 * key, src/crypto/key-state.ts). A record of a key version below the newest mark's is INTEGRITY;
 * one ahead of it (a crash between a new version and its mark, or a record of before the marks)
 * gets its mark here, so the state it reached cannot be undone.
 */
export async function readUserRecord(
  store: ObjectStore,
  uid: string,
  binding: DeploymentBinding,
  rereads = 2,
): Promise<ReadUserRecord | null> {
  const [stored, marks] = await Promise.all([
    store.get(userKeyKey(uid)),
    store.list(keyStateMarkPrefix(uid), { maxKeys: 1 }),
  ]);
  if (!stored) return null;
  const record = authenticUserRecord(stored.body, uid, binding);
  const mark = await newestKeyStateMark(store, uid, binding, marks.objects[0]);
  if (mark !== null && record.keyVersion < mark.keyVersion)
    throw new MemvaultError('INTEGRITY', KEY_RECORD_ROLLED_BACK_MESSAGE);
  const state = keyStateOf(record);
  if (mark === null || isOlderKeyState(mark, state)) {
    // Best effort: the record verified, so this read succeeds; the next read tries the mark again.
    const current = await markKeyStateWhileCurrent(store, uid, state, binding, stored.etag).catch(() => true);
    // Erased (or a new key) since the GET: what was read is gone, so it is read again.
    if (!current) {
      if (rereads === 0) throw new MemvaultError('CONFLICT', RECORD_CHANGING_MESSAGE);
      return readUserRecord(store, uid, binding, rereads - 1);
    }
  }
  return { record, usable: withoutDroppedVersions(record, mark), etag: stored.etag, lastModified: stored.lastModified };
}

const RECORD_CHANGING_MESSAGE = "Error: This user's key record kept changing while it was read; please try again.";

async function openUserSecret(
  found: ReadUserRecord,
  uid: string,
  providers: readonly KeyProvider[],
  wipe: (bytes: Uint8Array) => void,
): Promise<OpenedSecret> {
  const { usable: record, etag } = found;
  if (record.older === undefined)
    return { secret: await openRecord(record, uid, providers), record, etag, created: false };
  const versions = await openRecordVersions(record, uid, providers, wipe);
  return { secret: versions.get(record.keyVersion)!, record, etag, created: false, versions };
}

export async function readUserSecret(
  store: ObjectStore,
  uid: string,
  binding: DeploymentBinding,
  providers: readonly KeyProvider[],
  wipe: (bytes: Uint8Array) => void = (b) => b.fill(0),
): Promise<OpenedSecret | null> {
  const found = await readUserRecord(store, uid, binding);
  return found ? openUserSecret(found, uid, providers, wipe) : null;
}

/** True when anything at all is stored under the user's prefix (one listing of one key). */
export async function userHasObjects(store: ObjectStore, uid: string): Promise<boolean> {
  return (await store.list(userPrefix(uid), { maxKeys: 1 })).objects.length > 0;
}

export async function readOrCreateUserSecret(
  store: ObjectStore,
  uid: string,
  binding: DeploymentBinding,
  primary: KeyProvider,
  providers: readonly KeyProvider[],
  wipe: (bytes: Uint8Array) => void,
): Promise<OpenedSecret> {
  const existing = await readUserRecord(store, uid, binding);
  if (existing) return openUserSecret(existing, uid, providers, wipe);
  // No record. A new key is right only for a user with nothing stored: files without a key record
  // mean the record was deleted or lost, and a new key would silently split the user.
  if (await userHasObjects(store, uid)) {
    // Another process may have created the record (and a first file) since our read.
    const raced = await readUserSecret(store, uid, binding, providers, wipe);
    if (raced) return raced;
    throw new MemvaultError('STORE_INCONSISTENT', KEY_RECORD_MISSING_MESSAGE);
  }
  const { secret, wrapped } = await newSecret(primary, {
    deploymentId: binding.deploymentId,
    uid,
    keyVersion: INITIAL_KEY_VERSION,
  });
  const record = sealKeyRecord(
    {
      deployment: binding.deploymentId,
      kind: primary.kind,
      keyId: primary.keyId,
      keyVersion: INITIAL_KEY_VERSION,
      wrapped,
    },
    uid,
    binding.macKey,
  );
  try {
    const { etag } = await store.put(userKeyKey(uid), encodeKeyRecord(record), { ifNoneMatch: '*' });
    return { secret, record, etag, created: true, versions: new Map([[INITIAL_KEY_VERSION, secret]]) };
  } catch (e) {
    wipe(secret);
    if (!(e instanceof PreconditionFailedError)) throw e;
  }
  // Another process created the record first: theirs is the one.
  const winner = await readUserSecret(store, uid, binding, providers, wipe);
  if (!winner)
    throw new MemvaultError('CONFLICT', 'Error: A key record was created and removed concurrently; please try again.');
  return winner;
}
