/**
 * The package root: what a host needs to give Claude's memory tool a store. `createVault` and the
 * types of its options and results, the errors, the store port and the stores. The middleware
 * chain's parts are in `memvault/chain`, the audit trail's verification in `memvault/verify`, PII
 * detection in `memvault/pii`, the S3 adapter in `memvault/s3` (CHANGELOG.md lists what moved).
 */
export {
  createVault,
  validateUserId,
  type Vault,
  type VaultOptions,
  type VaultLogger,
  type MemoryToolExtraProps,
  type LifecycleOptions,
  type UserExport,
  type ExpireOptions,
} from './memvault.js';
export type {
  ForgetResult,
  ForgetProgress,
  RotationResult,
  RotationProgress,
  KeySourceConfig,
  KeyProvider,
  EncryptionConfig,
} from './crypto/index.js';
export {
  EXPORT_MANIFEST_NAME,
  EXPORT_MANIFEST_FORMAT,
  type ExportManifest,
  type ExportManifestEntry,
  type ExportResult,
  type ExportProgress,
} from './lifecycle/export-archive.js';
export type { SweepSummary, SweepProgress } from './expiry/sweep.js';
export type { ExpiryOptions, TtlSettings } from './expiry/config.js';
// The types VaultOptions and Vault name: `quota`, `pii` and `middlewares`, what `run` takes and
// returns, what `files` gives.
export type { QuotaOptions } from './pipeline/quota.js';
export type { Middleware, CommandResult } from './pipeline/context.js';
export type { UserFiles } from './vault/user-files.js';
export type { TreeFiles } from './vault/tree-files.js';
export type { PiiMiddlewareOptions } from './pipeline/pii-redactor.js';
export type { MemoryCommand, ResultContent } from './tool/types.js';
export { MemvaultError, type ErrorCode } from './errors.js';
// The environment, for hosts that want it (the library never reads process.env by itself): docs/configuration.md.
export { fromEnv, type EnvVaultOptions } from './config/from-env.js';
// The store port (a store of your own implements ObjectStore) and the stores: openStore takes a
// URL (file://, s3://, memory:); the S3 adapter itself is in memvault/s3.
export type {
  ObjectStore,
  ObjectInfo,
  StoredObject,
  PutOptions,
  CopyOptions,
  ListPage,
  ListOptions,
} from './store/port.js';
export { PreconditionFailedError } from './store/port.js';
// Wrapped with their argument checks (src/entry/functions.ts).
export { openStore, openExistingStore } from './entry/functions.js';
export { MemoryStore } from './store/memory.js';
export { FileStore } from './store/file.js';
