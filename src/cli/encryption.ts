import { createEncryptionFromConfig, type Encryption } from '../crypto/index.js';
import { defaultMasterKeyFileFor, openExistingStore } from '../memvault.js';
import type { ObjectStore } from '../store/port.js';
import { s3ConfigFrom, storeUrlFrom, type StoreFlags } from './config.js';

/**
 * The store and its encryption as the service sees them (same keys, same env), for operator
 * commands (user forget/export, keys rotate, audit export --user). These only read, erase or
 * re-wrap what exists, so they never create anything: a store directory, a deployment record or a
 * key file that is missing is an error (a mistyped --store must not be reported as done).
 */
export async function openStoreWithEncryption(flags: StoreFlags): Promise<{ store: ObjectStore; encryption: Encryption; close(): Promise<void> }> {
  const url = storeUrlFrom(flags);
  const s3 = s3ConfigFrom();
  const store = await openExistingStore(url, s3 ? { s3 } : {});
  try {
    const encryption = await createEncryptionFromConfig({
      store,
      config: store.maxKeyBytes !== undefined ? { maxKeyBytes: store.maxKeyBytes } : {},
      defaultMasterKeyFile: defaultMasterKeyFileFor(url),
      create: false,
    });
    return {
      store,
      encryption,
      close: async () => {
        await encryption.close();
        await store.close();
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}
