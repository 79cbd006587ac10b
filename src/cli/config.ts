import { pino, type Logger } from 'pino';
import { defaultStoreUrl } from '../store/open.js';
import { MemvaultError } from '../errors.js';

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

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * Operational logs go to stderr (stdout carries command output), quiet by default. An unknown
 * MEMVAULT_LOG_LEVEL is a CONFIG error (pino would throw its own, with a stack trace).
 */
export function cliLogger(env: NodeJS.ProcessEnv = process.env): Logger {
  const raw = env[ENV.logLevel]?.trim().toLowerCase();
  const level = raw === undefined || raw === '' ? 'warn' : raw;
  if (!(LOG_LEVELS as readonly string[]).includes(level))
    throw new MemvaultError('CONFIG', `memvault: ${ENV.logLevel} must be one of ${LOG_LEVELS.join(', ')} (got '${raw?.slice(0, 32)}')`);
  return pino({ level, base: { app: 'memvault' } }, pino.destination(2));
}
