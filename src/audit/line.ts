/**
 * Line encoding: the one serialisation of an audit record. The line written is the canonical JSON
 * that is hashed (chain.ts), byte for byte, with `hash` (and in format 2 `mac`) added as its last
 * fields, and a newline:
 *
 *   {<canonical fields, sorted>,"hash":"<64 hex>","mac":"<64 hex>"}\n
 *
 * So what is on disk is exactly what was hashed and MACed (no second serialiser that might escape
 * a character differently), every writing mode (one process, shared file, stdout) writes the same
 * bytes, and a segment's size is the sum of its lines' byte lengths, known before the write. The
 * verifier parses the line and re-canonicalises, which gives back the same canonical text.
 */
import { auditMac, canonicalJson, hashCanonical } from './chain.js';
import type { AuditFormatVersion, AuditRecord } from './record.js';

/** A record before its hash: every field the hash covers. */
export type UnhashedRecord = Omit<AuditRecord, 'hash' | 'mac'>;

export interface EncodedRecord {
  /** The record as written (its fields as the line holds them). */
  readonly record: AuditRecord;
  /** The line, newline included. */
  readonly line: string;
  /** The line's length in bytes (UTF-8). */
  readonly bytes: number;
}

export function encodeRecord(unhashed: UnhashedRecord, macKey: Uint8Array | undefined): EncodedRecord {
  const canonical = canonicalJson(unhashed);
  const hash = hashCanonical(canonical);
  const mac = macKey ? auditMac(macKey, 'record', hash) : undefined;
  return { record: { ...unhashed, hash, ...(mac ? { mac } : {}) }, ...withTrailingFields(canonical, { hash, mac }) };
}

export interface ChainHeadWitness {
  instance: string;
  seq: number;
  hash: string;
  time: string;
}

/**
 * A checkpoint line (the tail witness): `v`, `type` and the head, and in format 2 a MAC over the
 * head's canonical JSON. Written in the same form as records: the canonical text, `mac` last.
 */
export function encodeCheckpoint(
  version: AuditFormatVersion,
  head: ChainHeadWitness,
  macKey: Uint8Array | undefined,
): string {
  const mac = macKey ? auditMac(macKey, 'checkpoint', canonicalJson(head)) : undefined;
  return withTrailingFields(canonicalJson({ v: version, type: 'checkpoint', ...head }), { mac }).line;
}

/** The canonical object text with fields appended before its closing brace (canonical objects are never empty here). */
function withTrailingFields(
  canonical: string,
  fields: Record<string, string | undefined>,
): { line: string; bytes: number } {
  let tail = '';
  for (const [name, value] of Object.entries(fields))
    if (value !== undefined) tail += `,${JSON.stringify(name)}:${JSON.stringify(value)}`;
  const line = `${canonical.slice(0, -1)}${tail}}\n`;
  return { line, bytes: Buffer.byteLength(line) };
}
