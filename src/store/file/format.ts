import { MemvaultError } from '../../errors.js';

/**
 * On-disk layout of one object file:
 *   4 bytes  magic 'MVOB'
 *   1 byte   format version (1)
 *   4 bytes  header length, big-endian
 *   header   UTF-8 JSON: { key, etag, lastModified (ms since epoch), size, metadata, tags }
 *   body     `size` bytes
 * The header records the body size, so a truncated or padded file is detected instead of served.
 */

export interface ObjectHeader {
  key: string;
  etag: string;
  lastModified: number;
  size: number;
  metadata: Record<string, string>;
  tags: Record<string, string>;
}

const MAGIC = Buffer.from('MVOB', 'latin1');
const VERSION = 1;
export const PREAMBLE_BYTES = MAGIC.length + 1 + 4;
/** Headers are small (a key of at most 1,024 bytes and a few metadata fields); refuse absurd ones. */
const MAX_HEADER_BYTES = 1 << 20;

export function corrupt(): MemvaultError {
  return new MemvaultError('STORE_UNAVAILABLE', 'the local store failed: ECORRUPT');
}

export function encodeObject(header: ObjectHeader, body: Uint8Array): Buffer {
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const preamble = Buffer.alloc(PREAMBLE_BYTES);
  MAGIC.copy(preamble, 0);
  preamble.writeUInt8(VERSION, MAGIC.length);
  preamble.writeUInt32BE(json.length, MAGIC.length + 1);
  return Buffer.concat([preamble, json, body]);
}

/** Length of the JSON header announced by a preamble. */
export function headerLength(preamble: Buffer): number {
  if (
    preamble.length < PREAMBLE_BYTES ||
    !preamble.subarray(0, MAGIC.length).equals(MAGIC) ||
    preamble.readUInt8(MAGIC.length) !== VERSION
  ) {
    throw corrupt();
  }
  const length = preamble.readUInt32BE(MAGIC.length + 1);
  if (length > MAX_HEADER_BYTES) throw corrupt();
  return length;
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((v) => typeof v === 'string')
  );
}

/** Parse and check a header; `fileSize` is the size of the whole file it came from. */
export function parseHeader(json: Buffer, fileSize: number): ObjectHeader {
  let value: unknown;
  try {
    value = JSON.parse(json.toString('utf8'));
  } catch {
    throw corrupt();
  }
  const h = value as Partial<ObjectHeader>;
  if (
    typeof h !== 'object' ||
    h === null ||
    typeof h.key !== 'string' ||
    typeof h.etag !== 'string' ||
    typeof h.lastModified !== 'number' ||
    typeof h.size !== 'number' ||
    !isStringRecord(h.metadata) ||
    !isStringRecord(h.tags) ||
    fileSize !== PREAMBLE_BYTES + json.length + h.size
  ) {
    throw corrupt();
  }
  return h as ObjectHeader;
}

/** Split a whole object file into header and body. */
export function decodeObject(file: Buffer): { header: ObjectHeader; body: Buffer } {
  const length = headerLength(file.subarray(0, PREAMBLE_BYTES));
  const header = parseHeader(file.subarray(PREAMBLE_BYTES, PREAMBLE_BYTES + length), file.length);
  return { header, body: file.subarray(PREAMBLE_BYTES + length) };
}
