/**
 * Create-once wrapped secrets (the deployment secret and per-user data keys). A secret is created
 * with `ifNoneMatch: '*'`: when two processes race, one put wins and the other reads and unwraps
 * the winner's record, so a uid never has two secrets.
 */
import { randomBytes } from 'node:crypto';
import { MemvaultError } from '../errors.js';
import { PreconditionFailedError, type ObjectStore } from '../store/port.js';
import { KEY_BYTES } from './format.js';
import { decodeKeyRecord, encodeKeyRecord, selectUnwrapProvider, type KeyProvider, type KeyRecord, type WrapContext } from './key-provider.js';

export const INITIAL_KEY_VERSION = 1;

export interface OpenedSecret {
  secret: Uint8Array;
  record: KeyRecord;
  created: boolean;
}

export interface SecretLocation {
  store: ObjectStore;
  /** Store key of the record. */
  key: string;
  /** uid in the wrap context. */
  uid: string;
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

export async function openRecord(record: KeyRecord, uid: string, providers: readonly KeyProvider[]): Promise<Uint8Array> {
  const provider = selectUnwrapProvider(record, providers);
  if (!provider) {
    throw new NoMatchingKeyError(record, 'Error: The key that protects this user is not configured; the service cannot open it.');
  }
  return provider.unwrap(record.wrapped, { uid, keyVersion: record.keyVersion });
}

export async function readSecret(location: SecretLocation, providers: readonly KeyProvider[]): Promise<OpenedSecret | null> {
  const stored = await location.store.get(location.key);
  if (!stored) return null;
  const record = decodeKeyRecord(stored.body);
  return { secret: await openRecord(record, location.uid, providers), record, created: false };
}

async function newSecret(primary: KeyProvider, context: WrapContext): Promise<{ secret: Uint8Array; wrapped: Uint8Array }> {
  if (primary.generateDataKey) {
    const generated = await primary.generateDataKey(context);
    return { secret: generated.plaintext, wrapped: generated.wrapped };
  }
  const secret = new Uint8Array(randomBytes(KEY_BYTES));
  return { secret, wrapped: await primary.wrap(secret, context) };
}

export async function readOrCreateSecret(
  location: SecretLocation,
  primary: KeyProvider,
  providers: readonly KeyProvider[],
  wipe: (bytes: Uint8Array) => void,
): Promise<OpenedSecret> {
  const existing = await readSecret(location, providers);
  if (existing) return existing;
  const context = { uid: location.uid, keyVersion: INITIAL_KEY_VERSION };
  const { secret, wrapped } = await newSecret(primary, context);
  const record: KeyRecord = { format: 1, kind: primary.kind, keyId: primary.keyId, keyVersion: INITIAL_KEY_VERSION, wrapped };
  try {
    await location.store.put(location.key, encodeKeyRecord(record), { ifNoneMatch: '*' });
    return { secret, record, created: true };
  } catch (e) {
    wipe(secret);
    if (!(e instanceof PreconditionFailedError)) throw e;
  }
  // Another process created the record first: theirs is the one.
  const winner = await readSecret(location, providers);
  if (!winner) throw new MemvaultError('CONFLICT', 'Error: A key record was created and removed concurrently; please try again.');
  return winner;
}
