import { AUDIT_FORMAT_VERSION, AUDIT_MAC_FORMAT_VERSION, isAuditRecordType, type AuditRecord } from './record.js';

export type ParsedLine = { ok: true; record: AuditRecord } | { ok: false; reason: string };

const HASH_PATTERN = /^[0-9a-f]{64}$/;

/**
 * Parses one line into a record and checks the chain fields' shapes. It does not check the hash or
 * the links: that is verify's job; this only says whether the line is a record at all.
 */
export function parseRecordLine(line: string): ParsedLine {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, reason: 'not valid JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, reason: 'not a JSON object' };
  const record = value as Record<string, unknown>;
  if (record.v !== AUDIT_FORMAT_VERSION && record.v !== AUDIT_MAC_FORMAT_VERSION)
    return { ok: false, reason: 'unknown record format version' };
  if (
    record.v === AUDIT_MAC_FORMAT_VERSION
      ? typeof record.mac !== 'string' || !HASH_PATTERN.test(record.mac)
      : record.mac !== undefined
  ) {
    return { ok: false, reason: 'mac is missing or malformed' };
  }
  if (typeof record.seq !== 'number' || !Number.isSafeInteger(record.seq) || record.seq < 1) {
    return { ok: false, reason: 'seq is not a positive integer' };
  }
  if (typeof record.time !== 'string' || Number.isNaN(Date.parse(record.time)))
    return { ok: false, reason: 'time is not a date' };
  if (!isAuditRecordType(record.type)) return { ok: false, reason: 'unknown record type' };
  if (typeof record.instance !== 'string' || record.instance.length === 0)
    return { ok: false, reason: 'instance is missing' };
  if (typeof record.prevHash !== 'string' || !HASH_PATTERN.test(record.prevHash))
    return { ok: false, reason: 'prevHash is malformed' };
  if (typeof record.hash !== 'string' || !HASH_PATTERN.test(record.hash))
    return { ok: false, reason: 'hash is malformed' };
  return { ok: true, record: record as unknown as AuditRecord };
}
