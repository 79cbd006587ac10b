import { homedir } from 'node:os';
import { join } from 'node:path';
import { ENV } from '../config/env.js';
import { createEncryptionFromConfig, type Encryption, type EncryptionConfig } from '../crypto/index.js';
import type { CodecProvider } from '../crypto/user-codec.js';
import { localStoreBase } from '../store/open.js';
import type { ObjectStore } from '../store/port.js';
import { createPlainCodecProvider } from '../vault/plain-codec.js';
import type { VaultLogger } from './logger.js';

/**
 * Where a master key is created when none is configured. A file store: beside its data directory
 * (`<dir>.key`), so that a copy of the data alone does not carry its key. Any other store (S3, an
 * adapter object): `master.key` in `defaultKeyDir` (encryption.defaultKeyDir, MEMVAULT_HOME through
 * fromEnv(); default `~/.memvault`), announced loudly, because memories written under it can be read
 * only with that file. A key created for a store that already has a deployment record never matches
 * it, and start-up stops with a clear error instead.
 */
export function defaultMasterKeyFileFor(storeUrl: string | undefined, defaultKeyDir?: string): string {
  const local = localStoreBase(storeUrl);
  if (local !== undefined) return `${local}.key`;
  return join(defaultKeyDir ?? join(homedir(), '.memvault'), 'master.key');
}

/**
 * The start-up warning of a file store whose key is the default `<dir>.key`: the file sits beside
 * the data, so a copy of the parent folder (a backup, a synced folder, a stolen disk) carries both
 * and is not protected by the encryption (docs/encryption.md, "The embedded store's default key").
 * Said on every start, not only when the file is created.
 */
export function keyFileBesideData(
  storeUrl: string | undefined,
  defaultMasterKeyFile: string,
  notices: readonly string[],
): string | undefined {
  if (localStoreBase(storeUrl) === undefined) return undefined;
  if (!notices.some((n) => n.includes(`(from ${defaultMasterKeyFile})`))) return undefined;
  return (
    `the master key is the default key file ${defaultMasterKeyFile}, beside the store: a copy of the parent folder carries the data and its key together, ` +
    `so the encryption does not protect such a copy. Keep the key elsewhere (MEMVAULT_MASTER_KEY_FILE on another disk, a secret store, MEMVAULT_MASTER_KEY) for that`
  );
}

/** Env switch equivalent to `encryption: { createKeyFile: true }` (for the CLI and containers that opt in). */
export const CREATE_KEY_FILE_ENV = ENV.createKeyFile.name;

/**
 * A file store's key file beside its directory is made on first use (the quick start needs nothing
 * configured). For S3 and adapter stores a key is never made silently under the home directory: a
 * container's home is often ephemeral, and memories written under a lost key are lost. The host opts
 * in with `encryption.createKeyFile` (MEMVAULT_CREATE_KEY_FILE=1 through fromEnv()); an existing
 * file is always read.
 */
function mayCreateDefaultKeyFile(storeUrl: string | undefined, encrypt: EncryptionConfig): boolean {
  if (localStoreBase(storeUrl) !== undefined) return true;
  return encrypt.createKeyFile === true;
}

function noKeyHintFor(defaultMasterKeyFile: string): string {
  return (
    `Create a key first: \`memvault keys create --out /secure/path/master.key\`, then set ${ENV.masterKeyFile.name} to it ` +
    `(or encryption.masterKeyFile). To let memvault create ${defaultMasterKeyFile} itself, pass encryption: { createKeyFile: true } or set ${CREATE_KEY_FILE_ENV}=1.`
  );
}

const warnedKeyFilesBesideData = new Set<string>();

export interface CodecSettings {
  encryption?: EncryptionConfig | false;
  codec?: CodecProvider;
  create?: boolean;
  logger?: VaultLogger;
}

export interface ResolvedCodec {
  codec: CodecProvider;
  /** The vault's own encryption (absent for `encryption: false` and a host codec): lifecycle operations need it. */
  encryption?: Encryption;
  close(): Promise<void>;
}

/**
 * The vault's codec: the host's own, plain names and bytes, or the vault's encryption over `store`
 * (keys from the options or the environment; the start-up notices go to the logger).
 */
export async function resolveCodec(
  options: CodecSettings,
  store: ObjectStore,
  storeUrl: string | undefined,
): Promise<ResolvedCodec> {
  if (options.codec) return { codec: options.codec, close: () => options.codec!.close() };
  const encrypt = options.encryption ?? (store.kind === 'memory' ? false : {});
  if (encrypt === false) {
    const codec = createPlainCodecProvider();
    return { codec, close: () => codec.close() };
  }
  const defaultMasterKeyFile = defaultMasterKeyFileFor(storeUrl, encrypt.defaultKeyDir);
  const encryption = await createEncryptionFromConfig({
    store,
    config: { ...(store.maxKeyBytes !== undefined ? { maxKeyBytes: store.maxKeyBytes } : {}), ...encrypt },
    defaultMasterKeyFile,
    create: options.create ?? true,
    ...(mayCreateDefaultKeyFile(storeUrl, encrypt)
      ? {}
      : { readOnlyDefaultKeyFile: { hint: noKeyHintFor(defaultMasterKeyFile) } }),
  });
  const notices = [...encryption.notices];
  const besideData = keyFileBesideData(storeUrl, defaultMasterKeyFile, encryption.notices);
  if (besideData) notices.push(besideData);
  for (const notice of notices) {
    const isNew = /\bcreated\b/.test(notice) || notice === besideData;
    options.logger?.[isNew ? 'warn' : 'info'](notice);
    // A new key file must be backed up, or the memories are lost with it: say it even without a logger.
    if (isNew && encryption.createdMasterKeyFile && !options.logger) process.emitWarning(notice, 'MemvaultNotice');
    else if (notice === besideData && !options.logger && !warnedKeyFilesBesideData.has(defaultMasterKeyFile)) {
      warnedKeyFilesBesideData.add(defaultMasterKeyFile); // once per process and key file, also without a logger
      process.emitWarning(notice, 'MemvaultNotice');
    }
  }
  return { codec: encryption.codecProvider, encryption, close: () => encryption.close() };
}
