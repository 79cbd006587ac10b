export {
  AuditWriter,
  AuditWriteError,
  DEFAULT_MAX_SEGMENT_BYTES,
  type AuditWriterOptions,
  type AuditUploadOptions,
} from './writer.js';
export type {
  AuditEntry,
  AuditRecord,
  AuditRecordType,
  ServiceRecordType,
  AuditOutcome,
  DecisionValue,
  SegmentSummary,
} from './record.js';
export {
  ObjectStoreSegmentUploader,
  segmentKey,
  parseSegmentKey,
  type SegmentUploader,
  type ObjectLockRetention,
  type SegmentRetention,
} from './uploader.js';
export { collectFileChains, collectStoreChains, type InstanceChain, type CollectedChains } from './sources.js';
export {
  verifyChains,
  verifyChain,
  type VerifyReport,
  type VerifyFailure,
  type ChainSummary,
  type VerifyOptions,
  type ChainWitness,
} from './verify.js';
export { exportRecords, type ExportOptions, type ExportSummary, type ExportFormat } from './export.js';
export { auditPseudonymsFromKey, auditPseudonymsOf, type AuditPseudonyms } from './pseudonyms.js';
