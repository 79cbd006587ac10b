/**
 * Crypto-erasure of one user: the wrapped data key goes first, then every object under the user's
 * prefix (apart from operations.ts, which rewraps and verifies key records).
 */
import { MemvaultError } from '../errors.js';
import { listAll, type ObjectStore } from '../store/port.js';
import type { EncryptedCodecProvider } from './codec.js';
import { isUid, userKeyKey, userPrefix } from './layout.js';

export interface ForgetProgress {
  phase: 'key' | 'objects';
  deleted: number;
  total: number;
}

export interface ForgetResult {
  uid: string;
  /** False when no key existed (already forgotten, or an interrupted run being finished). */
  keyDeleted: boolean;
  objectsDeleted: number;
}

export interface ForgetUserOptions {
  store: ObjectStore;
  codecProvider: EncryptedCodecProvider;
  userId: string;
  onProgress?: (progress: ForgetProgress) => void;
}

/**
 * Crypto-erase a user: delete the wrapped data key FIRST (after that no copy of their objects,
 * in old versions or backups, can be decrypted without also restoring the key record), then
 * every object under the user's prefix. Running it again finishes an interrupted run.
 */
export async function forgetUser(options: ForgetUserOptions): Promise<ForgetResult> {
  return forgetUid({ ...options, uid: options.codecProvider.uidOf(options.userId) });
}

export async function forgetUid(options: {
  store: ObjectStore;
  codecProvider?: EncryptedCodecProvider;
  uid: string;
  onProgress?: (progress: ForgetProgress) => void;
}): Promise<ForgetResult> {
  const { store, uid } = options;
  if (!isUid(uid)) throw new MemvaultError('INVALID_USER', 'Not a memvault uid.');
  options.codecProvider?.evict(uid);
  const keyKey = userKeyKey(uid);
  const keyDeleted = (await store.head(keyKey)) !== null;
  options.onProgress?.({ phase: 'key', deleted: 0, total: 1 });
  await store.delete(keyKey);
  if ((await store.head(keyKey)) !== null) {
    throw new MemvaultError(
      'STORE_UNAVAILABLE',
      'The user key could not be deleted; nothing else was deleted. Run the command again.',
    );
  }
  // Again, now that the record is gone: a load that began between the first eviction and the delete
  // read the record and would cache the erased key; an eviction after it keeps it from being cached.
  options.codecProvider?.evict(uid);
  options.onProgress?.({ phase: 'key', deleted: 1, total: 1 });

  const keys: string[] = [];
  for await (const object of listAll(store, userPrefix(uid))) keys.push(object.key);
  let deleted = 0;
  options.onProgress?.({ phase: 'objects', deleted, total: keys.length });
  for (let i = 0; i < keys.length; i += 1000) {
    const batch = keys.slice(i, i + 1000);
    const { failed } = await store.deleteMany(batch);
    for (const key of failed) await store.delete(key);
    deleted += batch.length;
    options.onProgress?.({ phase: 'objects', deleted, total: keys.length });
  }
  return { uid, keyDeleted, objectsDeleted: keys.length };
}
