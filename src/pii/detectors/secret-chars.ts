import { isAsciiAlnum, isUnspacedScript } from '../chars.js';

/** The end of the run of characters `inRun` accepts that starts at `from`, at most `limit`. */
export function runEnd(text: string, from: number, limit: number, inRun: (c: number) => boolean): number {
  let end = from;
  while (end < limit && inRun(text.charCodeAt(end))) end++;
  return end;
}

/** A character of a Bearer or header credential (the patterns' class, with the '=' padding). */
export function isCredentialChar(c: number): boolean {
  return isAsciiAlnum(c) || c === 46 || c === 95 || c === 126 || c === 43 || c === 47 || c === 61 || c === 45;
}

/** A character of a Bundler password (the pattern's class: not whitespace, a quote, ';' or '&'). */
export function isBundlerPasswordChar(c: number): boolean {
  return c >= 0 && c !== 34 && c !== 39 && c !== 59 && c !== 38 && !isSpace(c);
}

/** `end` without the sentence punctuation a bare value ends on ('!' and '?' stay: see scanAssignments). */
export function withoutTrailingPunctuation(text: string, from: number, end: number): number {
  while (end > from && /[.,;:)\]}>]/.test(text[end - 1] ?? '')) end--;
  return end;
}

export function countDigits(value: string): number {
  let n = 0;
  for (let i = 0; i < value.length; i++) if (value.charCodeAt(i) >= 48 && value.charCodeAt(i) <= 57) n++;
  return n;
}

export function isKeyChar(c: number): boolean {
  return isAsciiAlnum(c) || c === 95 || c === 45 || c === 46;
}

export function isBareValueChar(c: number): boolean {
  // Stops at whitespace (Unicode spaces and line separators too), quotes, separators of lists and
  // markup, and at CJK text, which is written right after a value ("パスワードはabc123です").
  return (
    c > 32 &&
    c !== 34 &&
    c !== 39 &&
    c !== 96 &&
    c !== 44 &&
    c !== 59 &&
    c !== 60 &&
    c !== 62 &&
    !isUnicodeSpace(c) &&
    !isUnspacedScript(c)
  );
}

/** What `\s` matches: tab to carriage return, the space, and the Unicode spaces below. */
export function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || isUnicodeSpace(c);
}

/**
 * The characters besides ASCII ones that `\s` matches: a value does not run over them. Through the
 * engine's view only U+0085, U+2028 and U+2029 reach a detector (src/pii/normalize.ts folds the
 * other spaces to ' ' and drops U+FEFF); the list is whole for a detector called on raw text.
 */
function isUnicodeSpace(c: number): boolean {
  return (
    c >= 0x85 &&
    (c === 0x85 ||
      c === 0xa0 ||
      c === 0x1680 ||
      (c >= 0x2000 && c <= 0x200a) ||
      c === 0x2028 ||
      c === 0x2029 ||
      c === 0x202f ||
      c === 0x205f ||
      c === 0x3000 ||
      c === 0xfeff)
  );
}
