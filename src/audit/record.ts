import { COMMAND_NAMES, type CommandName } from '../tool/types.js';
import { AUDIT_RECORD_TYPE_VALUES } from '../telemetry/names.js';

/**
 * The audit record and its allow-list. Every field that reaches a record passes one of the
 * sanitisers below: a field not listed here cannot be written, and a value of the wrong shape is
 * dropped rather than copied. That is how "never file content, never raw PII, never key material"
 * is enforced: not by hoping callers leave such things out, but by accepting only counts, flags,
 * short enum-like strings, ids of a fixed form, and paths that the caller has already redacted.
 */

/**
 * 1: hash-chained records. 2: hash-chained records that also carry `mac`, an HMAC of their hash
 * under the deployment's audit key (docs/audit.md, "Authenticated records").
 */
export const AUDIT_FORMAT_VERSION = 1;
export const AUDIT_MAC_FORMAT_VERSION = 2;
export type AuditFormatVersion = typeof AUDIT_FORMAT_VERSION | typeof AUDIT_MAC_FORMAT_VERSION;

/**
 * `start` (writer opened) and `seal` (segment closed) are written by the writer itself; the others
 * come from services: the audit middleware (`command`), the expiry sweeper (`expire`), user erasure
 * (`erase`), user export (`export`), key rotation (`rotate`), data-key replacement (`rekey`), a user's
 * history read (`history`), a restore or a dropped version (`restore`; docs/versions.md) and a
 * copy of the deployment to another store (`migrate`; docs/stores.md).
 */
// One list: telemetry (a leaf every layer may import) names the same types as metric attribute values.
export const AUDIT_RECORD_TYPES = AUDIT_RECORD_TYPE_VALUES;
export type AuditRecordType = (typeof AUDIT_RECORD_TYPES)[number];
export type ServiceRecordType = Exclude<AuditRecordType, 'start' | 'seal'>;

export type AuditOutcome = 'ok' | 'error';
export type AuditCommandName = CommandName | 'unknown';

/** A decision value after sanitising: numbers, booleans, enum-like strings, and nestings of them. */
export type DecisionValue = number | boolean | string | DecisionValue[] | { [key: string]: DecisionValue };

export interface SegmentSummary {
  /** The sealed segment's number (the NNNNNN in PATH.NNNNNN.sealed.jsonl). */
  index: number;
  /** seq of the segment's first record. */
  firstSeq: number;
  /** Records in the segment before the seal record. */
  records: number;
}

/** Fields a caller may supply; the writer adds the chain fields. */
export interface AuditEntry {
  type: ServiceRecordType;
  requestId?: string;
  /** Pseudonymous user id (keyed hash). */
  uid?: string;
  /** Raw user id: kept only when the writer is configured with `includeUserId`. */
  userId?: string;
  command?: AuditCommandName;
  /** Canonical path, already passed through the PII redactor. */
  path?: string;
  newPath?: string;
  outcome?: AuditOutcome;
  code?: string;
  bytesRead?: number;
  bytesWritten?: number;
  requests?: Record<string, number>;
  latencyMs?: number;
  decisions?: Record<string, DecisionValue>;
  /** Service counters, e.g. { objects: 12, bytes: 40960 } for a sweep or an erasure. */
  counts?: Record<string, number>;
  /** Who asked for a lifecycle operation (an operator or ticket id of the form [A-Za-z0-9._:-]{1,128}). */
  actor?: string;
}

export interface AuditRecord extends Omit<AuditEntry, 'type'> {
  v: AuditFormatVersion;
  seq: number;
  time: string;
  type: AuditRecordType;
  instance: string;
  prevHash: string;
  /** seal records: what the segment holds. */
  segment?: SegmentSummary;
  /** Bytes of a torn last line that were cut off: the start record after a crash, or a shared-mode record. */
  recovered?: { discardedBytes: number };
  hash: string;
  /** v2: HMAC-SHA256 of `hash` under the audit key (hex). */
  mac?: string;
}

const ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
const INSTANCE_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
const CODE_PATTERN = /^[A-Z][A-Z0-9_]{0,39}$/;
const REQUEST_TYPE_PATTERN = /^[A-Z][A-Z0-9_]{0,31}$/;
const KEY_PATTERN = /^[A-Za-z][A-Za-z0-9_]{0,39}$/;
/**
 * Enum-like strings only: one lowercase or UPPER_CASE word, letters with '_' or '-', at most 32
 * characters. No digits (runs of digits are what phone numbers, IBANs and card numbers are made
 * of), no spaces, dots or '@' (sentences, file names, e-mail addresses).
 */
const ENUM_STRING_PATTERN = /^(?:[a-z][a-z_-]{0,31}|[A-Z][A-Z_]{0,31})$/;
const MAX_PATH_LENGTH = 1024;
import { MAX_USER_ID_LENGTH } from '../store/layout.js';
const MAX_DECISION_DEPTH = 3;
const MAX_DECISION_KEYS = 32;
const MAX_DECISION_ARRAY = 16;

