import metadata from 'libphonenumber-js/metadata.max.json';
import { parsePhoneNumberFromString as parseWithMetadata, type CountryCode } from 'libphonenumber-js/max';
import { codeAt, hasContextBefore, isDigit, isWordChar } from '../chars.js';
import { VERSION_BEFORE } from './context.js';
import { isPostalCode } from './postal.js';
import type { Candidate, Detector } from '../types.js';

export const PHONE_PRIORITY = 40;

/** How many times libphonenumber was asked to parse (the expensive step); read by the bench. */
export const phoneParseStats = { parses: 0 };

function parsePhoneNumberFromString(raw: string, region?: CountryCode) {
  phoneParseStats.parses++;
  return parseWithMetadata(raw, region);
}

/** Regions tried for numbers written without +country, most likely first. */
export const DEFAULT_PHONE_REGIONS: readonly string[] = [
  'US',
  'GB',
  'DE',
  'FR',
  'ES',
  'IT',
  'NL',
  'JP',
  'CN',
  'KR',
  'AU',
  'CH',
  'AT',
  'BE',
  'PT',
];

/**
 * Leading digit and length of national numbers for common regions, so that a digit run is parsed
 * only for regions where it could be a number (parsing costs ~10 us). Regions not listed are
 * always parsed.
 */
const NATIONAL_SHAPES: Readonly<Record<string, (first: number, digits: number) => boolean>> = {
  US: (f, n) => (n === 10 && f >= 2) || (n === 11 && f === 1),
  CA: (f, n) => (n === 10 && f >= 2) || (n === 11 && f === 1),
  GB: (f, n) => f === 0 && n >= 9 && n <= 11,
  DE: (f, n) => f === 0 && n >= 6 && n <= 13,
  FR: (f, n) => f === 0 && n === 10,
  ES: (f, n) => n === 9 && f >= 6,
  IT: (f, n) => (f === 0 && n >= 6 && n <= 11) || (f === 3 && n >= 9 && n <= 10),
  NL: (f, n) => f === 0 && n === 10,
  JP: (f, n) => f === 0 && n >= 10 && n <= 11,
  AU: (f, n) => f === 0 && n === 10,
  CH: (f, n) => f === 0 && n === 10,
  AT: (f, n) => f === 0 && n >= 5 && n <= 13,
  BE: (f, n) => f === 0 && n >= 9 && n <= 10,
  IE: (f, n) => f === 0 && n >= 7 && n <= 10,
  IN: (f, n) => (n === 10 && f >= 6) || (f === 0 && n === 11),
  BR: (f, n) => n >= 10 && n <= 11 && f >= 1,
  MX: (f, n) => n === 10,
  CN: (f, n) => (f === 1 && n === 11) || (f === 0 && n >= 10 && n <= 12),
  KR: (f, n) => f === 0 && n >= 9 && n <= 11,
  PT: (f, n) => n === 9 && (f === 2 || f === 9),
  PL: (f, n) => n === 9 && f >= 1,
  SE: (f, n) => f === 0 && n >= 7 && n <= 10,
};

function plausibleNational(region: string, firstDigit: number, digitCount: number): boolean {
  const shape = NATIONAL_SHAPES[region];
  return shape === undefined || shape(firstDigit, digitCount);
}

