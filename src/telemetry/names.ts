/**
 * Every metric, span and attribute name memvault emits, in one place (docs/observability.md lists
 * them with their units). Attribute values are drawn from small fixed sets (command names, error
 * codes, request types, PII types, quota limits): never a user id, a path, a key or content, and a
 * value outside its set is reported as 'unknown' / 'OTHER' rather than passed through.
 *
 * A leaf module: the store, crypto and vault layers call into src/telemetry, so it imports nothing
 * of memvault's upper layers. The value sets below restate the six command names, the PII types
 * and the audit record types; test/telemetry/names.test.ts holds them equal to their sources.
 */
/** Instrumentation scope of the meter and the tracer. */
export const INSTRUMENTATION_SCOPE = 'memvault';

export const METRICS = {
  /** Counter {command}: commands by command, outcome and error code. */
  commands: 'memvault.commands',
  /** Histogram s: command duration, from the user id to the result (key load included). */
  commandDuration: 'memvault.command.duration',
  /** Counter {request}: requests to the backend by request type and the status of the store operation they served. */
  storeRequests: 'memvault.store.requests',
  /** Histogram s: store operation duration by operation and status. */
  storeDuration: 'memvault.store.duration',
  /** Counter {conflict}: conditional store writes refused because the object changed (or exists). */
  writeConflicts: 'memvault.write.conflicts',
  /** Counter {retry}: read-modify-write attempts re-run after a conflict. */
  writeRetries: 'memvault.write.retries',
  /** Counter {refusal}: writes the quota refused, by limit. */
  quotaRefusals: 'memvault.quota.refusals',
  /** Counter {finding}: PII found in text to be written, by type and the policy action taken. */
  piiFindings: 'memvault.pii.findings',
  /** Counter {record}: audit records written (or failed), by record type. */
  auditRecords: 'memvault.audit.records',
  /** Histogram s: time to hand one audit record to its sink. */
  auditWriteDuration: 'memvault.audit.write.duration',
  /** Counter {run}: sweeper runs by mode and outcome. */
  sweeperRuns: 'memvault.sweeper.runs',
  /** Counter {object}: files the sweeper looked at. */
  sweeperScanned: 'memvault.sweeper.objects.scanned',
  /** Counter {object}: files the sweeper deleted (never counted in a dry run). */
  sweeperDeleted: 'memvault.sweeper.objects.deleted',
  /** Counter {lookup}: user-key cache lookups, hit or miss. */
  keyCacheLookups: 'memvault.key_cache.lookups',
  /** Counter {object}: objects under a user's prefix that listings skipped (not one of the user's files), by reason. */
  listingSkipped: 'memvault.listing.skipped',
} as const;

export const SPANS = {
  command: 'memvault.command',
  /** `memvault.stage.<stage>`, one per middleware of the chain, and `memvault.stage.execute` for the commands. */
  stagePrefix: 'memvault.stage.',
  /** `memvault.store.<operation>`, one per store call. */
  storePrefix: 'memvault.store.',
  sweep: 'memvault.sweep',
} as const;

export const ATTRS = {
  command: 'memvault.command',
  outcome: 'memvault.outcome',
  errorCode: 'memvault.error.code',
  stage: 'memvault.stage',
  stagePosition: 'memvault.stage.position',
  storeKind: 'memvault.store.kind',
  storeOperation: 'memvault.store.operation',
  storeRequest: 'memvault.store.request',
  storeStatus: 'memvault.store.status',
  retryLoop: 'memvault.retry.loop',
  quotaLimit: 'memvault.quota.limit',
  piiType: 'memvault.pii.type',
  piiAction: 'memvault.pii.action',
  auditRecordType: 'memvault.audit.record_type',
  auditStatus: 'memvault.audit.status',
  sweepMode: 'memvault.sweeper.mode',
  keyCacheResult: 'memvault.key_cache.result',
  listingSkipReason: 'memvault.listing.skip_reason',
} as const;

export type Outcome = 'ok' | 'error';
export type StoreOperation = 'get' | 'head' | 'put' | 'list' | 'copy' | 'delete' | 'delete_many';
export type StoreStatus = 'ok' | 'not_found' | 'precondition_failed' | 'unavailable' | 'error';
/** Why a listing skipped an object: an S3-console folder marker, or a name that does not open under the user's key. */
export type ListingSkipReason = 'folder_marker' | 'not_decryptable';
/** Where a conflict was retried: the edit loop (str_replace, insert), a rename's source delete, a create over an expired file. */
export type RetryLoop = 'edit' | 'rename' | 'expired_replace' | 'overwrite';

/** src/tool/types.ts COMMAND_NAMES. */
export const COMMAND_VALUES = ['view', 'create', 'str_replace', 'insert', 'delete', 'rename'] as const;
/** src/pii/types.ts PII_TYPES. */
export const PII_TYPE_VALUES = ['EMAIL', 'PHONE', 'CREDIT_CARD', 'IBAN', 'US_SSN', 'IP_ADDRESS', 'SECRET'] as const;
/** src/audit/record.ts AUDIT_RECORD_TYPES. */
export const AUDIT_RECORD_TYPE_VALUES = [
  'start',
  'seal',
  'command',
  'expire',
  'erase',
  'export',
  'rotate',
  'rekey',
  'history',
  'restore',
  'migrate',
  'pause',
] as const;

const COMMANDS: ReadonlySet<string> = new Set(COMMAND_VALUES);
const CODE = /^[A-Z][A-Z_]{0,31}$/;
const REQUEST_TYPE = /^[A-Z][A-Z_]{0,23}$/;
const QUOTA_LIMITS = new Set([
  'file_bytes',
  'user_bytes',
  'user_files',
  'history_bytes',
  'history_versions',
  'view_chars',
]);
const PII_TYPE_SET: ReadonlySet<string> = new Set(PII_TYPE_VALUES);
const AUDIT_RECORD_TYPE_SET: ReadonlySet<string> = new Set(AUDIT_RECORD_TYPE_VALUES);

/** One of the six commands, else 'unknown' (the model may send anything as a command name). */
export function boundedCommand(value: unknown): string {
  return typeof value === 'string' && COMMANDS.has(value) ? value : 'unknown';
}

/** An error code (upper-case identifier, as in src/errors.ts), else 'UNSPECIFIED'. */
export function boundedCode(value: unknown): string {
  return typeof value === 'string' && CODE.test(value) ? value : 'UNSPECIFIED';
}

/** A request type as the adapters count it (GET, PUT, ...); operations they name otherwise are 'OTHER'. */
export function boundedRequestType(value: string): string {
  return REQUEST_TYPE.test(value) ? value : 'OTHER';
}

export function boundedQuotaLimit(value: unknown): string | undefined {
  return typeof value === 'string' && QUOTA_LIMITS.has(value) ? value : undefined;
}

export function isPiiType(value: string): boolean {
  return PII_TYPE_SET.has(value);
}

export function boundedAuditRecordType(value: unknown): string {
  return typeof value === 'string' && AUDIT_RECORD_TYPE_SET.has(value) ? value : 'other';
}
