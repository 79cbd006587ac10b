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

const DIGIT_BLOCKS = [0x0660, 0x06f0, 0x0966, 0x09e6, 0x0e50];

/** The folded form of one code unit: a code unit, or -1 to drop it. Exported for tests. */
export function fold(c: number): number {
  if (c < 0xa0) return c;
  if (c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x202f || c === 0x205f || c === 0x3000)
    return 32;
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
  // Every character counts at most once, so fewer than `count` units before `pos` reach the start.
  if (pos <= count) return 0;
  let i = pos;
  for (let k = 0; i > 0 && k < count;) {
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
  if (text.length - pos <= count) return text.length;
  let i = pos;
  for (let k = 0; i < text.length && k < count;) {
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

/**
 * Width of the fold at `i` (1 for a folded or dropped unit, 3 for an escape), or 0 when the view
 * keeps the unit as it is. Most text is ASCII, which a loop over code units passes over faster than
 * a regex character class (measured 3x on notes with some CJK, which makes a string two-byte).
 */
function foldWidth(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 37) return escapeAt(text, i) ? 3 : 0;
  return c >= 0xa0 && fold(c) !== c ? 1 : 0;
}

/**
 * The offset map is sparse: only the folded characters are recorded (their view offset, input
 * offset and input width), and every other character's input offset is its view offset plus the
 * width lost by the folds before it. A lookup is a binary search over the folds, so building the
 * view costs one regex pass plus the folded characters, not two arrays of the text's length.
 */
export function normalizedView(text: string): NormalizedView {
  // Per fold k: view[k] is where its output (or, when dropped, the next character) sits in the view;
  // at[k] and width[k] its input span; kept[k] whether it yields a character.
  const view: number[] = [];
  const at: number[] = [];
  const width: number[] = [];
  const kept: boolean[] = [];
  const parts: string[] = [];
  let n = 0;
  let last = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0xa0 && c !== 37) continue;
    const w = foldWidth(text, i);
    if (w === 0) continue;
    if (i > last) parts.push(text.slice(last, i));
    n += i - last;
    const f = w === 3 ? (PERCENT_ESCAPES.get(text.slice(i + 1, i + 3).toUpperCase()) ?? -1) : fold(c);
    view.push(n);
    at.push(i);
    width.push(w);
    kept.push(f !== -1);
    if (f !== -1) {
      parts.push(String.fromCharCode(f));
      n++;
    }
    last = i + w;
    i += w - 1;
  }
  // A text without one of these is its own view (the common case costs one pass).
  if (last === 0 && view.length === 0) return IDENTITY(text);
  parts.push(text.slice(last));
  n += text.length - last;
  const folds = view.length;
  /** The input span of view character `i`. */
  const locate = (i: number): { start: number; end: number } => {
    let lo = 0;
    let hi = folds;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((view[mid] as number) <= i) lo = mid + 1;
      else hi = mid;
    }
    // Folds [0, lo) have view <= i. A kept fold at view i is character i; dropped folds at view i lie before it.
    const k = lo - 1;
    if (k >= 0 && view[k] === i && kept[k] === true)
      return { start: at[k] as number, end: (at[k] as number) + (width[k] as number) };
    if (k < 0) return { start: i, end: i + 1 };
    // After fold k: input offset of the fold's end plus the plain characters since its view offset.
    const base = (at[k] as number) + (width[k] as number);
    const start = base + i - (view[k] as number) - (kept[k] === true ? 1 : 0);
    return { start, end: start + 1 };
  };
  const toOriginal = (i: number): number => (i >= n ? text.length : locate(i).start);
  return {
    text: parts.join(''),
    toOriginal,
    // The end is just past the last character of the span, so invisible characters after it stay outside.
    spanToOriginal: (start, end) => ({
      start: toOriginal(start),
      end: end > start ? locate(end - 1).end : toOriginal(start),
    }),
  };
}

const PERCENT_ESCAPES: ReadonlyMap<string, number> = new Map([
  ['40', 64],
  ['2B', 43],
  ['20', 32],
  ['2D', 45],
  ['2E', 46],
]);
