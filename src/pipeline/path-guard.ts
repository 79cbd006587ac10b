import { MemvaultError } from '../errors.js';
import { pathFieldsOf } from '../tool/parse.js';
import type { MemoryCommand } from '../tool/types.js';
import { MAX_PATH_BYTES, MAX_SEGMENT_BYTES, MEMORY_ROOT } from '../vault/paths.js';
import { percentDecode, uncheckedHexReading } from './percent-decoding.js';
import type { Middleware } from './context.js';
import type { PathGuardDecision, PathRule } from './decisions.js';

export type { PathGuardDecision, PathRule } from './decisions.js';
export { MAX_PATH_BYTES, MAX_SEGMENT_BYTES } from '../vault/paths.js';

/**
 * The path guard. Every path of every command passes through `canonicalizePath`; below the guard
 * only canonical paths exist: '/memories' or '/memories/' + segments joined by '/', each segment
 * NFC-normalised, non-empty, not '.' or '..', and free of anything that some layer below (a local
 * file system on Linux or Windows, an S3 key, a URL decoder, a Unicode normaliser, a Windows
 * "best fit" code-page conversion) could read as a separator or a traversal.
 *
 * How a segment is judged: the guard computes every form the segment can take under the
 * transformations such layers apply — percent-decoding (%XX, IIS-style %uXXXX, lenient UTF-8 that
 * a vulnerable decoder would accept; percent-decoding.ts), '+' as space (form decoding), and a
 * "skeleton" (NFKC, default ignorable code points and combining marks dropped, look-alike dots and
 * slashes folded to ASCII) — in any order and any number of rounds (a small closure, bounded), and
 * rejects the segment if any form is a traversal, contains a separator or a control character, or
 * names a drive or URL scheme. A '%' that starts no escape is also read as IIS reads it (any two
 * characters taken for hex digits: '%bg%qf' is an overlong '/'); what only that reading reaches is
 * held to the path's structure (no separator, no '..', no overlong form), since it turns ordinary
 * text ('50% off') into arbitrary bytes. Plain ASCII names skip all of that (no form differs from
 * the name itself).
 *
 * The rules, both directions, are in docs/paths-and-quotas.md ("Paths").
 */
/** memvault's own bookkeeping (rename journals); never reachable by the model. */
export const RESERVED_SEGMENT = '.memvault';
/** More distinct decoded/normalised forms than this is not a name anyone types: refuse it. */
const MAX_FORMS = 32;

export class InvalidPathError extends MemvaultError {
  readonly rule: PathRule;
  constructor(rule: PathRule, message: string) {
    super('INVALID_PATH', message);
    this.name = 'InvalidPathError';
    this.rule = rule;
  }
}

const HINT = 'Paths must be /memories or /memories/<name>[/<name>...].';

function reject(raw: string, rule: PathRule, reason: string): never {
  throw new InvalidPathError(rule, `Error: Invalid path ${showPath(raw)}: ${reason}`);
}

