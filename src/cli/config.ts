import { pino, type Logger } from 'pino';
import { defaultStoreUrl } from '../store/open.js';

/**
 * Configuration shared by every CLI command: flags first, then environment, then defaults.
 * The embedded default store is ./.memvault (created on first use). S3 client settings
 * (MEMVAULT_S3_*) are read by the one resolver of store/s3/settings.ts, for every command alike.
 */
export const ENV = {
  store: 'MEMVAULT_STORE',
  masterKey: 'MEMVAULT_MASTER_KEY',
  auditFile: 'MEMVAULT_AUDIT_FILE',
  auditCheckpointFile: 'MEMVAULT_AUDIT_CHECKPOINT_FILE',
  ttlDays: 'MEMVAULT_TTL_DAYS',
  logLevel: 'MEMVAULT_LOG_LEVEL',
} as const;

export interface StoreFlags {
  store?: string;
}

export function storeUrlFrom(flags: StoreFlags, env: NodeJS.ProcessEnv = process.env): string {
  return flags.store ?? env[ENV.store] ?? defaultStoreUrl();
}

/** Operational logs go to stderr (stdout carries command output), quiet by default. */
export function cliLogger(env: NodeJS.ProcessEnv = process.env): Logger {
  return pino({ level: env[ENV.logLevel] ?? 'warn', base: { app: 'memvault' } }, pino.destination(2));
}
