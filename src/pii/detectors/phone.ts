import { codeAt, isDigit, isWordChar } from '../chars.js';
import { acceptable } from './phone-accept.js';
import { resetAnyRegionBudget } from './phone-regions.js';
import type { Candidate, Detector } from '../types.js';

export { DEFAULT_PHONE_REGIONS, isNationalPhoneAsGrouped, isValidPhone, phoneParseStats } from './phone-regions.js';
export { IDENTIFIER_BEFORE, PHONE_CONTEXT } from './phone-words.js';

export const PHONE_PRIORITY = 40;

// Cheap prefilter: only runs with room for seven digits reach the hand scanner and the parser.
const START = /[+(]?\d[\d ()./\-\u00a0]{6,30}/g;
const MAX_DIGITS = 15; // E.164
const MAX_LENGTH = 26; // "+1 (415) 555-0132" plus generous spacing
const MIN_DIGITS = 7;

interface Group {
  /** Offset just past the last digit of the group. */
  end: number;
  digitCount: number;
}

/**
 * Phone numbers, validated by libphonenumber-js (full metadata). Parsing costs microseconds, so a
 * cheap structural filter runs first: a run of 7-15 digits with single separators, not a date,
 * a decimal or a thousands-grouped amount; unformatted national digit strings also need a context
 * word (phone, tel, Telefon, 電話...) shortly before.
 */
export const detectPhones: Detector = (text, config, out: Candidate[]) => {
  // Digits already claimed by a more specific detector (card, IBAN, IP, SSN, key) would lose the
  // overlap anyway; skipping them saves the parse, which is the expensive step.
  const claimed = out.filter((c) => c.priority > PHONE_PRIORITY).sort((a, b) => a.start - b.start);
  resetAnyRegionBudget();
  let k = 0;
  START.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = START.exec(text)) !== null) {
    const at = m.index;
    while (k < claimed.length && (claimed[k] as Candidate).end <= at) k++;
    const next = claimed[k];
    if (next !== undefined && next.start <= at) {
      START.lastIndex = next.end;
      continue;
    }
    START.lastIndex = scanPhone(text, at, config.phoneRegions, out, next?.start ?? text.length);
  }
};

function scanPhone(
  text: string,
  start: number,
  regions: readonly string[],
  out: Candidate[],
  claimedFrom: number,
): number {
  const before = codeAt(text, start - 1);
  // Inside a word, a decimal, a path, an order number (#123), an amount ($123) or a longer number.
  const opener = text.charCodeAt(start) === 43 || text.charCodeAt(start) === 40; // "+49..." or "(415)..." may follow a '/'
  if (
    isWordChar(before) ||
    before === 46 ||
    before === 45 ||
    (before === 47 && !opener) ||
    before === 35 ||
    before === 43 ||
    before === 36 ||
    before === 8364 ||
    before === 163 ||
    before === 95 ||
    before === 64
  ) {
    return skip(text, start);
  }
  let i = start;
  const plus = text.charCodeAt(i) === 43;
  if (plus) {
    i++;
    if (codeAt(text, i) === 32) i++;
    if (!isDigit(codeAt(text, i)) && codeAt(text, i) !== 40) return start + 1;
  }
  let digits = 0;
  let lastWasSeparator = true;
  let paren = false;
  let parenOpen = false;
  let lastSep = -1;
  let mixedSeparators = false;
  const groups: Group[] = [];
  while (i < text.length && i - start < MAX_LENGTH) {
    const c = text.charCodeAt(i);
    if (isDigit(c)) {
      digits++;
      if (digits > MAX_DIGITS) break;
      i++;
      lastWasSeparator = false;
      if (!isDigit(codeAt(text, i))) groups.push({ end: i, digitCount: digits });
      continue;
    }
    if (c === 40 && !paren && digits <= 3 && closesSoon(text, i)) {
      // One bracketed group of 1-5 digits near the start: "+49 (0)30", "(415) 555".
      paren = true;
      parenOpen = true;
      i++;
      continue;
    }
    if (c === 41 && parenOpen) {
      parenOpen = false;
      i++;
      continue;
    }
    if ((c === 32 || c === 45 || c === 46 || c === 47 || c === 0xa0) && !lastWasSeparator) {
      if (lastSep !== -1 && lastSep !== c) mixedSeparators = true;
      lastSep = c;
      lastWasSeparator = true;
      i++;
      continue;
    }
    break;
  }
  // A run longer than any phone number (a table of figures, a digit dump) holds no phone we could
  // tell apart from its neighbours; skip all of it so long runs cost one pass and no parsing.
  if (digits > MAX_DIGITS || (i - start >= MAX_LENGTH && continuesRun(text, i))) return skipCluster(text, i);
  // Try the whole run first, then shorter prefixes ending at a group boundary ("call 0171 1234567 2x").
  for (let g = groups.length - 1; g >= 0 && g >= groups.length - 3; g--) {
    const group = groups[g] as Group;
    if (group.digitCount < MIN_DIGITS) break;
    const end = group.end;
    if (end > claimedFrom) continue; // would run into a more specific finding
    if (
      acceptable(
        text,
        start,
        end,
        group.digitCount,
        plus,
        paren,
        regions,
        g === groups.length - 1 ? mixedSeparators : false,
      )
    ) {
      out.push({ type: 'PHONE', start, end, priority: PHONE_PRIORITY });
      return end;
    }
  }
  return Math.max(start + 1, i);
}

function closesSoon(text: string, open: number): boolean {
  let i = open + 1;
  while (i < text.length && i - open <= 6 && isDigit(text.charCodeAt(i))) i++;
  return i > open + 1 && codeAt(text, i) === 41;
}

function isPhoneSeparator(c: number): boolean {
  return c === 32 || c === 45 || c === 46 || c === 47 || c === 0xa0 || c === 40 || c === 41;
}

function continuesRun(text: string, i: number): boolean {
  const c = codeAt(text, i);
  return isDigit(c) || (isPhoneSeparator(c) && isDigit(codeAt(text, i + 1)));
}

function skipCluster(text: string, from: number): number {
  let i = from;
  while (continuesRun(text, i)) i++;
  return i;
}

function skip(text: string, start: number): number {
  // Past the digits of a run that cannot start a number here.
  let i = start + 1;
  while (i < text.length && isDigit(text.charCodeAt(i))) i++;
  return i;
}
