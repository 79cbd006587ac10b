/** Character tests on UTF-16 code units; hand-written scanners use them instead of regexes in hot loops. */

export function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

export function isAsciiLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

export function isAsciiAlnum(c: number): boolean {
  return isDigit(c) || isAsciiLetter(c);
}

export function isUpper(c: number): boolean {
  return c >= 65 && c <= 90;
}

export function isHex(c: number): boolean {
  return isDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
}

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

/** Word character in the Unicode sense (letters and digits of any script, and `_`). */
export function isWordChar(c: number): boolean {
  if (c < 128) return isAsciiAlnum(c) || c === 95;
  // Scripts written without spaces (CJK, kana, Hangul, full-width forms) put letters right next
  // to numbers and addresses ("電話は090-1234-5678です"); they must not glue onto a token.
  if (isUnspacedScript(c)) return false;
  // Surrogate halves belong to astral letters or emoji; treating them as word characters only
  // makes boundaries stricter, which errs on the side of not splitting a token.
  if (c >= 0xd800 && c <= 0xdfff) return true;
  return LETTER_OR_DIGIT.test(String.fromCharCode(c));
}

/** Code unit at `i`, or -1 outside the string, so boundary checks need no range test. */
export function codeAt(text: string, i: number): number {
  return i >= 0 && i < text.length ? text.charCodeAt(i) : -1;
}

export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/**
 * True when one of `words` (lower case, matched at a word start) occurs in the `window` characters
 * before `pos`. Used for context rules such as "an SSN needs the word SSN nearby".
 */
export function hasContextBefore(text: string, pos: number, window: number, words: RegExp): boolean {
  const from = Math.max(0, pos - window);
  return words.test(text.slice(from, pos));
}

/** CJK punctuation, kana, CJK ideographs, Hangul and full-width forms. */
export function isUnspacedScript(c: number): boolean {
  return (
    (c >= 0x3000 && c <= 0x9fff) ||
    (c >= 0xac00 && c <= 0xd7af) ||
    (c >= 0xf900 && c <= 0xfaff) ||
    (c >= 0xff00 && c <= 0xffef)
  );
}
