/**
 * From configuration (createVault options and environment) to key providers and the codec.
 * Precedence: explicit options, then environment, then the embedded default key file (created on
 * first run). Configuring two key sources at one level is an error rather than a silent choice.
 */
import { promises as fs } from 'node:fs';
import { ENV, readEnv } from '../config/env.js';
import { keySourceFromEnv, previousKeysFromEnv } from '../config/from-env.js';
import { MemvaultError } from '../errors.js';
import type { ObjectStore } from '../store/port.js';
import { createEncryptedCodecProvider, type EncryptedCodecProvider } from './codec.js';
import type { KeyCacheOptions } from './key-cache.js';
import type { KeyProvider } from './key-provider.js';
import { createKmsKeyProvider, type KmsClientLike } from './kms-key.js';
import { createLocalKeyProvider, loadOrCreateLocalMasterKey, parseMasterKey, readMasterKeyFile } from './local-key.js';
import { loadSodium } from './sodium.js';

const MASTER_KEY_ENV = ENV.masterKey.name;
const DEPLOYMENT_FINGERPRINT_ENV = ENV.deploymentFingerprint.name;

export interface KmsConfig {
  keyId: string;
  /** Your KMSClient (any copy of @aws-sdk/client-kms v3); one is made from the environment otherwise. */
  client?: KmsClientLike;
}

/** One key source: at most one of the three. */
export interface KeySourceConfig {
  /** Base64 of 32 bytes, or the 32 bytes. */
  masterKey?: string | Uint8Array;
  /** Path of a file holding the base64 master key, mode 0600. */
  masterKeyFile?: string;
  kms?: KmsConfig;
}

export interface EncryptionConfig extends KeySourceConfig {
  /** Old keys, used only to open records not yet re-wrapped (during a rotation). */
  previous?: KeySourceConfig[];
  cache?: KeyCacheOptions;
  /** Longest store key (default 1,024); lower it when the store adapter prepends a prefix. */
  maxKeyBytes?: number;
  /**
   * Stores other than the embedded file store (S3, adapters): with no key configured, memvault
   * creates `~/.memvault/master.key` (or `$MEMVAULT_HOME/master.key`) for a new deployment only when
   * this is true (or MEMVAULT_CREATE_KEY_FILE=1). Otherwise start-up stops and says how to make a
   * key (`memvault keys create`): a key made silently in a container's home is lost with it.
   */
  createKeyFile?: boolean;
  /**
   * The deployment fingerprint (`{id}.{check}`) this host expects (env MEMVAULT_DEPLOYMENT_FINGERPRINT).
   * Start-up refuses a deployment record with another one. Pin it in KMS mode: it is what stops
   * someone who can write the bucket and call kms:Encrypt from replacing the deployment record.
   */
  deploymentFingerprint?: string;
  /**
   * Where the default key file of a store other than a file store lives (default `~/.memvault`;
   * env MEMVAULT_HOME through fromEnv()).
   */
  defaultKeyDir?: string;
}

export interface ResolveKeyOptions {
  /**
   * An environment to read the key variables from (the CLI's). None by default: the library never
   * reads process.env by itself (config/from-env.ts).
   */
  env?: NodeJS.ProcessEnv;
  /** The embedded default: created with a fresh key when no other source is configured. */
  defaultMasterKeyFile?: string;
  /** false: the default key file is only read, never created (commands that must not start a deployment). */
  createDefaultKeyFile?: boolean;
  /** With createDefaultKeyFile false: what to tell the operator when the default file is missing. */
  missingKeyHint?: string;
}

export interface ResolvedKeyProvider {
  keyProvider: KeyProvider;
  /** Set when this call created the key file (the caller should tell the operator to back it up). */
  createdMasterKeyFile?: string;
  /** Where the key came from, for start-up logs ('MEMVAULT_MASTER_KEY', 'kms', a file path). */
  source: string;
}

const NO_KEY_MESSAGE =
  `Encryption is enabled but no master key is configured: set ${MASTER_KEY_ENV} to the base64 of 32 random bytes ` +
  `(openssl rand -base64 32), set ${ENV.masterKeyFile.name} to a key file (mode 0600), or set ${ENV.kmsKeyId.name} to use AWS KMS ` +
  `(encryption.masterKey, encryption.masterKeyFile or encryption.kms when configured in code).`;

function countSources(config: KeySourceConfig): number {
  return [config.masterKey !== undefined, config.masterKeyFile !== undefined, config.kms !== undefined].filter(Boolean)
    .length;
}

