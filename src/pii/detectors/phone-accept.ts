import { codeAt, hasContextBefore, isDigit, isWordChar } from '../chars.js';
import { VERSION_BEFORE } from './context.js';
import {
  isPossiblePhone,
  isValidPhone,
  parsePhoneNumberFromString,
  plausibleNational,
  validInAnyRegion,
} from './phone-regions.js';
import {
  BR_MOBILE,
  CURRENCY_AFTER,
  CURRENCY_BEFORE,
  DATE_PREFIX,
  DATE_SHAPE,
  IDENTIFIER_BEFORE,
  PHONE_CONTEXT,
  SSN_SHAPE,
  STRONG_PHONE_CONTEXT,
  YEAR_RANGE,
  ZIP4_SHAPE,
} from './phone-words.js';
import { isPostalCode } from './postal.js';

export function acceptable(
  text: string,
  start: number,
  end: number,
  digitCount: number,
  plus: boolean,
  paren: boolean,
  regions: readonly string[],
  mixedSeparators: boolean,
): boolean {
  const after = codeAt(text, end);
  if (isWordChar(after)) return false;
  if ((after === 46 || after === 45 || after === 47 || after === 58) && isDigit(codeAt(text, end + 1))) return false;
  // "1,234,567" continues the number; "…0132,2024-01-05" in a CSV row does not.
  if (
    after === 44 &&
    isDigit(codeAt(text, end + 1)) &&
    isDigit(codeAt(text, end + 2)) &&
    isDigit(codeAt(text, end + 3)) &&
    !isDigit(codeAt(text, end + 4))
  )
    return false;
  if (after === 37) return false; // 12 345 678%
  if (paren && !plus && BR_MOBILE.test(text.slice(start, end)))
    return parsePhoneNumberFromString(text.slice(start, end), 'BR')?.isValid() === true;
  // Cheapest test first: without '+', the digits must fit some configured region's plan at all
  // (length and leading digit). Most digit runs in notes — dates, ids, amounts — stop here.
  // The context regexes are the next most costly step: each runs at most once, when needed (no
  // closures here: this runs for every digit run of a text).
  let context: boolean | undefined;
  let strong: boolean | undefined;
  // ... unless a phone word says it is a number (then any region's plan may fit: validInAnyRegion).
  if (
    !plus &&
    !fitsSomeRegion(regions, firstDigitAt(text, start), digitCount) &&
    (!separatedOrLong(text, start, end) || !(strong ??= hasStrongPhoneContext(text, start)))
  )
    return false;
  const raw = text.slice(start, end);
  if (DATE_SHAPE.test(raw) || DATE_PREFIX.test(raw) || YEAR_RANGE.test(raw) || SSN_SHAPE.test(raw)) return false;
  // "Boston MA 02110-1234", "ZIP: 10001-0001": a ZIP+4 code, unless a phone word says otherwise.
  if (ZIP4_SHAPE.test(raw) && isPostalCode(text, start) && !(context ??= hasPhoneContext(text, start))) return false;
  const before = text.slice(Math.max(0, start - 24), start);
  if (VERSION_BEFORE.test(before) || CURRENCY_BEFORE.test(before)) return false;
  // "Order 123-456-7890", "ticket 450-818-5143": an identifier word right before, and no phone word.
  if (IDENTIFIER_BEFORE.test(before) && !(context ??= hasPhoneContext(text, start))) return false;
  if (CURRENCY_AFTER.test(text.slice(end, end + 8))) return false;
  const groupSizes = raw
    .split(/[^\d]+/)
    .filter((g) => g.length > 0)
    .map((g) => g.length);
  const separated = groupSizes.length > 1;
  const dotted = raw.includes('.');
  if (dotted) {
    // 3.14159265, 1.234.567 and 10.0.0.1 are numbers, amounts and addresses.
    if (groupSizes.length === 2) return false;
    if (groupSizes.slice(1).every((n) => n === 3) && (groupSizes[0] ?? 0) <= 3) return false;
    // ... but "02.123.45.67", "0475.12.34.56" are how Belgium prints its numbers: a leading 0 and
    // nine digits or more is no address.
    if (groupSizes.length === 4 && groupSizes.every((n) => n <= 3) && !(raw.charCodeAt(0) === 48 && digitCount >= 9))
      return false;
  }
  if (mixedSeparators && !plus && !paren && raw.includes('/') && raw.includes('.')) return false;
  if (!plus) {
    const leadingZero = raw.charCodeAt(paren && raw.startsWith('(') ? 1 : 0) === 48;
    const separators = groupSizes.length - 1;
    const shaped = separated && (paren || (leadingZero && separators >= 1) || (separators >= 2 && digitCount >= 9));
    if (!shaped && !(context ??= hasPhoneContext(text, start))) return false;
  }
  if (isValidPhone(raw, plus, digitCount, regions)) return true;
  // A phone word before a national number of a region not configured ("tel. 0812-345-678"): the
  // number is valid in some region libphonenumber knows. Costs a parse per region, so it is
  // budgeted per scan (ANY_REGION_BUDGET); past the budget only configured regions are tried.
  if (
    !plus &&
    separatedOrLong(text, start, end) &&
    (strong ?? hasStrongPhoneContext(text, start)) &&
    !IDENTIFIER_BEFORE.test(before) &&
    validInAnyRegion(raw)
  )
    return true;
  // Next to a phone word, a well-formed number in a fictional or unassigned range ("Phone:
  // (555) 123-4567") is still somebody's number as far as the note is concerned: accept a
  // possible (right length for the region) number there.
  return separated && (context ?? hasPhoneContext(text, start)) && isPossiblePhone(raw, plus, digitCount, regions);
}

function hasPhoneContext(text: string, start: number): boolean {
  return hasContextBefore(text, start, 40, PHONE_CONTEXT);
}

function hasStrongPhoneContext(text: string, start: number): boolean {
  return hasContextBefore(text, start, 24, STRONG_PHONE_CONTEXT);
}

function fitsSomeRegion(regions: readonly string[], firstDigit: number, digitCount: number): boolean {
  for (const region of regions) if (plausibleNational(region, firstDigit, digitCount)) return true;
  return false;
}

/** Grouped ("5123 4567") or of eight digits or more: a bare shorter run after a phone word is too often something else. */
function separatedOrLong(text: string, start: number, end: number): boolean {
  if (end - start >= 8) return true;
  for (let i = start; i < end; i++) if (!isDigit(text.charCodeAt(i))) return true;
  return false;
}

function firstDigitAt(text: string, start: number): number {
  let i = start;
  while (i < text.length && !isDigit(text.charCodeAt(i))) i++;
  return text.charCodeAt(i) - 48;
}
