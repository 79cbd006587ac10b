/**
 * The `memvault/s3` entry point: the S3 adapter and the audit trail's Object Lock uploader. Kept
 * apart from the package root so that `import('memvault')` never loads the AWS SDK; `createVault`
 * with an `s3://` store loads this code by itself.
 */
export {
  S3Store,
  parseS3Url,
  buildS3Client,
  s3ConfigFromEnv,
  isS3Client,
  type S3StoreOptions,
  type ConditionChecks,
} from './store/s3.js';
/** createS3Store with its options checked (a misspelt conditionChecks is CONFIG, not a default). */
export { createS3Store } from './entry/s3-functions.js';
export { S3SegmentUploader, type S3SegmentUploaderOptions } from './audit/s3-uploader.js';
