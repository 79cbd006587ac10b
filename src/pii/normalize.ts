/**
 * The view of a text that detectors read: the forms people and their software write, folded to the
 * one form the detectors know, with a map back to the original offsets so that redaction replaces
 * the characters that were really written.
 *
 * - spaces: no-break (U+00A0), narrow no-break (U+202F, French and typeset text), figure and thin
 *   spaces and the other Unicode space separators become ' ';
 * - dashes: hyphen, non-breaking hyphen, figure/en/em dash, horizontal bar, minus sign, small and
 *   full-width hyphen-minus become '-' (word processors autocorrect '-' between digits);
 * - full-width ASCII (U+FF01..U+FF5E: digits, letters, '＠', '．', '＋', '－', ...) becomes ASCII,
 *   and the ideographic space ' ';
 * - decimal digits of other scripts (Arabic-Indic, Persian, Devanagari, Bengali, Thai) become 0-9;
 * - invisible characters (zero-width space, non-joiner, joiner, word joiner, BOM, soft hyphen,
 *   invisible times/separator/plus) are dropped;
 * - the percent escapes of the characters values are made of, %40 '@', %2B '+', %20 ' ', %2D '-',
 *   %2E '.' (an address or a number in a URL: `mailto:jane%40example.com`, `tel:%2B4930...`), are
 *   decoded. Other encodings (base64, hex, HTML entities) are not: see docs/pii.md.
 * Every character of the view comes from one UTF-16 unit or one escape of the input, so the view
 * is never longer than it.
 */

// Anything the fold changes; a text without one of these is its own view (the common case costs one regex test).
const FOLDED = /%(?:40|2[bBdDeE0])|[\u00a0\u00ad\u0660-\u0669\u06f0-\u06f9\u0966-\u096f\u09e6-\u09ef\u0e50-\u0e59\u1680\u2000-\u200d\u2010-\u2015\u202f\u205f-\u2064\u2212\u3000\ufe58\ufe63\ufeff\uff01-\uff5e]/;

const DIGIT_BLOCKS = [0x0660, 0x06f0, 0x0966, 0x09e6, 0x0e50];

/** The folded form of one code unit: a code unit, or -1 to drop it. */
function fold(c: number): number {
  if (c < 0xa0) return c;
  if (c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x202f || c === 0x205f || c === 0x3000) return 32;
  if (c === 0xad || (c >= 0x200b && c <= 0x200d) || (c >= 0x2060 && c <= 0x2064) || c === 0xfeff) return -1;
  if ((c >= 0x2010 && c <= 0x2015) || c === 0x2212 || c === 0xfe58 || c === 0xfe63) return 45;
  if (c >= 0xff01 && c <= 0xff5e) return c - 0xfee0;
  for (const base of DIGIT_BLOCKS) if (c >= base && c <= base + 9) return 48 + c - base;
  return c;
}

/** True for the invisible characters the view drops (a value may hide any number of them). */
export function isDropped(c: number): boolean {
  return c >= 0xa0 && fold(c) === -1;
}

function escapeAt(text: string, i: number): boolean {
  return text.charCodeAt(i) === 37 && PERCENT_ESCAPES.has(text.slice(i + 1, i + 3).toUpperCase());
}

/** Offset `count` characters of the view before `pos` (or 0): dropped ones do not count, an escape counts once. */
export function visibleBefore(text: string, pos: number, count: number): number {
  let i = pos;
  for (let k = 0; i > 0 && k < count; ) {
    if (i >= 3 && escapeAt(text, i - 3)) {
      i -= 3;
      k++;
    } else {
      i--;
      if (!isDropped(text.charCodeAt(i))) k++;
    }
  }
  return i;
}

/** Offset `count` characters of the view after `pos` (or the end). */
export function visibleAfter(text: string, pos: number, count: number): number {
  let i = pos;
  for (let k = 0; i < text.length && k < count; ) {
    if (escapeAt(text, i)) {
      i += 3;
      k++;
    } else {
      if (!isDropped(text.charCodeAt(i))) k++;
      i++;
    }
  }
  return Math.min(i, text.length);
}

export interface NormalizedView {
  text: string;
  /** Offset in the input of the view's character `i` (`i` may be the view's length: the input's end). */
  toOriginal(i: number): number;
  /** The input span of the view's span [start, end). */
  spanToOriginal(start: number, end: number): { start: number; end: number };
}

const IDENTITY = (text: string): NormalizedView => ({
  text,
  toOriginal: (i) => i,
  spanToOriginal: (start, end) => ({ start, end }),
});

export function normalizedView(text: string): NormalizedView {
  if (!FOLDED.test(text)) return IDENTITY(text);
  // starts[i]: where the view's character i begins in the input; ends[i]: just past it.
  const starts = new Int32Array(text.length + 1);
  const ends = new Int32Array(text.length + 1);
  const parts: string[] = [];
  let n = 0;
  let last = 0;
  // Unchanged runs are copied whole; only the folded characters are looked at one by one.
  const folded = new RegExp(FOLDED.source, 'g');
  let m: RegExpExecArray | null;
  while ((m = folded.exec(text)) !== null) {
    const at = m.index;
    if (at > last) {
      parts.push(text.slice(last, at));
      for (let i = last; i < at; i++, n++) {
        starts[n] = i;
        ends[n] = i + 1;
      }
    }
    const width = m[0].length;
    const f = width === 3 ? (PERCENT_ESCAPES.get(m[0].slice(1).toUpperCase()) ?? -1) : fold(text.charCodeAt(at));
    if (f !== -1) {
      parts.push(String.fromCharCode(f));
      starts[n] = at;
      ends[n] = at + width;
      n++;
    }
    last = at + width;
  }
  parts.push(text.slice(last));
  for (let i = last; i < text.length; i++, n++) {
    starts[n] = i;
    ends[n] = i + 1;
  }
  starts[n] = text.length;
  return {
    text: parts.join(''),
    toOriginal: (i) => starts[i] as number,
    // The end is just past the last character of the span, so invisible characters after it stay outside.
    spanToOriginal: (start, end) => ({ start: starts[start] as number, end: end > start ? (ends[end - 1] as number) : (starts[start] as number) }),
  };
}

const PERCENT_ESCAPES: ReadonlyMap<string, number> = new Map([
  ['40', 64],
  ['2B', 43],
  ['20', 32],
  ['2D', 45],
  ['2E', 46],
]);
