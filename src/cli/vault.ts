import { ttlSettingsFromEnv } from '../expiry/config.js';
import { createVault, type Vault, type VaultOptions } from '../memvault.js';
import { historyFromEnv } from '../vault/history-options.js';
import { cliLogger, ENV, s3ConfigFrom, storeUrlFrom, type StoreFlags } from './config.js';

export interface VaultFlags extends StoreFlags {
  auditFile?: string;
  auditCheckpoints?: string;
}

/** The vault a CLI command works on, configured from flags and environment. */
export async function openCliVault(flags: VaultFlags, extra: Partial<VaultOptions> = {}): Promise<Vault> {
  const logger = cliLogger();
  const s3 = s3ConfigFrom();
  const auditFile = flags.auditFile ?? process.env[ENV.auditFile];
  const checkpointFile = flags.auditCheckpoints ?? process.env[ENV.auditCheckpointFile];
  // The same TTL settings as the sweeper (MEMVAULT_TTL_DAYS, MEMVAULT_TTL_CLASSES): a file the
  // sweeper would delete is already absent for the commands.
  const expiry = ttlSettingsFromEnv();
  // File history (docs/versions.md): MEMVAULT_HISTORY=1, with its retention knobs.
  const history = historyFromEnv();
  return createVault({
    store: storeUrlFrom(flags),
    ...(s3 ? { s3 } : {}),
    logger,
    // CLI processes run side by side on one audit file (several `memvault exec`): shared mode
    // keeps them on one chain under a lock.
    ...(auditFile ? { audit: { file: auditFile, shared: true, ...(checkpointFile ? { checkpoint: { file: checkpointFile } } : {}) } } : {}),
    ...(expiry ? { expiry } : {}),
    ...(history !== undefined ? { history } : {}),
    ...extra,
  });
}
