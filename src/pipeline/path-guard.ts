import { MemvaultError } from '../errors.js';
import { pathFieldsOf } from '../tool/parse.js';
import type { MemoryCommand } from '../tool/types.js';
import { MEMORY_ROOT } from '../vault/paths.js';
import type { Middleware } from './context.js';

/**
 * The path guard. Every path of every command passes through `canonicalizePath`; below the guard
 * only canonical paths exist: '/memories' or '/memories/' + segments joined by '/', each segment
 * NFC-normalised, non-empty, not '.' or '..', free of anything that some layer below (a local file
 * system on Linux or Windows, an S3 key, a URL decoder, a Unicode normaliser) could read as a
 * separator or a traversal. The rules are listed in the README ("Paths").
 */
export const MAX_PATH_BYTES = 4096;
export const MAX_SEGMENT_BYTES = 255;
const DECODE_ROUNDS = 4;
/** memvault's own bookkeeping (rename journals); never reachable by the model. */
const RESERVED_SEGMENT = '.memvault';

function reject(raw: string, reason: string): never {
  throw new MemvaultError('INVALID_PATH', `Error: Invalid path ${showPath(raw)}: ${reason}`);
}

/** The rejected path as the model sees it in the error: control characters escaped, length cut. */
export function showPath(raw: string): string {
  const safe = JSON.stringify(raw.length > 200 ? `${raw.slice(0, 200)}…` : raw);
  return safe;
}

const SEPARATOR_LIKE = /[/\\]/;
// C0 and C1 controls, DEL, and Unicode line/paragraph separators and bidi overrides that make a
// path read differently from what it is.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/;
const DOTS_AND_SPACES = /^[.\s]+$/;
// Windows reserved device names (CON, NUL, COM1...), with or without extension.
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$/i;
// A drive letter ('C:', 'c:foo') or a URL scheme ('file:', 'http:' before '//'). Other colons
// ('10:30 standup.md') are ordinary: every store below escapes or encrypts names.
const DRIVE_OR_STREAM = /^[a-z]:|^[a-z][a-z0-9+.-]*:$/i;

/** One round of percent-decoding that never throws; a lone '%' stays literal (100%.txt). */
function decodeOnce(text: string): string {
  return text.replace(/(%[0-9a-fA-F]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      // Invalid UTF-8 such as overlong %c0%ae: decode byte-wise as latin1 so that a later check
      // still sees the ASCII it could smuggle, and flag non-shortest forms below.
      return run.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    }
  });
}

/** Overlong UTF-8 encodings of ASCII ('.', '/', '\'): C0/C1 lead bytes, or E0 80-9F, F0 80-8F. */
const OVERLONG = /%(c0|c1)%[0-9a-f]{2}|%e0%[89][0-9a-f]%[0-9a-f]{2}|%f0%8[0-9a-f]%[0-9a-f]{2}/i;

function checkSegment(raw: string, segment: string): void {
  if (segment === '..') reject(raw, '".." segments are not allowed, not even inside /memories.');
  if (DOTS_AND_SPACES.test(segment)) reject(raw, 'a path segment may not consist only of dots and spaces.');
  if (Buffer.byteLength(segment, 'utf8') > MAX_SEGMENT_BYTES) reject(raw, `a path segment may be at most ${MAX_SEGMENT_BYTES} bytes.`);
  if (DRIVE_OR_STREAM.test(segment)) reject(raw, 'drive letters and URL schemes are not allowed in paths.');
  if (WINDOWS_DEVICE.test(segment)) reject(raw, 'reserved device names (CON, NUL, COM1, ...) are not allowed as names.');
  if (/[\s.]$/.test(segment)) reject(raw, 'a name may not end with a dot or a space (some file systems drop them, so two names could become one).');
  // What a URL decoder or a Unicode normaliser below us might turn this segment into.
  let decoded = segment;
  if (OVERLONG.test(decoded)) reject(raw, 'overlong UTF-8 percent-encodings are not allowed.');
  for (let round = 0; round < DECODE_ROUNDS; round++) {
    const next = decodeOnce(decoded);
    if (next === decoded) break;
    decoded = next;
    if (OVERLONG.test(decoded)) reject(raw, 'overlong UTF-8 percent-encodings are not allowed.');
    checkDecodedForm(raw, decoded);
  }
  checkDecodedForm(raw, segment.normalize('NFKC'));
  checkDecodedForm(raw, decoded.normalize('NFKC'));
}

