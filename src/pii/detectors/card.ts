import { codeAt, isAsciiLetter, isDigit, isWordChar, luhnValid } from '../chars.js';
import type { Candidate, Detector } from '../types.js';

export const CARD_PRIORITY = 80;

// Prefilter: four digits, then (after at most one separator) a fifth — every card layout opens so.
const DIGIT_RUN_START = /\d{4}(?:[ .-]|\r?\n)?\d/g;

/** Issuer prefixes (IIN ranges) and lengths of the networks people actually paste. */
export function knownIssuer(digits: string): boolean {
  const n = digits.length;
  const p2 = Number(digits.slice(0, 2));
  const p3 = Number(digits.slice(0, 3));
  const p4 = Number(digits.slice(0, 4));
  const p6 = Number(digits.slice(0, 6));
  if (digits[0] === '4') return n === 13 || n === 16 || n === 19; // Visa
  if (p2 >= 51 && p2 <= 55) return n === 16; // Mastercard
  if (p4 >= 2221 && p4 <= 2720) return n === 16; // Mastercard 2-series
  if (p2 === 34 || p2 === 37) return n === 15; // American Express
  if (p4 === 6011 || (p3 >= 644 && p3 <= 649) || p2 === 65) return n >= 16 && n <= 19; // Discover
  if (p6 >= 622126 && p6 <= 622925) return n >= 16 && n <= 19; // Discover co-branded UnionPay
  if (p2 === 62 || p2 === 81) return n >= 16 && n <= 19; // UnionPay
  if (p4 >= 3528 && p4 <= 3589) return n >= 16 && n <= 19; // JCB
  if ((p3 >= 300 && p3 <= 305) || p2 === 36 || p2 === 38 || p2 === 39 || p4 === 3095) return n >= 14 && n <= 19; // Diners
  if (p4 >= 2200 && p4 <= 2204) return n >= 16 && n <= 19; // Mir
  if (p2 === 50 || (p2 >= 56 && p2 <= 69)) return n >= 12 && n <= 19; // Maestro, RuPay 60, Verve 506/650, Elo, InterPayment, Laser
  if (p2 === 82) return n === 16; // RuPay
  if (p4 === 9792) return n === 16; // Troy
  if (digits[0] === '1') return n === 15; // UATP
  return false;
}

/**
 * A card number is 12-19 digits (as its network allows), optionally in groups split by one space, one dash or one dot
 * (the same separator throughout: "4111.1111.1111.1111" is how several European and Latin American locales print
 * it), Luhn-valid, with a known issuer prefix, and not part of a longer number. A number glued to a word by '-' or
 * '_' ("card-4111…", "scan_4111….pdf") is still one: the word is a label, not more digits.
 */
export const detectCards: Detector = (text: string, _config, out: Candidate[]) => {
  DIGIT_RUN_START.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = DIGIT_RUN_START.exec(text)) !== null) {
    const start = m.index;
    const end = scanCard(text, start, out);
    DIGIT_RUN_START.lastIndex = end;
  }
};

/**
 * Scans the run of digits and single separators starting at `start` and reports the longest
 * prefix that ends at a group boundary and is a card (so "4111 1111 1111 1111 12/27" still yields
 * the card). Returns where scanning may resume; the run is consumed once, so this stays linear.
 */
function scanCard(text: string, start: number, out: Candidate[]): number {
  const before = codeAt(text, start - 1);
  if ((isWordChar(before) || before === 46 || before === 45) && !gluedToWord(text, start - 1, -1))
    return skipRun(text, start);
  let i = start;
  let digits = '';
  let separator = -1;
  const groupEnds: Array<{ offset: number; digitCount: number }> = [];
  let groupLength = 0;
  while (i < text.length && digits.length <= 19) {
    const c = text.charCodeAt(i);
    if (isDigit(c)) {
      digits += text[i];
      groupLength++;
      i++;
      continue;
    }
    // Printed cards open with a group of four and never use groups shorter than three
    // (4-4-4-4, 4-6-5, 4-6-4, 4-4-4-4-3); "4 4 4 4" is not a card and ends the run here.
    const groupOk = groupEnds.length === 0 ? groupLength === 4 : groupLength >= 3;
    if (
      (c === 32 || c === 45 || c === 46) &&
      groupOk &&
      isDigit(codeAt(text, i + 1)) &&
      (separator === -1 || separator === c)
    ) {
      groupLength = 0;
      groupEnds.push({ offset: i, digitCount: digits.length });
      separator = c;
      i++;
      continue;
    }
    // A number wrapped, or completed on the next line by a second edit: one line break between
    // groups joins them (it is not the group separator, which may be a space or dash elsewhere).
    const breakLength = c === 10 ? 1 : c === 13 && codeAt(text, i + 1) === 10 ? 2 : 0;
    if (breakLength > 0 && groupOk && isDigit(codeAt(text, i + breakLength))) {
      groupLength = 0;
      groupEnds.push({ offset: i, digitCount: digits.length });
      i += breakLength;
      continue;
    }
    break;
  }
  if (digits.length <= 19 && !isDigit(codeAt(text, i))) groupEnds.push({ offset: i, digitCount: digits.length });
  for (let g = groupEnds.length - 1; g >= 0; g--) {
    const { offset, digitCount } = groupEnds[g] as { offset: number; digitCount: number };
    if (digitCount < 12 || digitCount > 19) continue;
    const after = codeAt(text, offset);
    if ((isWordChar(after) && !gluedToWord(text, offset, 1)) || (after === 46 && isDigit(codeAt(text, offset + 1))))
      continue;
    const number = digits.slice(0, digitCount);
    if (knownIssuer(number) && luhnValid(number) && !repetitive(number)) {
      out.push({ type: 'CREDIT_CARD', start, end: offset, priority: CARD_PRIORITY });
      return offset;
    }
  }
  return skipRun(text, start);
}

/**
 * A '-' or '_' at `at` with a letter on its far side ("card-", "_receipt"): a label glued to the
 * number, as in file names. A digit there would make it part of a longer number.
 */
function gluedToWord(text: string, at: number, farSide: -1 | 1): boolean {
  const c = codeAt(text, at);
  return (c === 45 || c === 95) && isAsciiLetter(codeAt(text, at + farSide));
}

/** Offset just past the digits (only digits: a separated neighbour may still start a card). */
function skipRun(text: string, start: number): number {
  let i = start;
  while (i < text.length && isDigit(text.charCodeAt(i))) i++;
  return i;
}

/** A single repeated digit is filler, never a real number. */
function repetitive(digits: string): boolean {
  let distinct = 0;
  const seen = new Set<string>();
  for (const d of digits)
    if (!seen.has(d)) {
      seen.add(d);
      distinct++;
    }
  return distinct <= 1;
}
