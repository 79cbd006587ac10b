import { readEnv } from '../config/env.js';
import { createEncryptionFromConfig, type Encryption } from '../crypto/index.js';
import { Closers } from '../entry/closers.js';
import { defaultMasterKeyFileFor } from '../entry/encryption.js';
import { openExistingStore, openStore } from '../store/open.js';
import { openS3Store } from '../store/open-s3.js';
import type { ObjectStore } from '../store/port.js';
import type { S3Store } from '../store/s3.js';
import type { Vault } from '../memvault.js';
import { storeUrlFrom } from './config.js';
import { openCliVault, type VaultFlags } from './vault.js';

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

/**
 * The vault of an existing deployment for a command that only reads its store (migrate's source,
 * user export). The vault opens its store as the service does, which moves an older SQLite schema
 * to this version: so the store is opened first as the other tools that only read open it, where a
 * missing store or one that would need a write is CONFIG and nothing is written. Once that passed,
 * the vault's own open writes nothing either (a current store in WAL mode, a directory that exists).
 */
export async function openReadingVault(flags: VaultFlags, env: NodeJS.ProcessEnv = process.env): Promise<Vault> {
  const store = await openCliStore(storeUrlFrom(flags, env), env);
  await store.close();
  return openCliVault(flags, { create: false }, env);
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
