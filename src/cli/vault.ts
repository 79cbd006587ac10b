import { createVault, type Vault, type VaultOptions } from '../memvault.js';
import { cliLogger, ENV, s3ConfigFrom, storeUrlFrom, type StoreFlags } from './config.js';

export interface VaultFlags extends StoreFlags {
  auditFile?: string;
}

/** The vault a CLI command works on, configured from flags and environment. */
export async function openCliVault(flags: VaultFlags, extra: Partial<VaultOptions> = {}): Promise<Vault> {
  const logger = cliLogger();
  const s3 = s3ConfigFrom();
  const auditFile = flags.auditFile ?? process.env[ENV.auditFile];
  return createVault({ store: storeUrlFrom(flags), ...(s3 ? { s3 } : {}), logger, ...(auditFile ? { audit: { file: auditFile } } : {}), ...extra });
}
