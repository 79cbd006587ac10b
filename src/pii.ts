/**
 * The `memvault/pii` entry point: PII detection and redaction on their own (docs/pii.md), the
 * engine behind VaultOptions' `pii`.
 */
export { redact, scan, PII_TYPES, DEFAULT_PHONE_REGIONS } from './pii/index.js';
export type { PiiType, PiiPolicy, PiiFinding, RedactOptions, RedactResult, ScanResult } from './pii/index.js';