async function providerFromSource(config: KeySourceConfig, label: string): Promise<ResolvedKeyProvider> {
  await loadSodium();
  if (config.kms) return { keyProvider: createKmsKeyProvider(config.kms), source: `kms:${config.kms.keyId}` };
  if (config.masterKey !== undefined) {
    const key =
      typeof config.masterKey === 'string' ? parseMasterKey(config.masterKey, label) : new Uint8Array(config.masterKey);
    return withWipe(key, async () => ({ keyProvider: await createLocalKeyProvider(key), source: label }));
  }
  if (config.masterKeyFile !== undefined) {
    const key = await readMasterKeyFile(config.masterKeyFile);
    return withWipe(key, async () => ({
      keyProvider: await createLocalKeyProvider(key),
      source: config.masterKeyFile as string,
    }));
  }
  throw new MemvaultError('CONFIG', NO_KEY_MESSAGE);
}

async function withWipe<T>(key: Uint8Array, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } finally {
    (await loadSodium()).memzero(key);
  }
}

/**
 * The key provider that wraps new keys. Key variables are read only from an `env` handed over, and
 * never changed (an earlier version deleted MEMVAULT_MASTER_KEY from process.env once read, which
 * broke every later start in the same process, e.g. `audit export --user` opening the store twice).
 */
export async function keyProviderFromConfig(
  config: KeySourceConfig,
  options: ResolveKeyOptions = {},
): Promise<ResolvedKeyProvider> {
  if (countSources(config) > 1)
    throw new MemvaultError(
      'CONFIG',
      'Configure exactly one of encryption.masterKey, encryption.masterKeyFile and encryption.kms.',
    );
  if (countSources(config) === 1) return providerFromSource(config, 'encryption.masterKey');
  const fromEnv: KeySourceConfig = options.env ? keySourceFromEnv(options.env) : {};
  if (countSources(fromEnv) === 1) {
    return providerFromSource(fromEnv, MASTER_KEY_ENV);
  }
  if (options.defaultMasterKeyFile && options.createDefaultKeyFile === false) {
    return providerFromSource({ masterKeyFile: options.defaultMasterKeyFile }, options.defaultMasterKeyFile).catch(
      (e: unknown) => {
        if (e instanceof MemvaultError && /does not exist/.test(e.message)) {
          throw new MemvaultError(
            'CONFIG',
            `${NO_KEY_MESSAGE} ${options.missingKeyHint ?? `(No key file exists at the default place, ${options.defaultMasterKeyFile}, and this command does not create one.)`}`,
            { cause: e },
          );
        }
        throw e;
      },
    );
  }
  if (options.defaultMasterKeyFile) {
    await loadSodium();
    const { masterKey, created } = await loadOrCreateLocalMasterKey(options.defaultMasterKeyFile);
    const resolved = await withWipe(masterKey, async () => ({
      keyProvider: await createLocalKeyProvider(masterKey),
      source: options.defaultMasterKeyFile as string,
    }));
    return created ? { ...resolved, createdMasterKeyFile: options.defaultMasterKeyFile } : resolved;
  }
  throw new MemvaultError('CONFIG', NO_KEY_MESSAGE);
}

/** Old keys from config and, with an `env`, MEMVAULT_PREVIOUS_* (for the window of a rotation). */
export async function previousKeyProvidersFromConfig(
  config: EncryptionConfig,
  options: ResolveKeyOptions = {},
): Promise<KeyProvider[]> {
  const sources: Array<[KeySourceConfig, string]> = (config.previous ?? []).map((c, i) => [
    c,
    `encryption.previous[${i}].masterKey`,
  ]);
  if (options.env) sources.push(...previousKeysFromEnv(options.env));
  const providers: KeyProvider[] = [];
  for (const [source, label] of sources) {
    if (countSources(source) !== 1)
      throw new MemvaultError('CONFIG', 'Each previous key must name exactly one of masterKey, masterKeyFile and kms.');
    providers.push((await providerFromSource(source, label)).keyProvider);
  }
  return providers;
}

export interface Encryption {
  codecProvider: EncryptedCodecProvider;
  keyProvider: KeyProvider;
  previousKeyProviders: KeyProvider[];
  createdMasterKeyFile?: string;
  /** Lines for the start-up log (no key material). */
  notices: string[];
  /** Wipe the cached data keys, the deployment secret and the key providers' derived keys. */
  close(): Promise<void>;
}

