import { expiryOptionsFromEnv } from '../expiry/config.js';
import { createVault, type Vault, type VaultOptions } from '../memvault.js';
import { historyFromEnv } from '../vault/history-options.js';
import { cliLogger, ENV, storeUrlFrom, type StoreFlags } from './config.js';

export interface VaultFlags extends StoreFlags {
  auditFile?: string;
  auditCheckpoints?: string;
}

/**
 * The vault a CLI command works on, configured from flags and environment. The S3 client settings
 * (MEMVAULT_S3_*) are read by createVault's store resolver, as for every other command.
 */
export async function openCliVault(flags: VaultFlags, extra: Partial<VaultOptions> = {}): Promise<Vault> {
  const logger = cliLogger();
  const auditFile = flags.auditFile ?? process.env[ENV.auditFile];
  const checkpointFile = flags.auditCheckpoints ?? process.env[ENV.auditCheckpointFile];
  // The same TTL settings as the sweeper (MEMVAULT_TTL_DAYS, MEMVAULT_TTL_CLASSES): a file the
  // sweeper would delete is already absent for the commands; MEMVAULT_TOUCH_INTERVAL_HOURS sets how
  // often a read touches a file (default: a day, or half the shortest TTL).
  const expiry = expiryOptionsFromEnv();
  // File history (docs/versions.md): on by default; MEMVAULT_HISTORY=0 turns it off, MEMVAULT_HISTORY_DAYS
  // and MEMVAULT_HISTORY_VERSIONS set its retention.
  const history = historyFromEnv();
  return createVault({
    store: storeUrlFrom(flags),
    logger,
    // CLI processes run side by side on one audit file (several `memvault exec`): shared mode
    // keeps them on one chain under a lock.
    ...(auditFile ? { audit: { file: auditFile, shared: true, ...(checkpointFile ? { checkpoint: { file: checkpointFile } } : {}) } } : {}),
    ...(expiry ? { expiry } : {}),
    ...(history !== undefined ? { history } : {}),
    ...extra,
  });
}

/** The vault of an existing deployment: for commands that only read, erase or re-wrap (nothing is created). */
export function openExistingVault(flags: VaultFlags): Promise<Vault> {
  return openCliVault(flags, { create: false });
}
