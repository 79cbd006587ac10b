import metadata from 'libphonenumber-js/metadata.max.json';
import { parsePhoneNumberFromString as parseWithMetadata, type CountryCode } from 'libphonenumber-js/max';

/** How many times libphonenumber was asked to parse (the expensive step); read by the bench. */
export const phoneParseStats = { parses: 0 };

export function parsePhoneNumberFromString(raw: string, region?: CountryCode) {
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

export function plausibleNational(region: string, firstDigit: number, digitCount: number): boolean {
  const shape = NATIONAL_SHAPES[region];
  return shape === undefined || shape(firstDigit, digitCount);
}

/** Lookups in every region left in the current scan; reset by detectPhones. */
let anyRegionBudget = 0;
const ANY_REGION_BUDGET = 256;

/** A new scan: the full budget of any-region lookups again. */
export function resetAnyRegionBudget(): void {
  anyRegionBudget = ANY_REGION_BUDGET;
}

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
export function validInAnyRegion(raw: string): boolean {
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

export function isPossiblePhone(raw: string, plus: boolean, digitCount: number, regions: readonly string[]): boolean {
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