export function isValidInstanceId(id: string): boolean {
  return INSTANCE_PATTERN.test(id);
}

export function isAuditRecordType(value: unknown): value is AuditRecordType {
  return typeof value === 'string' && (AUDIT_RECORD_TYPES as readonly string[]).includes(value);
}

export function knownCommandName(value: unknown): AuditCommandName {
  return typeof value === 'string' && (COMMAND_NAMES as readonly string[]).includes(value)
    ? (value as CommandName)
    : 'unknown';
}

function nonNegativeNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

function counterMap(value: unknown, keyPattern: RegExp): Record<string, number> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const out: Record<string, number> = {};
  for (const [key, raw] of Object.entries(value as Record<string, unknown>)) {
    const n = nonNegativeNumber(raw);
    if (n !== undefined && keyPattern.test(key)) out[key] = n;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Paths are logged after the caller's redaction; here only their shape is bounded. */
function boundedPath(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0) return undefined;
  // Control characters could forge line structure in naive viewers; JSON escapes them, but a
  // canonical path never holds one, so their presence means the value is not what we think it is.
  if (/[\u0000-\u001f\u007f]/.test(value)) return undefined;
  return value.length > MAX_PATH_LENGTH ? `${value.slice(0, MAX_PATH_LENGTH)}…` : value;
}

function decisionValue(value: unknown, depth: number): DecisionValue | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string') return ENUM_STRING_PATTERN.test(value) ? value : undefined;
  if (depth >= MAX_DECISION_DEPTH || typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    const items = value
      .slice(0, MAX_DECISION_ARRAY)
      .map((item) => decisionValue(item, depth + 1))
      .filter((item): item is DecisionValue => item !== undefined);
    return items;
  }
  return decisionMap(value, depth + 1);
}

function decisionMap(value: object, depth: number): Record<string, DecisionValue> | undefined {
  const out: Record<string, DecisionValue> = {};
  let kept = 0;
  for (const [key, raw] of Object.entries(value as Record<string, unknown>)) {
    if (kept >= MAX_DECISION_KEYS) break;
    if (!KEY_PATTERN.test(key)) continue;
    const clean = decisionValue(raw, depth);
    if (clean === undefined) continue;
    out[key] = clean;
    kept++;
  }
  return kept > 0 ? out : undefined;
}

/**
 * Middleware decisions reduced to numbers, booleans and enum-like strings (e.g.
 * `{ pii: { action: 'redacted', findings: { email: 2 } }, quota: { blocked: true } }`). Free text,
 * long strings, strings with spaces, dots or '@', and anything nested deeper than three levels are
 * dropped. This is a second line of defence: middlewares must not put data in decisions at all.
 */
export function sanitizeDecisions(value: unknown): Record<string, DecisionValue> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return decisionMap(value, 0);
}

/** The allow-list: copies only known fields of known shapes out of an entry. */
export function sanitizeEntry(entry: AuditEntry, options: { includeUserId: boolean }): Omit<AuditEntry, 'type'> {
  const out: Omit<AuditEntry, 'type'> = {};
  if (typeof entry.requestId === 'string' && ID_PATTERN.test(entry.requestId)) out.requestId = entry.requestId;
  if (typeof entry.uid === 'string' && ID_PATTERN.test(entry.uid)) out.uid = entry.uid;
  if (typeof entry.actor === 'string' && ID_PATTERN.test(entry.actor)) out.actor = entry.actor;
  if (options.includeUserId && typeof entry.userId === 'string' && entry.userId.length > 0) {
    out.userId = entry.userId.slice(0, MAX_USER_ID_LENGTH);
  }
  if (entry.command !== undefined) out.command = knownCommandName(entry.command);
  const path = boundedPath(entry.path);
  if (path !== undefined) out.path = path;
  const newPath = boundedPath(entry.newPath);
  if (newPath !== undefined) out.newPath = newPath;
  if (entry.outcome === 'ok' || entry.outcome === 'error') out.outcome = entry.outcome;
  if (typeof entry.code === 'string' && CODE_PATTERN.test(entry.code)) out.code = entry.code;
  const bytesRead = nonNegativeNumber(entry.bytesRead);
  if (bytesRead !== undefined) out.bytesRead = bytesRead;
  const bytesWritten = nonNegativeNumber(entry.bytesWritten);
  if (bytesWritten !== undefined) out.bytesWritten = bytesWritten;
  const requests = counterMap(entry.requests, REQUEST_TYPE_PATTERN);
  if (requests !== undefined) out.requests = requests;
  const latencyMs = nonNegativeNumber(entry.latencyMs);
  if (latencyMs !== undefined) out.latencyMs = latencyMs;
  const decisions = sanitizeDecisions(entry.decisions);
  if (decisions !== undefined) out.decisions = decisions;
  const counts = counterMap(entry.counts, KEY_PATTERN);
  if (counts !== undefined) out.counts = counts;
  return out;
}
