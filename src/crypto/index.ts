/** The crypto layer's public surface (what src/index.ts, src/vault and src/cli import). */
export { loadSodium } from './sodium.js';
export type { KeyProvider, WrapContext, GeneratedDataKey, KeyRecord } from './key-provider.js';
export { createLocalKeyProvider, loadOrCreateLocalMasterKey, readMasterKeyFile, parseMasterKey } from './local-key.js';
export { createKmsKeyProvider, type KmsKeyProviderOptions } from './kms-key.js';
export {
  createEncryptedCodecProvider,
  DEPLOYMENT_MISSING_MESSAGE,
  type EncryptedCodecOptions,
  type EncryptedCodecProvider,
  MAX_STORE_KEY_BYTES,
} from './codec.js';
export type { KeyCacheOptions } from './key-cache.js';
export {
  KEYS_PREFIX,
  DEPLOYMENT_RECORD_KEY,
  userKeyKey,
  userPrefix,
  userFilesPrefix,
  listUsers,
  iterateUsers,
  isUid,
  firstDeploymentDataKey,
} from './layout.js';
export {
  rotateKeys,
  verifyKeys,
  type VerifyKeysOptions,
  type VerifyKeysResult,
  type KeyRecordFailure,
  forgetUser,
  forgetUid,
  type RotateKeysOptions,
  type RotationProgress,
  type RotationResult,
  type ForgetUserOptions,
  type ForgetProgress,
  type ForgetResult,
} from './operations.js';
export {
  createEncryptionFromConfig,
  keyProviderFromConfig,
  previousKeyProvidersFromConfig,
  type EncryptionConfig,
  type KeySourceConfig,
  type KmsConfig,
  type Encryption,
  type ResolvedKeyProvider,
} from './config.js';
export { CONTENT_OVERHEAD } from './format.js';
export {
  rekeyUid,
  rekeyAll,
  DEFAULT_REKEY_SETTLE_MS,
  type RekeyOptions,
  type RekeyAccess,
  type RekeyProgress,
  type RekeyUserResult,
  type RekeyAllResult,
} from './rekey.js';
