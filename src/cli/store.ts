import { readEnv } from '../config/env.js';
import { createEncryptionFromConfig, type Encryption } from '../crypto/index.js';
import { Closers } from '../entry/closers.js';
import { defaultMasterKeyFileFor } from '../entry/encryption.js';
import { openExistingStore, openStore } from '../store/open.js';
import { openS3Store } from '../store/open-s3.js';
import type { ObjectStore } from '../store/port.js';
import type { S3Store } from '../store/s3.js';

/**
 * How every CLI command opens a store: the URL as given, the S3 settings of `env` through the one
 * resolver (store/s3/settings.ts). By default the command only reads it (backup, doctor, audit
 * verify and export): it must exist and opening writes nothing, not even a schema upgrade (a
 * SQLite store of an older version is CONFIG). `writes` is an existing store the command changes
 * (expire): it must exist, and opens as the service opens it. `create` is a store the command may
 * create (migrate's destination, expire's --audit-store; the commands that create data go through
 * createVault).
 */
export function openCliStore(
  url: string,
  env: NodeJS.ProcessEnv = process.env,
  options: { create?: boolean; writes?: boolean } = {},
): Promise<ObjectStore> {
  if (options.create === true) return openStore(url, { env });
  return options.writes === true ? openExistingStore(url, { env }) : openStore(url, { env, onlyReads: true });
}

/** An s3:// store with its client, for the commands that talk to the bucket itself (doctor, expire's deleter). */
export function openCliS3Store(url: string, env: NodeJS.ProcessEnv = process.env): Promise<S3Store> {
  return openS3Store(url, { env });
}

export interface StoreWithEncryption {
  store: ObjectStore;
  encryption: Encryption;
  close: () => Promise<void>;
}

/**
 * The store and its encryption as the service sees them (same keys, same env), for operator
 * commands (audit export --user, audit verify's key, doctor's file-store checks). These only read,
 * so they never create anything: a store directory, a deployment record or a key file that is
 * missing is an error (a mistyped --store must not be reported as done).
 */
export async function openStoreWithEncryption(
  url: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<StoreWithEncryption> {
  const closers = new Closers();
  return closers.opening(async () => {
    const store = closers.add(await openCliStore(url, env), (s) => s.close());
    const encryption = closers.add(
      await createEncryptionFromConfig({
        store,
        config: store.maxKeyBytes !== undefined ? { maxKeyBytes: store.maxKeyBytes } : {},
        env,
        defaultMasterKeyFile: defaultMasterKeyFileFor(url, readEnv(env, 'home')),
        create: false,
      }),
      (e) => e.close(),
    );
    return { store, encryption, close: () => closers.closeAll() };
  });
}
