/** The kinds of sensitive data the redactor knows. The string is what appears in `[REDACTED:TYPE]`. */
export type PiiType = 'EMAIL' | 'PHONE' | 'CREDIT_CARD' | 'IBAN' | 'US_SSN' | 'IP_ADDRESS' | 'SECRET';

export const PII_TYPES: readonly PiiType[] = [
  'EMAIL',
  'PHONE',
  'CREDIT_CARD',
  'IBAN',
  'US_SSN',
  'IP_ADDRESS',
  'SECRET',
];

/** What to do with one type: replace it with a placeholder, refuse the whole write, or leave it. */
export type PiiPolicy = 'redact' | 'reject' | 'allow';

/** One detected item. `start`/`end` are UTF-16 offsets into the scanned input, `end` exclusive. */
export interface PiiFinding {
  type: PiiType;
  start: number;
  end: number;
}

/** Two-letter ISO 3166 region codes, as libphonenumber-js spells them (e.g. 'US', 'DE'). */
export type PhoneRegion = string;

export interface RedactOptions {
  /** Policy per type; a type not named here is redacted. */
  policy?: Partial<Record<PiiType, PiiPolicy>>;
  /**
   * Known-safe values that are never reported (e.g. a support address the notes may keep).
   * Compared case-insensitively, and for numbers also with spaces, dashes, dots and brackets removed.
   */
  allowList?: readonly string[];
  /** Regions used to read phone numbers written without a `+country` prefix, most likely first. */
  phoneRegions?: readonly PhoneRegion[];
  /**
   * 'host' (default): only addresses that identify a host; loopback, unspecified, documentation,
   * benchmarking, multicast and reserved ranges, netmasks and single-digit quads without an
   * address word before them are not reported. 'all': every well-formed address.
   */
  ipAddresses?: 'host' | 'all';
}

export interface ScanResult {
  /** Findings that are not allowed by policy or allow-list, sorted by `start`, never overlapping. */
  findings: PiiFinding[];
  /** Types found whose policy is `reject`, in `PII_TYPES` order; empty when the write may proceed. */
  rejected: PiiType[];
}

export interface RedactResult {
  text: string;
  findings: PiiFinding[];
}

/**
 * A detector's raw output before overlaps are settled. `priority` ranks how specific the detector
 * is (a checksum-valid IBAN beats a phone number read from the same digits).
 */
export interface Candidate {
  type: PiiType;
  start: number;
  end: number;
  priority: number;
}

export interface DetectorConfig {
  phoneRegions: readonly PhoneRegion[];
  allIps?: boolean;
}

export type Detector = (text: string, config: DetectorConfig, out: Candidate[]) => void;
