import { fromEnv } from '../config/from-env.js';
import { createVault, type Vault, type VaultOptions } from '../memvault.js';
import { cliLogger, storeUrlFrom, type StoreFlags } from './config.js';

export interface VaultFlags extends StoreFlags {
  auditFile?: string;
  auditCheckpoints?: string;
}

/**
 * The vault a CLI command works on: flags over the environment's options (fromEnv: store, S3 client,
 * keys, idle expiry with its touch interval, file history, audit files), then `extra`.
 */
export async function openCliVault(
  flags: VaultFlags,
  extra: Partial<VaultOptions> = {},
  env: NodeJS.ProcessEnv = process.env,
): Promise<Vault> {
  const logger = cliLogger(env);
  const { audit: envAudit, ...options } = fromEnv(env);
  const auditFile = flags.auditFile ?? envAudit?.file;
  const checkpointFile = flags.auditCheckpoints ?? envAudit?.checkpoint?.file;
  return createVault({
    ...options,
    store: storeUrlFrom(flags, env),
    logger,
    // CLI processes run side by side on one audit file (several `memvault exec`): shared mode
    // keeps them on one chain under a lock.
    ...(auditFile
      ? {
          audit: { file: auditFile, shared: true, ...(checkpointFile ? { checkpoint: { file: checkpointFile } } : {}) },
        }
      : {}),
    ...extra,
  });
}

/**
 * The vault of an existing deployment: for commands that read, erase or re-wrap through the vault
 * (nothing is created). It opens the store as the service does, so an older SQLite schema is moved
 * to this version; the commands that only read a store itself use openCliStore (no write at all).
 */
export function openExistingVault(flags: VaultFlags): Promise<Vault> {
  return openCliVault(flags, { create: false });
}
