export { scan, redact, placeholder, countByType, detectAll, resolveOverlaps } from './engine.js';
export { DEFAULT_PHONE_REGIONS } from './detectors/phone.js';
export { PII_TYPES } from './types.js';
export type {
  PiiType,
  PiiPolicy,
  PiiFinding,
  PhoneRegion,
  RedactOptions,
  RedactResult,
  ScanResult,
  Candidate,
} from './types.js';
