import { MAX_STORE_KEY_BYTES } from '../layout.js';
import { MemvaultError } from '../../errors.js';

/**
 * Object key <-> relative file path for the file store.
 *
 * Any S3-legal key (1 to 1,024 bytes of UTF-8, any characters) must map to a path that stays under
 * the root and is a legal name on Linux, macOS and Windows, including case-insensitive file systems.
 * Each '/'-separated segment is escaped byte by byte: [a-z0-9_.-] stay, every other byte becomes
 * `%XX` with upper-case hex. Upper-case letters are escaped too, so that two keys differing only in
 * case never meet on a case-insensitive disk (raw letters are always lower case and escape digits
 * always upper case, so case folding cannot merge two encodings). Further rules:
 * - a trailing '.' is escaped (Windows strips it; it also rules out the names '.' and '..');
 * - an empty segment (`a//b`, a trailing '/') is written as a lone '%', which no escape produces;
 * - a component that would be a Windows device name (con, nul, com1, ...) gets its first letter escaped;
 * - an escaped segment longer than PIECE_CHARS is cut (between escapes) into pieces, each but the last
 *   stored as a directory whose name ends with '+' ("continues in the next component").
 * The final component of an object is its last piece followed by '~'. Escaping never emits '~' or
 * '+', so the object file of `a` (`a~`), the directory of `a/b` (`a`) and a continuation (`a+`) are
 * three different names. Names with a '~' before their end (`a~lock`, `a~tmp.<pid>.<rand>`) belong to
 * the store's own lock and temp files and are never objects.
 */

export const OBJECT_SUFFIX = '~';
export const CONTINUATION_SUFFIX = '+';
const EMPTY_SEGMENT = '%';
/** Longest piece of an escaped segment; leaves room for suffixes and temp-file tails under 255 bytes. */
export const PIECE_CHARS = 160;
/** S3's key limit, from the one layout module. */
export const MAX_KEY_BYTES = MAX_STORE_KEY_BYTES;

const RAW = /^[a-z0-9_.-]$/;
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\.|$)/;

function escapeByte(byte: number): string {
  return `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
}

/** The escape tokens of one segment: single raw characters or `%XX` triplets. */
function escapeSegment(segment: string): string[] {
  const bytes = Buffer.from(segment, 'utf8');
  const tokens: string[] = [];
  for (let i = 0; i < bytes.length; i += 1) {
    const byte = bytes[i]!;
    const char = String.fromCharCode(byte);
    const isLast = i === bytes.length - 1;
    tokens.push(byte < 0x80 && RAW.test(char) && !(isLast && char === '.') ? char : escapeByte(byte));
  }
  return tokens;
}

function avoidDeviceName(piece: string): string {
  return WINDOWS_DEVICE.test(piece) ? escapeByte(piece.charCodeAt(0)) + piece.slice(1) : piece;
}

/** File-system components of one segment; the last one carries no suffix yet. */
function segmentComponents(segment: string): string[] {
  if (segment === '') return [EMPTY_SEGMENT];
  const pieces: string[] = [];
  let current = '';
  for (const token of escapeSegment(segment)) {
    if (current.length + token.length > PIECE_CHARS) {
      pieces.push(current);
      current = '';
    }
    current += token;
  }
  pieces.push(current);
  return pieces.map((piece, i) => avoidDeviceName(piece) + (i < pieces.length - 1 ? CONTINUATION_SUFFIX : ''));
}

/** Throws unless `key` is a key S3 would accept and that round-trips through UTF-8. */
export function assertValidKey(key: string): void {
  if (
    typeof key !== 'string' ||
    key.length === 0 ||
    Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES ||
    !isWellFormed(key)
  ) {
    throw new MemvaultError('INVALID_INPUT', 'object key is empty, longer than 1,024 bytes or not valid UTF-8');
  }
}

export function isWellFormed(text: string): boolean {
  // A lone surrogate would be replaced by U+FFFD when encoded, so two keys could share one file.
  return Buffer.from(text, 'utf8').toString('utf8') === text;
}

/** Relative path components of an object's data file; the last one ends with OBJECT_SUFFIX. */
export function keyToComponents(key: string): string[] {
  const components: string[] = [];
  for (const segment of key.split('/')) components.push(...segmentComponents(segment));
  components[components.length - 1] += OBJECT_SUFFIX;
  return components;
}

export type ComponentKind = 'object' | 'directory' | 'continuation' | 'internal' | 'foreign';

export interface DecodedComponent {
  kind: ComponentKind;
  /** The key bytes this component contributes (without the '/' a directory adds). */
  bytes: Buffer;
}

const EMPTY = Buffer.alloc(0);

function decodePiece(piece: string): Buffer | null {
  if (piece === EMPTY_SEGMENT) return EMPTY;
  if (piece === '') return null;
  const out: number[] = [];
  for (let i = 0; i < piece.length; i += 1) {
    const char = piece[i]!;
    if (char === '%') {
      const hex = piece.slice(i + 1, i + 3);
      if (!/^[0-9A-F]{2}$/.test(hex)) return null;
      out.push(parseInt(hex, 16));
      i += 2;
    } else if (RAW.test(char)) {
      out.push(char.charCodeAt(0));
    } else {
      return null;
    }
  }
  return Buffer.from(out);
}

/** What a directory entry is, judged by its name alone (callers still check the entry's type). */
export function decodeComponent(name: string): DecodedComponent {
  const tilde = name.indexOf(OBJECT_SUFFIX);
  if (tilde !== -1 && tilde < name.length - 1) return { kind: 'internal', bytes: EMPTY };
  let kind: ComponentKind = 'directory';
  let piece = name;
  if (tilde === name.length - 1) {
    kind = 'object';
    piece = name.slice(0, -1);
  } else if (name.endsWith(CONTINUATION_SUFFIX)) {
    kind = 'continuation';
    piece = name.slice(0, -1);
  }
  const bytes = decodePiece(piece);
  return bytes ? { kind, bytes } : { kind: 'foreign', bytes: EMPTY };
}

/** Name of the lock file guarding the object whose data file is `objectFileName`. */
export function lockFileName(objectFileName: string): string {
  return `${objectFileName}lock`;
}

/** Name of the second lock taken while breaking a stale lock, so that two breakers never race. */
export function breakerFileName(objectFileName: string): string {
  return `${objectFileName}break`;
}

export const TEMP_MARKER = 'tmp.';

/** A temp file next to the object: `<name>~tmp.<pid>.<random>`. */
export function tempFileName(objectFileName: string, pid: number, random: string): string {
  return `${objectFileName}${TEMP_MARKER}${pid}.${random}`;
}
