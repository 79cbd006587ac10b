export {
  DAY_MS,
  DEFAULT_SWEEP_GRACE_MS,
  DEFAULT_TOUCH_INTERVAL_MS,
  DEFAULT_TTL_CLASS,
  resolveTtl,
  TTL_CLASS_TAG_KEY,
  type ExpiryOptions,
  type ResolvedTtl,
  type TtlSettings,
} from './config.js';
export { hiddenAt, idleDays, isDeletable, isHidden } from './decide.js';
export { createExpiryService, ExpiryService } from './access.js';
export {
  s3Deleter,
  storeDeleter,
  type ConditionalDeleter,
  type DeleteMode,
  type DeleteOutcome,
  type ExpiryCandidate,
} from './deleter.js';
export {
  keyHash,
  sweep,
  type SweepDecision,
  type SweepOptions,
  type SweepProgress,
  type SweepSummary,
} from './sweep.js';
export {
  readSweepState,
  SWEEP_STATE_KEY,
  writeSweepState,
  type StoredSweepState,
  type SweepState,
} from './checkpoint.js';