// Cheap prefilter: only runs with room for seven digits reach the hand scanner and the parser.
const START = /[+(]?\d[\d ()./\-\u00a0]{6,30}/g;
const MAX_DIGITS = 15; // E.164
const MAX_LENGTH = 26; // "+1 (415) 555-0132" plus generous spacing
const MIN_DIGITS = 7;

export const PHONE_CONTEXT =
  /(?:phone|\btel\b|\btel\.|\bcall|mobile|\bcell|\bfax|whatsapp|\bsms|\btext\b|\bring\b|contact|\bdial|telefon|\bhandy|rufnummer|nummer|anruf|t[ée]l[ée]phone|\bt[ée]l\b|portable|appel|num[ée]ro|tel[ée]fono|m[óo]vil|celular|llam|cellulare|電話|携帯|連絡|☎|📞)/i;

// For a national number of any region the word must say phone, not just "number" or "contact"
// ("Kundennummer 748692, Vertrag 8069-712"), and stand close before it.
const STRONG_PHONE_CONTEXT =
  /(?:phone|\btel\b|\btel\.|mobile|\bcell|\bfax|whatsapp|telefon(?!ica)|\bhandy|t[ée]l[ée]phone|\bt[ée]l\b|portable|tel[ée]fono|m[óo]vil|celular|cellulare|電話|携帯|☎|📞)/i;

const DATE_SHAPE = /^(?:\d{4}[-./ ]\d{1,2}[-./ ]\d{1,2}|\d{1,2}[-./ ]\d{1,2}[-./ ]\d{2,4})$/;
// XXX-XX-XXXX is how SSNs are written; no national plan groups a phone number that way.
const SSN_SHAPE = /^\d{3}-\d{2}-\d{4}$/;
/** How a ZIP+4 code is written (postal.ts says when it is one). */
const ZIP4_SHAPE = /^\d{5}-\d{4}$/;
// "2024-03-0012", "2024-01-15 10", "15.03.2024 12": a date followed by more digits.
const DATE_PREFIX =
  /^(?:(?:19|20)\d\d[-./](?:0?[1-9]|1[0-2])[-./]|(?:0?[1-9]|[12]\d|3[01])[-./](?:0?[1-9]|1[0-2])[-./](?:19|20)\d\d)/;
const YEAR_RANGE = /^(?:19|20)\d\d ?[-/] ?(?:19|20)?\d\d$/;
const CURRENCY_BEFORE = /(?:€|\$|£|¥|\beur|\busd|\bgbp|\bchf|\bjpy|\bcad|\baud)\s?$/i;
export const IDENTIFIER_BEFORE =
  /\b(?:order|ticket|invoice|ref|reference|id|no|nr|case|booking|tracking|serial|sku|part|model|item|article|isbn|issn|ean|account|acct|po|batch|lot|build|job|bestell\w*|rechnung\w*|auftrag\w*|kunden\w*|vertrag\w*|commande|facture|dossier|pedido|factura|referencia|expediente)\.?\s*(?:number|no\.?|nr\.?|n°|#|id)?\s*[:#=]?\s*$|(?:注文|番号|伝票)[:：\s]*$/i;
// A Brazilian mobile as Brazil prints it: the two-digit area code in brackets, the ninth digit 9,
// then 4-4 ("(11) 98765-4321"). No other plan writes numbers so; checked in BR even when BR is not
// among the configured regions.
const BR_MOBILE = /^\(\d\d\) ?9\d{4}-\d{4}$/;
const CURRENCY_AFTER = /^\s?(?:€|\$|£|¥|eur\b|usd\b|gbp\b|chf\b|jpy\b|euros?\b|dollars?\b|円|%)/i;

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
  anyRegionBudget = ANY_REGION_BUDGET;
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

function acceptable(
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

/** Lookups in every region left in the current scan; reset by detectPhones. */
let anyRegionBudget = 0;
const ANY_REGION_BUDGET = 256;

interface RegionPlan {
  nationalPrefix: string | undefined;
  lengths: ReadonlySet<number>;
  pattern: RegExp;
}
let PLANS: readonly RegionPlan[] | undefined;

/** Every region's numbering plan (national prefix, lengths, number pattern), from libphonenumber's metadata. */
function plans(): readonly RegionPlan[] {
  if (PLANS !== undefined) return PLANS;
  const countries = (metadata as unknown as { countries: Record<string, unknown[]> }).countries;
  PLANS = Object.values(countries).map((c) => ({
    nationalPrefix: typeof c[5] === 'string' ? c[5] : undefined,
    lengths: new Set(Array.isArray(c[3]) ? (c[3] as number[]) : []),
    pattern: new RegExp(`^(?:${String(c[2])})$`),
  }));
  return PLANS;
}

/**
 * True when the digits are a number in some region's plan: with its national prefix taken off,
 * of a length the plan allows and matching its number pattern. A regex test per region (no parse),
 * and budgeted per scan.
 */
function validInAnyRegion(raw: string): boolean {
  if (anyRegionBudget <= 0) return false;
  anyRegionBudget--;
  const digits = raw.replace(/\D+/g, '');
  for (const plan of plans()) {
    const national =
      plan.nationalPrefix !== undefined && digits.startsWith(plan.nationalPrefix)
        ? digits.slice(plan.nationalPrefix.length)
        : digits;
    if (plan.lengths.has(national.length) && plan.pattern.test(national)) return true;
  }
  return false;
}

function firstDigitAt(text: string, start: number): number {
  let i = start;
  while (i < text.length && !isDigit(text.charCodeAt(i))) i++;
  return text.charCodeAt(i) - 48;
}

function isPossiblePhone(raw: string, plus: boolean, digitCount: number, regions: readonly string[]): boolean {
  if (plus) return parsePhoneNumberFromString(raw)?.isPossible() === true;
  const firstDigit = raw.replace(/^\D+/, '').charCodeAt(0) - 48;
  for (const region of regions) {
    if (!plausibleNational(region, firstDigit, digitCount)) continue;
    if (parsePhoneNumberFromString(raw, region as CountryCode)?.isPossible() === true) return true;
  }
  return false;
}

export function isValidPhone(raw: string, plus: boolean, digitCount: number, regions: readonly string[]): boolean {
  if (plus) return parsePhoneNumberFromString(raw)?.isValid() === true;
  const firstDigit = raw.replace(/^\D+/, '').charCodeAt(0) - 48;
  for (const region of regions) {
    if (!plausibleNational(region, firstDigit, digitCount)) continue;
    const parsed = parsePhoneNumberFromString(raw, region as CountryCode);
    if (parsed?.isValid() === true) return true;
  }
  return false;
}

/**
 * Whether `raw` (digits in groups) is a valid national number of one of `regions` written with
 * that region's own grouping: "030-123456" is how Berlin numbers are printed (030 123456), while
 * "078-051121" is not how any of them prints 07805 1121 (DE) or 078 05 11 21 (BE). Used where the
 * same digits could also be something else (an SSN's XXX-XXXXXX form): only the grouping a
 * region's numbers are printed in makes them a phone number rather than the other.
 */
export function isNationalPhoneAsGrouped(raw: string, regions: readonly string[]): boolean {
  const written = raw.split(/\D+/).filter((g) => g.length > 0);
  const digits = written.join('');
  const firstDigit = digits.charCodeAt(0) - 48;
  for (const region of regions) {
    if (!plausibleNational(region, firstDigit, digits.length)) continue;
    const parsed = parsePhoneNumberFromString(raw, region as CountryCode);
    if (parsed?.isValid() !== true) continue;
    const printed = parsed
      .formatNational()
      .split(/\D+/)
      .filter((g) => g.length > 0);
    if (
      printed.join('') === digits &&
      printed.length === written.length &&
      printed.every((g, i) => g.length === written[i]?.length)
    )
      return true;
  }
  return false;
}