/**
 * Everything createVault needs for `encryption: {...}`: resolves the keys, opens or creates the
 * deployment record, and returns the codec provider. Start-up errors are MemvaultError 'CONFIG'
 * (nothing or something malformed configured) or 'KEY_UNAVAILABLE' (the key is not this deployment's).
 */
export async function createEncryptionFromConfig(args: {
  store: ObjectStore;
  config: EncryptionConfig;
  env?: NodeJS.ProcessEnv;
  defaultMasterKeyFile?: string;
  /**
   * true (default): a really empty store becomes a new deployment (and the default key file is
   * created). false: open an existing deployment only; create neither a record nor a key file.
   */
  create?: boolean;
  /** The default key file may be read but not created (an S3 store without `createKeyFile`). */
  readOnlyDefaultKeyFile?: { hint: string };
}): Promise<Encryption> {
  const create = args.create ?? true;
  const resolveOptions: ResolveKeyOptions = {
    ...(args.env ? { env: args.env } : {}),
    ...(args.defaultMasterKeyFile ? { defaultMasterKeyFile: args.defaultMasterKeyFile } : {}),
    ...(create && !args.readOnlyDefaultKeyFile ? {} : { createDefaultKeyFile: false }),
    ...(args.readOnlyDefaultKeyFile ? { missingKeyHint: args.readOnlyDefaultKeyFile.hint } : {}),
  };
  const resolved = await keyProviderFromConfig(args.config, resolveOptions);
  const previousKeyProviders = await previousKeyProvidersFromConfig(args.config, resolveOptions);
  const pinned =
    args.config.deploymentFingerprint ?? (args.env ? readEnv(args.env, 'deploymentFingerprint') : undefined);
  let codecProvider: EncryptedCodecProvider;
  try {
    codecProvider = await createEncryptedCodecProvider({
      store: args.store,
      keyProvider: resolved.keyProvider,
      previousKeyProviders,
      ...(args.config.cache ? { cache: args.config.cache } : {}),
      ...(args.config.maxKeyBytes ? { maxKeyBytes: args.config.maxKeyBytes } : {}),
      ...(pinned ? { deploymentFingerprint: pinned } : {}),
      createDeployment: create,
    });
  } catch (e) {
    if (resolved.createdMasterKeyFile && e instanceof MemvaultError && e.code === 'STORE_INCONSISTENT') {
      // A key made for a store that turned out not to be empty: it belongs to nothing.
      await fs.rm(resolved.createdMasterKeyFile, { force: true });
      throw e;
    }
    if (resolved.createdMasterKeyFile && e instanceof MemvaultError && e.code === 'KEY_UNAVAILABLE') {
      // The key file we just made cannot be this deployment's key: remove it so the next start
      // does not mistake it for the real one.
      await fs.rm(resolved.createdMasterKeyFile, { force: true });
      throw new MemvaultError(
        'KEY_UNAVAILABLE',
        `${e.message} No master key file existed at ${resolved.createdMasterKeyFile}, so a new key was generated (and removed again): restore the original key file there.`,
        { cause: e },
      );
    }
    throw e;
  }
  const notices = [`encryption: ${codecProvider.mode}, key ${codecProvider.keyId} (from ${resolved.source})`];
  if (resolved.createdMasterKeyFile) {
    notices.push(
      `created a new master key file at ${resolved.createdMasterKeyFile}: back it up, without it the stored memories cannot be read`,
    );
  }
  if (codecProvider.createdDeployment) {
    notices.push(
      `created a new deployment record (k/_deployment), fingerprint ${codecProvider.deploymentFingerprint}: pin it (${DEPLOYMENT_FINGERPRINT_ENV})`,
    );
  } else if (!pinned && codecProvider.mode === 'kms') {
    notices.push(
      `deployment fingerprint ${codecProvider.deploymentFingerprint} is not pinned: set ${DEPLOYMENT_FINGERPRINT_ENV} to it, so that a deployment record replaced by someone with bucket write and kms:Encrypt is refused`,
    );
  }
  return {
    codecProvider,
    keyProvider: resolved.keyProvider,
    previousKeyProviders,
    ...(resolved.createdMasterKeyFile ? { createdMasterKeyFile: resolved.createdMasterKeyFile } : {}),
    notices,
    close: async () => {
      await codecProvider.close();
      for (const provider of [resolved.keyProvider, ...previousKeyProviders]) provider.close?.();
    },
  };
}
