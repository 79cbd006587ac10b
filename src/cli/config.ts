import { pino, type Logger } from 'pino';
import { defaultStoreUrl } from '../store/open.js';

/**
 * Configuration shared by every CLI command: flags first, then environment, then defaults.
 * The embedded default store is ./.memvault (created on first use).
 */
export const ENV = {
  store: 'MEMVAULT_STORE',
  masterKey: 'MEMVAULT_MASTER_KEY',
  auditFile: 'MEMVAULT_AUDIT_FILE',
  auditCheckpointFile: 'MEMVAULT_AUDIT_CHECKPOINT_FILE',
  ttlDays: 'MEMVAULT_TTL_DAYS',
  logLevel: 'MEMVAULT_LOG_LEVEL',
  s3Endpoint: 'MEMVAULT_S3_ENDPOINT',
  s3Region: 'MEMVAULT_S3_REGION',
  s3ForcePathStyle: 'MEMVAULT_S3_FORCE_PATH_STYLE',
} as const;

export interface StoreFlags {
  store?: string;
}

export function storeUrlFrom(flags: StoreFlags, env: NodeJS.ProcessEnv = process.env): string {
  return flags.store ?? env[ENV.store] ?? defaultStoreUrl();
}

/**
 * S3 client settings from the environment, for s3:// stores. Credentials and region come from the
 * AWS SDK's default chain (AWS_ACCESS_KEY_ID, AWS_PROFILE, instance roles...) unless overridden;
 * MEMVAULT_S3_ENDPOINT points at RGW, MinIO or R2.
 */
export function s3ConfigFrom(env: NodeJS.ProcessEnv = process.env): Record<string, unknown> | undefined {
  const endpoint = env[ENV.s3Endpoint];
  const region = env[ENV.s3Region] ?? env['AWS_REGION'] ?? env['AWS_DEFAULT_REGION'];
  const forcePathStyle = env[ENV.s3ForcePathStyle];
  if (!endpoint && !region && forcePathStyle === undefined) return undefined;
  return {
    ...(endpoint ? { endpoint } : {}),
    region: region ?? 'us-east-1',
    ...(forcePathStyle !== undefined ? { forcePathStyle: forcePathStyle === '1' || forcePathStyle === 'true' } : endpoint ? { forcePathStyle: true } : {}),
  };
}

/** Operational logs go to stderr (stdout carries command output), quiet by default. */
export function cliLogger(env: NodeJS.ProcessEnv = process.env): Logger {
  return pino({ level: env[ENV.logLevel] ?? 'warn', base: { app: 'memvault' } }, pino.destination(2));
}
