/**
 * The line model of a text file. A trailing newline ends the last line rather than starting an
 * empty one, so "a\nb\n" has 2 lines (as an editor counts them) and inserting after the last line
 * adds no stray blank line. Files keep their line endings: a file written with CRLF stays CRLF.
 */
export interface TextFile {
  lines: string[];
  eol: '\n' | '\r\n';
  finalNewline: boolean;
}

/** The line ending of a text: CRLF when every line break is one, else LF. */
export function eolOf(text: string): '\n' | '\r\n' {
  return text.includes('\r\n') && !/(^|[^\r])\n/.test(text) ? '\r\n' : '\n';
}

export function parseText(text: string): TextFile {
  const eol = eolOf(text);
  if (text === '') return { lines: [], eol, finalNewline: false };
  const finalNewline = text.endsWith('\n');
  const body = finalNewline ? text.slice(0, text.length - eol.length) : text;
  return { lines: body.split(eol), eol, finalNewline };
}

export function renderText(file: TextFile): string {
  if (file.lines.length === 0) return '';
  return file.lines.join(file.eol) + (file.finalNewline ? file.eol : '');
}

/** Lines of inserted text: one trailing newline is the end of its last line, not an extra line. */
export function textToLines(text: string): string[] {
  const normalized = text.replace(/\r\n/g, '\n');
  const body = normalized.endsWith('\n') ? normalized.slice(0, -1) : normalized;
  return body.split('\n');
}

export const LINE_NUMBER_WIDTH = 6;
export const MAX_LINES = 999_999;

export function numbered(line: string, n: number): string {
  return `${String(n).padStart(LINE_NUMBER_WIDTH, ' ')}\t${line}`;
}

/** 1-based line number of a character offset. */
export function lineOfOffset(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line += 1;
  return line;
}

/** Lines of a text as parseText counts them, without splitting it (no array of a million lines). */
export function lineCount(text: string): number {
  if (text === '') return 0;
  let breaks = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) breaks += 1;
  // With CRLF endings every '\n' ends a line too; one trailing line break ends the last line.
  return breaks + 1 - (text.endsWith('\n') ? 1 : 0);
}

/**
 * Line numbers of increasing offsets, in one pass over the text however many offsets are asked
 * (each newline is looked at once; asking for the line of every character of one long line stays
 * linear, because the next newline is remembered, not searched for again).
 */
export class LineCounter {
  private line = 1;
  private nextBreak: number;

  constructor(private readonly text: string) {
    this.nextBreak = text.indexOf('\n');
  }

  /** The line of `offset`; offsets must not decrease from one call to the next. */
  lineOf(offset: number): number {
    while (this.nextBreak !== -1 && this.nextBreak < offset) {
      this.line += 1;
      this.nextBreak = this.text.indexOf('\n', this.nextBreak + 1);
    }
    return this.line;
  }
}

/** Characters scanned between two yields to the event loop (about a millisecond of work, two at worst). */
export const SCAN_SLICE = 1 << 16;

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Calls `visit` with the offset of every occurrence of `needle` in `text`, overlapping ones included
 * ("aa" occurs twice in "aaa"), in increasing order, until `visit` returns false.
 *
 * Knuth-Morris-Pratt, so the work is linear whatever the input: at most 2·(text + needle) character
 * steps, plus one native indexOf skip to the needle's first character while nothing is matched
 * (which keeps the common case fast). String.prototype.indexOf alone is not linear: V8 builds its
 * Boyer-Moore tables from the last 250 characters of the needle only and checks the rest naively
 * at every position where they match, so 'a'×250,000 + 'b' + 'a'×250,000 against a line of 1 MiB
 * of 'a' takes over a minute in one call. Every SCAN_SLICE characters the scan yields to the event
 * loop, so that one big edit never holds up the other users' commands.
 */
export async function forEachOccurrence(
  text: string,
  needle: string,
  visit: (offset: number) => boolean,
): Promise<void> {
  if (needle.length === 0 || needle.length > text.length) return;
  // The loops live in a plain class, not in this async function, so that V8 optimises them.
  const matcher = new KmpMatcher(text, needle);
  while (!matcher.prepared(SCAN_SLICE)) await yieldToEventLoop();
  while (!matcher.scan(SCAN_SLICE, visit)) await yieldToEventLoop();
}

/** Knuth-Morris-Pratt in resumable steps: each call does a bounded slice of the work. */
class KmpMatcher {
  private readonly pattern: Uint16Array;
  /** border[i]: length of the longest proper prefix of needle[0..i] that is also its suffix. */
  private readonly border: Int32Array;
  private readonly head: string;
  private built = 1;
  private builtK = 0;
  private i = 0;
  private k = 0;

  constructor(
    private readonly text: string,
    needle: string,
  ) {
    this.pattern = new Uint16Array(needle.length);
    this.pattern[0] = needle.charCodeAt(0);
    this.border = new Int32Array(needle.length);
    this.head = needle[0]!;
    this.needle = needle;
  }

  private readonly needle: string;

  /** Copies and builds the next `slice` entries of the pattern and border table; true when both are complete. */
  prepared(slice: number): boolean {
    const { pattern, border, needle } = this;
    const m = pattern.length;
    const end = Math.min(m, this.built + slice);
    let k = this.builtK;
    for (let i = this.built; i < end; i++) {
      const c = needle.charCodeAt(i);
      pattern[i] = c;
      while (k > 0 && pattern[k] !== c) k = border[k - 1]!;
      if (pattern[k] === c) k += 1;
      border[i] = k;
    }
    this.built = end;
    this.builtK = k;
    return end >= m;
  }

  /** Scans the next `slice` characters of the text; true when the text is done or `visit` said stop. */
  scan(slice: number, visit: (offset: number) => boolean): boolean {
    const { text, pattern, border, head } = this;
    const n = text.length;
    const m = pattern.length;
    const end = Math.min(n, this.i + slice);
    let k = this.k;
    let i = this.i;
    for (; i < end; i++) {
      if (k === 0) {
        // Nothing matched yet: let the native search skip to the needle's first character.
        const next = text.indexOf(head, i);
        if (next === -1) return true;
        i = next;
      }
      const c = text.charCodeAt(i);
      while (k > 0 && pattern[k] !== c) k = border[k - 1]!;
      if (pattern[k] === c) {
        k += 1;
        if (k === m) {
          if (!visit(i - m + 1)) return true;
          k = border[m - 1]!;
        }
      }
    }
    this.i = i;
    this.k = k;
    return i >= n;
  }
}

/** Human-readable sizes as the reference tool prints them: 0B, 512B, 5.5K, 1.2M, 3G. */
export function formatSize(bytes: number): string {
  if (bytes <= 0) return '0B';
  const units = ['B', 'K', 'M', 'G', 'T'];
  const i = Math.min(Math.floor(Math.log(bytes) / Math.log(1024)), units.length - 1);
  const size = bytes / 1024 ** i;
  return (size % 1 === 0 ? size.toString() : size.toFixed(1)) + units[i];
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

/** Text of stored bytes, or null when they are not UTF-8 text (NUL bytes count as binary). */
export function decodeText(data: Uint8Array): string | null {
  if (data.includes(0)) return null;
  try {
    return utf8.decode(data);
  } catch {
    return null;
  }
}

export function encodeText(text: string): Uint8Array {
  return encoder.encode(text);
}
