import { createEncryptionFromConfig, type Encryption } from '../crypto/index.js';
import { defaultMasterKeyFileFor } from '../memvault.js';
import { openStore } from '../store/open.js';
import type { ObjectStore } from '../store/port.js';
import { s3ConfigFrom, storeUrlFrom, type StoreFlags } from './config.js';

/** The store and its encryption as the service sees them (same keys, same env), for operator commands. */
export async function openStoreWithEncryption(flags: StoreFlags): Promise<{ store: ObjectStore; encryption: Encryption; close(): Promise<void> }> {
  const url = storeUrlFrom(flags);
  const s3 = s3ConfigFrom();
  const store = await openStore(url, s3 ? { s3 } : {});
  try {
    const encryption = await createEncryptionFromConfig({
      store,
      config: store.maxKeyBytes !== undefined ? { maxKeyBytes: store.maxKeyBytes } : {},
      defaultMasterKeyFile: defaultMasterKeyFileFor(url),
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
