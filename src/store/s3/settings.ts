import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import type { S3ClientConfigLike, S3ClientLike } from './client-shape.js';
import { s3FromEnv } from '../../config/from-env.js';

/**
 * The one resolver of S3 client settings. openStore, every CLI command (exec, chat, user, keys,
 * audit, expire, doctor) and the sweeper Lambda apply the environment they are handed through it
 * (the variables are in the one table, config/env.ts), so that no command ignores a setting another
 * one honours. Type-only SDK imports: resolving settings never loads the AWS SDK.
 */

/**
 * S3 client settings from the environment: MEMVAULT_S3_ENDPOINT (RGW, MinIO, R2), MEMVAULT_S3_REGION
 * (else AWS_DEFAULT_REGION, which the SDK itself does not read), MEMVAULT_S3_FORCE_PATH_STYLE (1/true
 * or 0/false; path style by default when an endpoint is given, as RGW and MinIO need), and
 * MEMVAULT_S3_ACCESS_KEY_ID with MEMVAULT_S3_SECRET_ACCESS_KEY (both or neither). What is unset is
 * left to the SDK's own chain (AWS_REGION, AWS_ACCESS_KEY_ID, profiles, instance roles). An explicit
 * call (like fromEnv()): the library itself never reads process.env.
 */
export function s3ConfigFromEnv(env: NodeJS.ProcessEnv = process.env): S3ClientConfig {
  return s3FromEnv(env);
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
 * host's config over the settings of `env` when one is handed over (the host's values win, key by key).
 */
export function resolveS3Settings(
  s3: S3ClientLike | S3ClientConfigLike | undefined,
  env?: NodeJS.ProcessEnv,
): S3Client | S3ClientConfig {
  if (s3 !== undefined && isS3Client(s3)) return s3;
  return { ...(env ? s3FromEnv(env) : {}), ...(s3 as S3ClientConfig | undefined) };
}
