export {
  MemvaultStorage,
  TTL_CLASS_TAG_KEY,
  KEY_RECORD_NONCURRENT_DAYS,
  type AuditRetentionMode,
  type KeyPolicyMode,
  type MemoryBucketEncryption,
  type MemvaultFargateSweeperProps,
  type MemvaultLambdaSweeperProps,
  type MemvaultStorageProps,
  type MemvaultSweeperProps,
} from './memvault-storage.js';
export { MemvaultStack, type MemvaultStackProps } from './memvault-stack.js';
export { buildMemvaultApp, type BuildMemvaultAppOptions, type MemvaultApp } from './build-app.js';