function checkDecodedForm(raw: string, form: string): void {
  if (SEPARATOR_LIKE.test(form)) reject(raw, 'a name may not contain "/" or "\\" in any encoding or look-alike form.');
  if (CONTROL.test(form)) reject(raw, 'control characters are not allowed in any encoding.');
  if (DOTS_AND_SPACES.test(form)) reject(raw, 'a name may not decode or normalise to only dots and spaces (".." in disguise).');
  if (DRIVE_OR_STREAM.test(form)) reject(raw, 'a name may not decode or normalise to a drive letter or URL scheme.');
}

/** The canonical form of a raw path from the model, or MemvaultError('INVALID_PATH'). */
export function canonicalizePath(raw: string): string {
  if (typeof raw !== 'string') throw new MemvaultError('INVALID_PATH', 'Error: a path must be a string.');
  if (raw.length === 0) reject(raw, 'the path is empty; paths start with /memories.');
  if (Buffer.byteLength(raw, 'utf8') > MAX_PATH_BYTES) reject(raw, `the path is longer than ${MAX_PATH_BYTES} bytes.`);
  if (CONTROL.test(raw)) reject(raw, 'control characters (including NUL and line breaks) are not allowed in paths.');
  if (raw.includes('\\')) reject(raw, 'backslashes are not allowed in paths; use "/".');
  if (raw !== MEMORY_ROOT && !raw.startsWith(`${MEMORY_ROOT}/`)) reject(raw, 'every path must be /memories or start with /memories/.');
  const rest = raw.slice(MEMORY_ROOT.length + 1);
  if (rest.startsWith('/')) reject(raw, 'empty path segments ("//") are not allowed.');
  const parts = rest === '' ? [] : rest.split('/');
  // A single trailing slash is a directory spelling: drop it.
  if (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  const segments: string[] = [];
  for (const part of parts) {
    if (part === '') reject(raw, 'empty path segments ("//") are not allowed.');
    if (part === '.') continue;
    const segment = part.normalize('NFC');
    checkSegment(raw, segment);
    segments.push(segment);
  }
  if (segments[0] === RESERVED_SEGMENT) reject(raw, `${MEMORY_ROOT}/${RESERVED_SEGMENT} is reserved for memvault's own use.`);
  const canonical = segments.length === 0 ? MEMORY_ROOT : `${MEMORY_ROOT}/${segments.join('/')}`;
  if (Buffer.byteLength(canonical, 'utf8') > MAX_PATH_BYTES) reject(raw, `the path is longer than ${MAX_PATH_BYTES} bytes.`);
  return canonical;
}

/** Canonicalises every path field of a command in place. */
export function canonicalizeCommand(command: MemoryCommand): void {
  const fields = command as unknown as Record<string, string>;
  for (const field of pathFieldsOf(command)) fields[field] = canonicalizePath(fields[field]!);
}

/** Always on, right after validation: nothing below it sees a raw path. */
export const pathGuard: Middleware = async (ctx, next) => {
  if (!ctx.command) return next();
  try {
    canonicalizeCommand(ctx.command);
  } catch (error) {
    if (error instanceof MemvaultError) {
      ctx.decisions['pathGuard'] = { blocked: true };
      return { content: error.message, isError: true, code: error.code };
    }
    throw error;
  }
  ctx.pathsCanonical = true;
  ctx.decisions['pathGuard'] = { blocked: false };
  return next();
};