// C0 and C1 controls, DEL, Unicode line/paragraph separators, bidi embeddings/overrides/isolates
// (they make a path read differently from what it is) and the BOM.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/;
const CONTROL_GLOBAL = new RegExp(CONTROL.source, 'g');
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The rejected path as the model sees it in the error: quoted, invisible characters escaped, cut. */
export function showPath(raw: string): string {
  const cut = raw.length > 200 ? `${raw.slice(0, 200)}…` : raw;
  // JSON.stringify escapes C0 controls and lone surrogates; escape the other invisible ones too.
  return JSON.stringify(cut).replace(CONTROL_GLOBAL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
/** Names that need no decoding or normalisation: every form of them is the name itself. */
const PLAIN_ASCII = /^[A-Za-z0-9_.\- ]+$/;
const DOTS_AND_SPACES = /^[.\s]+$/;
// Windows reserved device names (CON, NUL, COM1...), with or without extension.
const WINDOWS_DEVICE = /^(con|prn|aux|nul|conin\$|conout\$|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$/i;
// A drive letter ('C:', 'c:foo'); a bare scheme ('file:', 'http:', which a '//' path would leave
// as its own segment); a known URL scheme or stream wrapper ('php:', 'data:text', 'zip:x') glued to
// what follows. Other colons ('10:30 standup.md', 'TODO: call') are ordinary names.
const DRIVE_OR_SCHEME =
  /^[a-z]:|^[a-z][a-z0-9+.-]*:$|^(file|https?|ftps?|sftp|smb|nfs|s3|gs|data|jar|zip|phar|php|expect|glob|gopher|dict|ldap|tftp|netdoc|ogg|rar|compress\.zlib|compress\.bzip2|javascript|vbscript):(?!\s)/i;
// A traversal hidden before characters that some layer treats as the end of the name: ';' (path
// parameters: '..;/'), '?' and '#' (URL query and fragment), ':' (NTFS streams: '..::$INDEX_ALLOCATION').
const NAME_END = /[;?#:]/;

// Characters that no NFKC mapping turns into ASCII but that a conversion to a legacy code page
// ("best fit", as Windows' ANSI APIs do), an old IIS decoder (U+EFC8, U+F025) or the eye reads as
// '/', '\' or '.'.
const SLASH_LIKE = /[\u2215\u29f8\u2571\u27cb\u1735\uff0f\uefc8\uf025]/g;
const BACKSLASH_LIKE = /[\u2216\u29f5\u29f9\u2572\u27cd\ufe68\uff3c]/g;
const DOT_LIKE = /[\u3002\uff61\ufe12\u2027\u00b7\u0701\u0702\ua4f8\u2e33\u16eb\u2024\ufe52\uff0e]/g;
// Yen and won signs are '\' in the Japanese and Korean code pages, and the fraction slash is '/' in
// best-fit tables; they are also ordinary characters (¥100, ½ is NFKC '1⁄2'), so they count as
// separators only where that would make a traversal ('..¥..¥win.ini').
const SOFT_SEPARATOR = /[\u00a5\u20a9\u2044]/;
const IGNORABLE = /[\p{Default_Ignorable_Code_Point}\p{Mn}\p{Me}]/gu;
const SEPARATOR = /[/\\]/;
// What renders as nothing: default-ignorable code points (zero-width characters, joiners, variation
// selectors, Hangul fillers, tags), format characters, combining marks with no base, separators and
// white space, and the blank Braille pattern.
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Mn}\p{Me}\p{Z}\s\u2800]/gu;
const SUSPICIOUS = new RegExp(
  `${IGNORABLE.source}|${SLASH_LIKE.source}|${BACKSLASH_LIKE.source}|${DOT_LIKE.source}`,
  'u',
);

/** What a normaliser, a "best fit" conversion or a careless reader makes of a name. */
function skeleton(text: string): string {
  const folded = text.normalize('NFKC');
  if (!SUSPICIOUS.test(folded)) return folded;
  return folded.replace(IGNORABLE, '').replace(SLASH_LIKE, '/').replace(BACKSLASH_LIKE, '\\').replace(DOT_LIKE, '.');
}

// '.', '/' and '\' written as hex or HTML character references, as traversal payload lists send
// them for decoders that read text escapes ('0x2e0x2e', '&#46;&#46;', '&#x2f;'). Only these three
// characters: '0x41' in a name is just text.
const HEX_TEXT = /0x(?:2e|2f|5c)|&#(?:46|47|92|x0*2e|x0*2f|x0*5c);/i;
const HEX_TEXT_GLOBAL = new RegExp(HEX_TEXT.source, 'gi');

/**
 * Every form a segment can take under decoding and normalisation, or a rejection; and which of them
 * a decoder that checks its hex digits reaches too (the others only the unchecked-hex reading does).
 */
function formsOf(raw: string, segment: string): { forms: string[]; checked: Set<string> } {
  const forms = [segment];
  const seen = new Set(forms);
  const checkedReadings = new Map<string, string[]>();
  for (let i = 0; i < forms.length; i++) {
    const form = forms[i]!;
    const next: string[] = [skeleton(form)];
    let guessed: string | undefined;
    if (form.includes('%')) {
      const decoded = percentDecode(form);
      if (decoded.overlong)
        reject(raw, 'overlong-utf8', 'overlong UTF-8 percent-encodings (such as %c0%ae) are not allowed.');
      next.push(decoded.text, decoded.sloppy);
      guessed = uncheckedHexReading(form);
    }
    if (form.includes('+')) next.push(form.replace(/\+/g, ' '));
    if (HEX_TEXT.test(form))
      next.push(
        form.replace(HEX_TEXT_GLOBAL, (escape) =>
          String.fromCharCode(parseInt(escape.replace(/^&#x?|;$|^0x/gi, ''), /^&#\d/.test(escape) ? 10 : 16)),
        ),
      );
    checkedReadings.set(form, next);
    for (const candidate of guessed === undefined ? next : [...next, guessed]) {
      if (seen.has(candidate)) continue;
      if (seen.size >= MAX_FORMS)
        reject(raw, 'too-deeply-encoded', 'the name is encoded or normalised in too many layers.');
      seen.add(candidate);
      forms.push(candidate);
    }
  }
  const checked = new Set([segment]);
  // A Set's iteration visits what is added during it: a walk of the checked readings from the segment.
  for (const form of checked) for (const reading of checkedReadings.get(form)!) checked.add(reading);
  return { forms, checked };
}

function isTraversalName(name: string): boolean {
  if (DOTS_AND_SPACES.test(name)) return true;
  const end = name.search(NAME_END);
  return end > 0 && DOTS_AND_SPACES.test(name.slice(0, end));
}

/**
 * The rules for one form. A form only the unchecked-hex reading reaches (`guessed`) is held to the
 * path's structure alone (no separator, no '..'; overlong forms are refused while decoding): that
 * reading turns ordinary text into any byte ('50% off' holds %o as 0x18), so what it makes of a
 * name is a traversal or nothing.
 */
function checkForm(raw: string, form: string, original: boolean, guessed: boolean): void {
  if (SEPARATOR.test(form))
    reject(raw, 'encoded-separator', 'a name may not contain "/" or "\\" in any encoding or look-alike form.');
  if (!guessed && CONTROL.test(form))
    reject(raw, 'control-character', 'control characters are not allowed in any encoding.');
  if (isTraversalName(form)) {
    if (original)
      reject(
        raw,
        'dots-and-spaces',
        'a name may not consist only of dots and spaces (nor before ";", "?", "#" or ":").',
      );
    reject(raw, 'encoded-traversal', 'a name may not decode or normalise to only dots and spaces (".." in disguise).');
  }
  if (guessed) return;
  if (form.replace(INVISIBLE, '') === '') {
    reject(
      raw,
      'invisible-name',
      'a name must have at least one visible character (zero-width, formatting and filler characters alone are not a name).',
    );
  }
  if (SOFT_SEPARATOR.test(form) && form.split(SOFT_SEPARATOR).some((part) => part !== '' && isTraversalName(part))) {
    reject(
      raw,
      'encoded-traversal',
      'a name may not read as ".." when "¥", "₩" or "⁄" is taken as a separator (legacy code pages).',
    );
  }
  if (DRIVE_OR_SCHEME.test(form))
    reject(raw, 'drive-or-scheme', 'drive letters and URL schemes are not allowed in paths.');
  if (WINDOWS_DEVICE.test(form))
    reject(raw, 'device-name', 'reserved device names (CON, NUL, COM1, ...) are not allowed as names.');
}

/** Checks one segment (not '.' or ''); returns the forms it takes, for the reserved-name check. */
function checkSegment(raw: string, segment: string, kept = true): string[] {
  if (segment === '..') reject(raw, 'dot-segment', '".." segments are not allowed, not even inside /memories.');
  // The length limit is on what is kept (NFC); a decomposed spelling may be longer.
  if (kept && segment.length * 3 > MAX_SEGMENT_BYTES && Buffer.byteLength(segment, 'utf8') > MAX_SEGMENT_BYTES)
    reject(raw, 'segment-too-long', `a name may be at most ${MAX_SEGMENT_BYTES} bytes (UTF-8).`);
  if (PLAIN_ASCII.test(segment) && !HEX_TEXT.test(segment)) {
    // No separator, control, '%', '+', ':' or non-ASCII: only the dots and device-name rules apply.
    if (DOTS_AND_SPACES.test(segment))
      reject(
        raw,
        'dots-and-spaces',
        'a name may not consist only of dots and spaces (nor before ";", "?", "#" or ":").',
      );
    if (WINDOWS_DEVICE.test(segment))
      reject(raw, 'device-name', 'reserved device names (CON, NUL, COM1, ...) are not allowed as names.');
    return [segment];
  }
  const { forms, checked } = formsOf(raw, segment);
  forms.forEach((form, i) => checkForm(raw, form, i === 0, !checked.has(form)));
  return forms;
}

/**
 * Whether a form of the first segment is the reserved directory to some layer below: case-folded
 * (Windows, macOS), cut where a URL layer ends the name (';' path parameters, '?' query, '#'
 * fragment) or NTFS names a stream (':', '::$DATA'), with the trailing dots and spaces Windows drops,
 * or as its 8.3 short name (MEMVAU~1).
 */
function isReservedName(form: string): boolean {
  if (form.length < RESERVED_SHORT_NAME_LENGTH) return false;
  const end = form.search(NAME_END);
  const name = (end === -1 ? form : form.slice(0, end)).replace(/[.\s]+$/, '').toLowerCase();
  return name === RESERVED_SEGMENT || /^\.?memvau~\d+$/.test(name);
}
const RESERVED_SHORT_NAME_LENGTH = 'memvau~1'.length;

const ROOT_PREFIX = `${MEMORY_ROOT}/`;

function outsideRootReason(raw: string): string {
  if (raw.startsWith('//') || raw.startsWith('\\\\'))
    return `paths may not start with "//" (network or protocol-relative paths). ${HINT}`;
  if (/^[a-z][a-z0-9+.-]*:/i.test(raw)) return `drive letters and URL schemes are not allowed. ${HINT}`;
  if (raw.startsWith(MEMORY_ROOT))
    return `only /memories itself and paths below it are allowed, not other names that start with "memories". ${HINT}`;
  if (raw.startsWith('memories')) return `paths are absolute: start with /memories. ${HINT}`;
  return `every path must be /memories or start with /memories/. ${HINT}`;
}

/**
 * Paths that are already canonical and need no rule but the plain-ASCII ones, in one regex test:
 * names of letters, digits, space, '.', '_', '-' (1 to 255 of them), none only dots and spaces, none
 * a device name, none with hex text of '.', '/' or '\\' ('0x2e'), the first not the reserved one
 * (nor it with trailing dots and spaces), no '.' segment, no trailing slash. Anything else
 * takes the full walk below, which gives the same answer (a property test holds them to that).
 */
const anyCase = (word: string) => word.replace(/[a-z]/g, (c) => `[${c}${c.toUpperCase()}]`);
const ALREADY_CANONICAL = new RegExp(
  `^/memories(?!/\\.${anyCase('memvault')}[. ]*(?:/|$))` +
    `(?:/(?![. ]+(?:/|$))(?![^/]*0[xX](?:2[eEfF]|5[cC]))(?!(?:${['con', 'prn', 'aux', 'nul', 'com[0-9]', 'lpt[0-9]'].map(anyCase).join('|')})(?:\\.[^/]*)?(?:/|$))[A-Za-z0-9_.\\- ]{1,255})*$`,
);

/** The canonical form of a raw path from the model, or InvalidPathError (MemvaultError 'INVALID_PATH'). */
export function canonicalizePath(raw: string): string {
  if (typeof raw === 'string' && raw.length <= MAX_PATH_BYTES && ALREADY_CANONICAL.test(raw)) return raw;
  return canonicalizeWithoutShortcut(raw);
}

/** canonicalizePath without the one-regex shortcut for already canonical ASCII paths (tests compare the two). */
export function canonicalizeWithoutShortcut(raw: string): string {
  if (typeof raw !== 'string') throw new InvalidPathError('not-a-string', 'Error: a path must be a string.');
  if (raw.length === 0) reject(raw, 'empty', `the path is empty. ${HINT}`);
  // UTF-8 takes at least one byte per UTF-16 unit: the cheap test first, for megabyte-long input.
  if (raw.length > MAX_PATH_BYTES) reject(raw, 'too-long', `the path is longer than ${MAX_PATH_BYTES} bytes (UTF-8).`);
  // Printable ASCII (most paths) is one byte per character, well-formed and free of controls.
  const ascii = PRINTABLE_ASCII.test(raw);
  if (!ascii) {
    if (Buffer.byteLength(raw, 'utf8') > MAX_PATH_BYTES)
      reject(raw, 'too-long', `the path is longer than ${MAX_PATH_BYTES} bytes (UTF-8).`);
    if (LONE_SURROGATE.test(raw))
      reject(raw, 'ill-formed-unicode', 'the path is not valid Unicode (it has an unpaired surrogate).');
    if (CONTROL.test(raw))
      reject(
        raw,
        'control-character',
        'control characters (including NUL, line breaks and bidi overrides) are not allowed in paths.',
      );
  }
  if (raw.includes('\\')) reject(raw, 'backslash', 'backslashes are not allowed in paths; use "/" between names.');
  if (raw !== MEMORY_ROOT && !raw.startsWith(ROOT_PREFIX)) reject(raw, 'outside-root', outsideRootReason(raw));
  const parts = raw === MEMORY_ROOT ? [] : raw.slice(ROOT_PREFIX.length).split('/');
  // One trailing slash is a directory spelling ('/memories/', '/memories/notes/'): drop it.
  if (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  const segments: string[] = [];
  for (const part of parts) {
    if (part === '') reject(raw, 'empty-segment', 'empty names ("//") are not allowed in paths.');
    if (part === '.') continue;
    // ASCII is its own NFC.
    const segment = ascii ? part : part.normalize('NFC');
    // Composition can swallow an escape's last character ('%0a' + U+0301 is '%0á'): the spelling
    // that was sent must pass as well as the one that is kept. (Without escapes both spellings have
    // the same NFKC skeleton, so one check covers them.)
    if (segment !== part && part.includes('%')) checkSegment(raw, part, false);
    const forms = checkSegment(raw, segment);
    if (segments.length === 0 && forms.some(isReservedName)) {
      reject(
        raw,
        'reserved',
        `${MEMORY_ROOT}/${RESERVED_SEGMENT} is reserved for memvault's own use (in every spelling that a file system or URL layer reads as it).`,
      );
    }
    segments.push(segment);
  }
  const canonical = segments.length === 0 ? MEMORY_ROOT : `${ROOT_PREFIX}${segments.join('/')}`;
  // NFC can lengthen a few scripts; the limit holds for what is stored.
  if (!ascii && Buffer.byteLength(canonical, 'utf8') > MAX_PATH_BYTES)
    reject(raw, 'too-long', `the path is longer than ${MAX_PATH_BYTES} bytes (UTF-8).`);
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
      const decision: PathGuardDecision = {
        blocked: true,
        ...(error instanceof InvalidPathError ? { rule: error.rule } : {}),
      };
      ctx.decisions.pathGuard = decision;
    }
    throw error;
  }
  ctx.pathsCanonical = true;
  ctx.decisions.pathGuard = { blocked: false };
  return next();
};
