import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { MemvaultError } from '../../errors.js';

/**
 * The one resolver of S3 client settings. createVault, openStore, every CLI command (exec, chat,
 * user, keys, audit, expire, doctor) and the sweeper Lambda read the same variables through it, so
 * that no command ignores a setting another one honours. Type-only SDK imports: resolving settings
 * never loads the AWS SDK.
 */
export const S3_ENV = {
  endpoint: 'MEMVAULT_S3_ENDPOINT',
  region: 'MEMVAULT_S3_REGION',
  forcePathStyle: 'MEMVAULT_S3_FORCE_PATH_STYLE',
  accessKeyId: 'MEMVAULT_S3_ACCESS_KEY_ID',
  secretAccessKey: 'MEMVAULT_S3_SECRET_ACCESS_KEY',
} as const;

const TRUE_WORDS = new Set(['1', 'true', 'yes']);
const FALSE_WORDS = new Set(['0', 'false', 'no']);

/**
 * S3 client settings from the environment: MEMVAULT_S3_ENDPOINT (RGW, MinIO, R2), MEMVAULT_S3_REGION
 * (else AWS_DEFAULT_REGION, which the SDK itself does not read), MEMVAULT_S3_FORCE_PATH_STYLE (1/true
 * or 0/false; path style by default when an endpoint is given, as RGW and MinIO need), and
 * MEMVAULT_S3_ACCESS_KEY_ID with MEMVAULT_S3_SECRET_ACCESS_KEY (both or neither). What is unset is
 * left to the SDK's own chain (AWS_REGION, AWS_ACCESS_KEY_ID, profiles, instance roles).
 */
export function s3ConfigFromEnv(env: NodeJS.ProcessEnv = process.env): S3ClientConfig {
  const config: S3ClientConfig = {};
  const endpoint = env[S3_ENV.endpoint];
  if (endpoint) config.endpoint = endpoint;
  const region = env[S3_ENV.region] || (env['AWS_REGION'] ? undefined : env['AWS_DEFAULT_REGION']);
  if (region) config.region = region;
  const pathStyle = env[S3_ENV.forcePathStyle]?.trim().toLowerCase();
  if (pathStyle !== undefined && pathStyle !== '') {
    if (TRUE_WORDS.has(pathStyle)) config.forcePathStyle = true;
    else if (FALSE_WORDS.has(pathStyle)) config.forcePathStyle = false;
    else throw new MemvaultError('CONFIG', `${S3_ENV.forcePathStyle} must be 1/true or 0/false`);
  } else if (endpoint) {
    config.forcePathStyle = true;
  }
  const accessKeyId = env[S3_ENV.accessKeyId];
  const secretAccessKey = env[S3_ENV.secretAccessKey];
  if (accessKeyId && secretAccessKey) config.credentials = { accessKeyId, secretAccessKey };
  else if (accessKeyId || secretAccessKey) {
    throw new MemvaultError('CONFIG', `${S3_ENV.accessKeyId} and ${S3_ENV.secretAccessKey} must be set together`);
  }
  return config;
}

/**
 * An S3Client, recognised by its shape rather than by `instanceof`: the app's client may come from
 * another copy of @aws-sdk/client-s3 than the one this module resolves (a neighbouring version),
 * and it must still be the one that sends, with its credentials, region, middleware and retries.
 */
export function isS3Client(value: unknown): value is S3Client {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as { send?: unknown; middlewareStack?: { add?: unknown }; config?: unknown };
  return (
    typeof candidate.send === 'function' &&
    typeof candidate.middlewareStack?.add === 'function' &&
    typeof candidate.config === 'object' &&
    candidate.config !== null
  );
}

/**
 * What an S3 store is built with: the host's own client as it is (it carries its settings), else the
 * environment's settings under the host's config (the host's values win, key by key).
 */
export function resolveS3Settings(s3: S3Client | S3ClientConfig | undefined, env: NodeJS.ProcessEnv = process.env): S3Client | S3ClientConfig {
  if (s3 !== undefined && isS3Client(s3)) return s3;
  return { ...s3ConfigFromEnv(env), ...s3 };
}
