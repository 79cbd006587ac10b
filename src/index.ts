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
  ExportResult,
  ExportProgress,
  RotationResult,
  RotationProgress,
  KeySourceConfig,
  KeyProvider,
} from './crypto/index.js';
export { EXPORT_MANIFEST_NAME, EXPORT_MANIFEST_FORMAT, type ExportManifest, type ExportManifestEntry } from './crypto/operations.js';
export type { SweepSummary, SweepProgress } from './expiry/sweep.js';
// Wrapped with their argument checks (src/entry/functions.ts).
export { openStore, openExistingStore, verifyChains, quota, piiRedactor } from './entry/functions.js';
export { collectFileChains, collectStoreChains, type VerifyReport, type VerifyOptions, type ChainWitness } from './audit/index.js';
export { readCheckpointFile } from './audit/checkpoints.js';
export { MemvaultError, type ErrorCode } from './errors.js';
export type { ObjectStore, ObjectInfo, StoredObject, PutOptions, CopyOptions, ListPage, ListOptions } from './store/port.js';
export { PreconditionFailedError, listAll } from './store/port.js';
export { MemoryStore } from './store/memory.js';
export type { Middleware, CommandContext, CommandResult, CommandStats, Next } from './pipeline/context.js';
export { canonicalizePath } from './pipeline/path-guard.js';
export type { MemoryCommand, ResultContent } from './tool/types.js';
export type { CodecProvider, UserCodec } from './crypto/user-codec.js';
export type { UserFiles } from './vault/user-files.js';
export { redact, scan, PII_TYPES, DEFAULT_PHONE_REGIONS } from './pii/index.js';
export type { PiiType, PiiPolicy, PiiFinding, RedactOptions, RedactResult, ScanResult } from './pii/index.js';
export { redactForLog, type PiiMiddlewareOptions } from './pipeline/pii-redactor.js';
export { createAuditLogger, type AuditLogger, type AuditOptions } from './pipeline/audit-logger.js';
export type { EncryptionConfig } from './crypto/index.js';
export { FileStore } from './store/file.js';
export { compose, defaultChain, DEFAULT_QUOTA, type QuotaOptions, type ChainOptions } from './pipeline/index.js';
export type { ExpiryOptions, TtlSettings } from './expiry/config.js';
