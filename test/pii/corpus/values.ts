/**
 * Generators of labelled values for the PII corpus: every positive is valid by the rules the
 * detector claims to check (Luhn and issuer prefix, IBAN mod-97 and BBAN format, SSA ranges,
 * libphonenumber validity), and every negative look-alike really fails one of those rules.
 */
import { composeIBAN, getCountrySpecifications, isValidIBAN } from 'ibantools';
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';

export type Rng = () => number;

/** The corpus's seeded generator (mulberry32). */
export { seededRandom as makeRng } from '../../kit/random.js';

export const int = (rng: Rng, lo: number, hi: number): number => lo + Math.floor(rng() * (hi - lo + 1));
export const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)] as T;
export const chance = (rng: Rng, p: number): boolean => rng() < p;
export const digits = (rng: Rng, n: number): string => Array.from({ length: n }, () => String(int(rng, 0, 9))).join('');
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const UPPER_NUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const HEX = '0123456789abcdef';
export const fromAlphabet = (rng: Rng, alphabet: string, n: number): string =>
  Array.from({ length: n }, () => alphabet[Math.floor(rng() * alphabet.length)]).join('');
export const alnum = (rng: Rng, n: number): string => fromAlphabet(rng, ALNUM, n);
export const hex = (rng: Rng, n: number): string => fromAlphabet(rng, HEX, n);

// ---------- people ----------
export const FIRST = {
  en: ['james', 'mary', 'olivia', 'liam', 'emma', 'noah', 'ava', 'sophia', 'jackson', 'priya', 'chen', 'fatima'],
  de: ['lukas', 'anna', 'jonas', 'lena', 'felix', 'marie', 'jürgen', 'sabine', 'tobias', 'katrin'],
  fr: ['camille', 'louis', 'chloé', 'hugo', 'léa', 'mathis', 'manon', 'théo', 'inès', 'julien'],
  es: ['lucía', 'mateo', 'sofía', 'hugo', 'martina', 'pablo', 'valeria', 'diego', 'carmen', 'javier'],
  ja: ['taro', 'hanako', 'yuki', 'haruto', 'sakura', 'ren', 'aoi', 'sota', 'mei', 'kenji'],
};
export const LAST = {
  en: ['smith', 'johnson', 'brown', 'garcia', 'miller', 'davis', 'wilson', 'taylor', 'okafor', 'nguyen'],
  de: ['müller', 'schmidt', 'schneider', 'fischer', 'weber', 'meyer', 'wagner', 'becker', 'hoffmann'],
  fr: ['martin', 'bernard', 'dubois', 'thomas', 'robert', 'richard', 'petit', 'durand', 'lefèvre'],
  es: ['garcía', 'fernández', 'gonzález', 'rodríguez', 'lópez', 'martínez', 'sánchez', 'pérez'],
  ja: ['sato', 'suzuki', 'takahashi', 'tanaka', 'watanabe', 'ito', 'yamamoto', 'nakamura'],
};
export type Lang = keyof typeof FIRST;
const DOMAINS = {
  en: [
    'gmail.com',
    'outlook.com',
    'acme.io',
    'example.com',
    'northwind.co.uk',
    'contoso.org',
    'yahoo.com',
    'fastmail.fm',
  ],
  de: ['gmx.de', 'web.de', 'firma-schmidt.de', 'beispiel.de', 't-online.de', 'posteo.de'],
  fr: ['orange.fr', 'laposte.net', 'free.fr', 'exemple.fr', 'societe.fr'],
  es: ['correo.es', 'telefonica.es', 'ejemplo.es', 'gmail.com', 'empresa.com.mx'],
  ja: ['example.co.jp', 'docomo.ne.jp', 'gmail.com', 'kaisha.jp', 'yahoo.co.jp'],
};

function ascii(s: string): string {
  return s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/ß/g, 'ss');
}

export function email(rng: Rng, lang: Lang): string {
  const f = pick(rng, FIRST[lang]);
  const l = pick(rng, LAST[lang]);
  const keepAccents = lang !== 'ja' && chance(rng, 0.08);
  const norm = keepAccents ? (s: string) => s : ascii;
  const local = pick(rng, [
    () => `${norm(f)}.${norm(l)}`,
    () => `${norm(f)[0]}${norm(l)}`,
    () => `${norm(f)}_${norm(l)}${int(rng, 1, 99)}`,
    () => `${norm(f)}+${pick(rng, ['notes', 'work', 'shop', 'news'])}`,
    () => `${norm(l)}.${norm(f)}`,
    () => `${norm(f)}${int(rng, 70, 99)}`,
    () => pick(rng, ['support', 'billing', 'info', 'kontakt', 'contact', 'hr']),
  ])();
  const domain = pick(rng, DOMAINS[lang]);
  const cased = chance(rng, 0.1) ? local.charAt(0).toUpperCase() + local.slice(1) : local;
  return `${cased}@${domain}`;
}

// ---------- phones ----------
type PhoneFormat = { region: CountryCode; make: (rng: Rng) => string };
const d = digits;
export const PHONE_FORMATS: Record<Lang | 'gb' | 'it' | 'nl', PhoneFormat[]> = {
  en: [
    { region: 'US', make: (r) => `(${int(r, 2, 9)}${d(r, 2)}) ${int(r, 2, 9)}${d(r, 2)}-${d(r, 4)}` },
    { region: 'US', make: (r) => `${int(r, 2, 9)}${d(r, 2)}-${int(r, 2, 9)}${d(r, 2)}-${d(r, 4)}` },
    { region: 'US', make: (r) => `${int(r, 2, 9)}${d(r, 2)}.${int(r, 2, 9)}${d(r, 2)}.${d(r, 4)}` },
    { region: 'US', make: (r) => `+1 ${int(r, 2, 9)}${d(r, 2)} ${int(r, 2, 9)}${d(r, 2)} ${d(r, 4)}` },
    { region: 'US', make: (r) => `+1-${int(r, 2, 9)}${d(r, 2)}-${int(r, 2, 9)}${d(r, 2)}-${d(r, 4)}` },
    { region: 'US', make: (r) => `+1 (${int(r, 2, 9)}${d(r, 2)}) ${int(r, 2, 9)}${d(r, 2)}-${d(r, 4)}` },
    { region: 'US', make: (r) => `1-800-${int(r, 2, 9)}${d(r, 2)}-${d(r, 4)}` },
  ],
  gb: [
    { region: 'GB', make: (r) => `020 7${d(r, 3)} ${d(r, 4)}` },
    { region: 'GB', make: (r) => `07${int(r, 4, 9)}${d(r, 2)} ${d(r, 6)}` },
    { region: 'GB', make: (r) => `+44 20 7${d(r, 3)} ${d(r, 4)}` },
    { region: 'GB', make: (r) => `+44 7${int(r, 4, 9)}${d(r, 2)} ${d(r, 6)}` },
    { region: 'GB', make: (r) => `0161 ${int(r, 2, 9)}${d(r, 2)} ${d(r, 4)}` },
  ],
  de: [
    { region: 'DE', make: (r) => `030 ${int(r, 2, 9)}${d(r, 7)}` },
    { region: 'DE', make: (r) => `0${pick(r, ['151', '160', '170', '171', '176'])} ${d(r, 7)}` },
    { region: 'DE', make: (r) => `+49 30 ${int(r, 2, 9)}${d(r, 7)}` },
    { region: 'DE', make: (r) => `+49 ${pick(r, ['151', '160', '170', '171', '176'])} ${d(r, 7)}` },
    { region: 'DE', make: (r) => `089 ${int(r, 2, 9)}${d(r, 6)}` },
    { region: 'DE', make: (r) => `+49 (0)89 ${int(r, 2, 9)}${d(r, 6)}` },
    { region: 'DE', make: (r) => `0221/${int(r, 2, 9)}${d(r, 6)}` },
  ],
  fr: [
    { region: 'FR', make: (r) => `0${int(r, 6, 7)} ${d(r, 2)} ${d(r, 2)} ${d(r, 2)} ${d(r, 2)}` },
    { region: 'FR', make: (r) => `01 ${d(r, 2)} ${d(r, 2)} ${d(r, 2)} ${d(r, 2)}` },
    { region: 'FR', make: (r) => `+33 ${int(r, 6, 7)} ${d(r, 2)} ${d(r, 2)} ${d(r, 2)} ${d(r, 2)}` },
    { region: 'FR', make: (r) => `0${int(r, 1, 6)}.${d(r, 2)}.${d(r, 2)}.${d(r, 2)}.${d(r, 2)}` },
  ],
  es: [
    { region: 'ES', make: (r) => `6${d(r, 2)} ${d(r, 3)} ${d(r, 3)}` },
    { region: 'ES', make: (r) => `+34 6${d(r, 2)} ${d(r, 3)} ${d(r, 3)}` },
    { region: 'ES', make: (r) => `91 ${d(r, 3)} ${d(r, 2)} ${d(r, 2)}` },
    { region: 'ES', make: (r) => `+34 91 ${d(r, 3)} ${d(r, 2)} ${d(r, 2)}` },
  ],
  it: [
    { region: 'IT', make: (r) => `+39 3${int(r, 2, 9)}${d(r, 1)} ${d(r, 3)} ${d(r, 4)}` },
    { region: 'IT', make: (r) => `3${int(r, 2, 9)}${d(r, 1)} ${d(r, 3)} ${d(r, 4)}` },
    { region: 'IT', make: (r) => `06 ${d(r, 4)} ${d(r, 4)}` },
  ],
  nl: [
    { region: 'NL', make: (r) => `06-${int(r, 1, 6)}${d(r, 7)}` },
    { region: 'NL', make: (r) => `+31 6 ${int(r, 1, 6)}${d(r, 7)}` },
    { region: 'NL', make: (r) => `020-${int(r, 3, 7)}${d(r, 2)} ${d(r, 4)}` },
  ],
  ja: [
    { region: 'JP', make: (r) => `0${pick(r, ['90', '80', '70'])}-${d(r, 4)}-${d(r, 4)}` },
    { region: 'JP', make: (r) => `03-${int(r, 3, 6)}${d(r, 3)}-${d(r, 4)}` },
    { region: 'JP', make: (r) => `+81 ${pick(r, ['90', '80'])}-${d(r, 4)}-${d(r, 4)}` },
    { region: 'JP', make: (r) => `0${pick(r, ['90', '80'])} ${d(r, 4)} ${d(r, 4)}` },
  ],
};

export function phone(rng: Rng, lang: Lang): string {
  const pool =
    lang === 'en'
      ? [...PHONE_FORMATS.en, ...PHONE_FORMATS.en, ...PHONE_FORMATS.gb]
      : lang === 'de'
        ? [...PHONE_FORMATS.de, ...PHONE_FORMATS.de, ...PHONE_FORMATS.nl]
        : lang === 'es'
          ? [...PHONE_FORMATS.es, ...PHONE_FORMATS.es, ...PHONE_FORMATS.it]
          : PHONE_FORMATS[lang];
  for (;;) {
    const format = pick(rng, pool);
    const value = format.make(rng);
    const parsed = value.startsWith('+')
      ? parsePhoneNumberFromString(value)
      : parsePhoneNumberFromString(value, format.region);
    if (parsed?.isValid() === true) return value;
  }
}

/** Numbers shaped like phones that libphonenumber rejects (unassigned area codes, too short). */
export function invalidPhone(rng: Rng): string {
  for (;;) {
    const value = pick(rng, [
      () => `+1 ${int(rng, 0, 1)}${d(rng, 2)} ${d(rng, 3)} ${d(rng, 4)}`,
      () => `+49 ${d(rng, 2)}`,
      () => `555-${d(rng, 4)}`,
    ])();
    const parsed = parsePhoneNumberFromString(value, 'US');
    if (parsed?.isValid() !== true) return value;
  }
}

// ---------- cards ----------
function luhnCheckDigit(partial: string): string {
  let sum = 0;
  let double = true;
  for (let i = partial.length - 1; i >= 0; i--) {
    let v = partial.charCodeAt(i) - 48;
    if (double) {
      v *= 2;
      if (v > 9) v -= 9;
    }
    sum += v;
    double = !double;
  }
  return String((10 - (sum % 10)) % 10);
}

const ISSUERS: Array<{ prefix: (r: Rng) => string; length: number; groups: number[] }> = [
  { prefix: () => '4', length: 16, groups: [4, 4, 4, 4] }, // Visa
  { prefix: () => '4', length: 16, groups: [4, 4, 4, 4] },
  { prefix: (r) => String(int(r, 51, 55)), length: 16, groups: [4, 4, 4, 4] }, // Mastercard
  { prefix: (r) => String(int(r, 2221, 2720)), length: 16, groups: [4, 4, 4, 4] },
  { prefix: (r) => pick(r, ['34', '37']), length: 15, groups: [4, 6, 5] }, // Amex
  { prefix: () => '6011', length: 16, groups: [4, 4, 4, 4] }, // Discover
  { prefix: (r) => String(int(r, 3528, 3589)), length: 16, groups: [4, 4, 4, 4] }, // JCB
  { prefix: (r) => String(int(r, 300, 305)), length: 14, groups: [4, 6, 4] }, // Diners
  { prefix: () => '62', length: 16, groups: [4, 4, 4, 4] }, // UnionPay
];

function group(number: string, sizes: number[], sep: string): string {
  const parts: string[] = [];
  let i = 0;
  for (const size of sizes) {
    parts.push(number.slice(i, i + size));
    i += size;
  }
  if (i < number.length) parts.push(number.slice(i));
  return parts.join(sep);
}

export function card(rng: Rng): string {
  const issuer = pick(rng, ISSUERS);
  const prefix = issuer.prefix(rng);
  const body = prefix + d(rng, issuer.length - prefix.length - 1);
  const number = body + luhnCheckDigit(body);
  return group(number, issuer.groups, pick(rng, [' ', ' ', '-', '']));
}

/** 16 digits with a Visa/Mastercard prefix whose Luhn check fails: tracking numbers, references. */
export function luhnFailingNumber(rng: Rng): string {
  const body = pick(rng, ['4', '5']) + d(rng, 14);
  const good = Number(luhnCheckDigit(body));
  const number = body + String((good + int(rng, 1, 9)) % 10);
  return group(number, [4, 4, 4, 4], pick(rng, [' ', '', '-']));
}

// ---------- IBANs ----------
const IBAN_COUNTRIES = [
  'DE',
  'DE',
  'FR',
  'ES',
  'GB',
  'IT',
  'NL',
  'BE',
  'AT',
  'CH',
  'PL',
  'PT',
  'IE',
  'SE',
  'DK',
  'NO',
  'FI',
  'LU',
];
const SPECS = getCountrySpecifications();

function randomBban(rng: Rng, regexp: string): string {
  // The BBAN patterns are sequences like [0-9]{5}[A-Z0-9]{11}; generate each run from its class.
  let out = '';
  const re = /\[([^\]]+)\]\{(\d+)\}/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(regexp)) !== null) {
    const cls = m[1] ?? '';
    const n = Number(m[2]);
    const alphabet = cls === '0-9' ? '0123456789' : cls === 'A-Z' ? 'ABCDEFGHIJKLMNOPQRSTUVWXYZ' : UPPER_NUM;
    out += fromAlphabet(rng, alphabet, n);
  }
  return out;
}

export function iban(rng: Rng): string {
  for (;;) {
    const country = pick(rng, IBAN_COUNTRIES);
    const spec = SPECS[country];
    if (spec?.bban_regexp == null) continue;
    const bban = randomBban(rng, spec.bban_regexp);
    const value = composeIBAN({ countryCode: country, bban });
    if (value === null || !isValidIBAN(value)) continue;
    return chance(rng, 0.6) ? (value.match(/.{1,4}/g) ?? []).join(' ') : value;
  }
}

/** A real-looking IBAN with one digit changed, so the mod-97 check fails. */
export function badChecksumIban(rng: Rng): string {
  const good = iban(rng).replace(/ /g, '');
  for (;;) {
    const pos = int(rng, 4, good.length - 1);
    const ch = good[pos] ?? '0';
    if (!/\d/.test(ch)) continue;
    const changed = good.slice(0, pos) + String((Number(ch) + int(rng, 1, 9)) % 10) + good.slice(pos + 1);
    if (!isValidIBAN(changed)) return (changed.match(/.{1,4}/g) ?? []).join(' ');
  }
}

// ---------- SSNs ----------
export function ssnParts(rng: Rng): [string, string, string] {
  for (;;) {
    const area = int(rng, 1, 899);
    if (area === 666) continue;
    return [
      String(area).padStart(3, '0'),
      String(int(rng, 1, 99)).padStart(2, '0'),
      String(int(rng, 1, 9999)).padStart(4, '0'),
    ];
  }
}

export function invalidSsn(rng: Rng): string {
  return pick(rng, [
    () => `000-${d(rng, 2)}-${int(rng, 1000, 9999)}`,
    () => `666-${int(rng, 10, 99)}-${int(rng, 1000, 9999)}`,
    () => `${int(rng, 900, 999)}-${int(rng, 10, 99)}-${int(rng, 1000, 9999)}`,
    () => `${int(rng, 100, 899)}-00-${int(rng, 1000, 9999)}`,
  ])();
}

// ---------- IPs ----------
export function ipv4(rng: Rng): string {
  return pick(rng, [
    () => `10.${int(rng, 0, 255)}.${int(rng, 0, 255)}.${int(rng, 1, 254)}`,
    () => `192.168.${int(rng, 0, 255)}.${int(rng, 1, 254)}`,
    () => `172.${int(rng, 16, 31)}.${int(rng, 0, 255)}.${int(rng, 1, 254)}`,
    () => `${int(rng, 11, 223)}.${int(rng, 0, 255)}.${int(rng, 0, 255)}.${int(rng, 1, 254)}`,
    // Public addresses (the documentation ranges 192.0.2/24, 198.51.100/24, 203.0.113/24 identify no host: not PII).
    () => `81.${int(rng, 0, 255)}.${int(rng, 0, 255)}.${int(rng, 1, 254)}`,
    () => `185.${int(rng, 0, 255)}.${int(rng, 0, 255)}.${int(rng, 1, 254)}`,
  ])();
}

export function ipv6(rng: Rng): string {
  const g = () => hex(rng, int(rng, 1, 4)).replace(/^0+(?=.)/, '');
  return pick(rng, [
    () => `2001:4860:${g()}:${g()}::${g()}`,
    () => `fe80::${g()}:${g()}:${g()}:${g()}`,
    () => Array.from({ length: 8 }, g).join(':'),
    () => `2a02:${g()}:${g()}:${g()}:${g()}:${g()}:${g()}:${g()}`,
    () => `::ffff:81.2.69.${int(rng, 1, 254)}`,
    () => `2a00:1450:${g()}::${g()}`,
  ])();
}

// ---------- secrets ----------
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

function b64url(s: string): string {
  return Buffer.from(s).toString('base64url');
}

export const SECRET_KINDS = [
  'aws_key_id',
  'aws_secret',
  'github',
  'github_pat',
  'gitlab',
  'slack',
  'stripe',
  'openai',
  'anthropic',
  'jwt',
  'generic_hex',
  'generic_b64',
  'password',
  'google',
] as const;
export type SecretKind = (typeof SECRET_KINDS)[number];

export function secret(rng: Rng, kind: SecretKind): string {
  switch (kind) {
    case 'aws_key_id':
      return pick(rng, ['AKIA', 'ASIA']) + fromAlphabet(rng, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16);
    case 'aws_secret':
      return fromAlphabet(rng, B64, 40).replace(/^[+/]/, 'x');
    case 'github':
      return `gh${pick(rng, ['p', 'o', 's', 'u'])}_${alnum(rng, 36)}`;
    case 'github_pat':
      return `github_pat_11${fromAlphabet(rng, UPPER_NUM, 20)}_${alnum(rng, 59)}`;
    case 'gitlab':
      return `glpat-${fromAlphabet(rng, B64URL, 20)}`;
    case 'slack':
      return `xox${pick(rng, ['b', 'p'])}-${d(rng, 12)}-${d(rng, 13)}-${alnum(rng, 24)}`;
    case 'stripe':
      return `${pick(rng, ['sk', 'rk'])}_${pick(rng, ['live', 'test'])}_${alnum(rng, int(rng, 24, 99))}`;
    case 'openai':
      return pick(rng, [`sk-proj-${fromAlphabet(rng, B64URL, 48)}`, `sk-${alnum(rng, 20)}T3BlbkFJ${alnum(rng, 20)}`]);
    case 'anthropic':
      return `sk-ant-api03-${fromAlphabet(rng, B64URL, 93)}AA`;
    case 'jwt': {
      const header = b64url(JSON.stringify({ alg: pick(rng, ['HS256', 'RS256']), typ: 'JWT' }));
      const payload = b64url(
        JSON.stringify({ sub: d(rng, 8), name: pick(rng, FIRST.en), iat: 1700000000 + int(rng, 0, 9999999) }),
      );
      return `${header}.${payload}.${fromAlphabet(rng, B64URL, 43)}`;
    }
    case 'generic_hex':
      return hex(rng, pick(rng, [32, 40, 64]));
    case 'generic_b64':
      return alnum(rng, int(rng, 24, 48));
    case 'password':
      return pick(rng, [
        () =>
          `${pick(rng, ['Summer', 'Winter', 'Blue', 'Tiger', 'Sonne', 'Soleil', 'Gato', 'Sakura'])}${int(rng, 1990, 2026)}${pick(rng, ['!', '#', '$', '?', ''])}`,
        () => `${alnum(rng, int(rng, 3, 6))}${pick(rng, ['!', '@', '#', '%', '&'])}${alnum(rng, int(rng, 4, 8))}`,
        () => `hunter${int(rng, 2, 99)}`,
        () =>
          `${pick(rng, ['correct', 'purple', 'rocket', 'piano'])}-${pick(rng, ['horse', 'monkey', 'garden', 'river'])}-${int(rng, 10, 99)}`,
      ])();
    case 'google':
      return `AIza${fromAlphabet(rng, B64URL, 35)}`;
  }
}

export function pemPrivateKey(rng: Rng): string {
  const label = pick(rng, ['RSA PRIVATE KEY', 'PRIVATE KEY', 'EC PRIVATE KEY', 'OPENSSH PRIVATE KEY']);
  const lines = Array.from({ length: int(rng, 3, 8) }, () => fromAlphabet(rng, B64, 64));
  lines.push(fromAlphabet(rng, B64, int(rng, 8, 60)) + '==');
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----`;
}

// ---------- hard negatives ----------
export function uuid(rng: Rng): string {
  const h = hex(rng, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${pick(rng, ['8', '9', 'a', 'b'])}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
export const gitSha = (rng: Rng, n = 40): string => hex(rng, n);
export function isoTimestamp(rng: Rng): string {
  const mm = String(int(rng, 1, 12)).padStart(2, '0');
  const dd = String(int(rng, 1, 28)).padStart(2, '0');
  const hh = String(int(rng, 0, 23)).padStart(2, '0');
  const mi = String(int(rng, 0, 59)).padStart(2, '0');
  return `20${int(rng, 19, 26)}-${mm}-${dd}T${hh}:${mi}:${String(int(rng, 0, 59)).padStart(2, '0')}Z`;
}
export function date(rng: Rng, lang: Lang): string {
  const y = 2000 + int(rng, 18, 26);
  const m = int(rng, 1, 12);
  const dd = int(rng, 1, 28);
  const p = (n: number) => String(n).padStart(2, '0');
  switch (lang) {
    case 'de':
      return `${p(dd)}.${p(m)}.${y}`;
    case 'fr':
    case 'es':
      return `${p(dd)}/${p(m)}/${y}`;
    case 'ja':
      return `${y}年${m}月${dd}日`;
    default:
      return pick(rng, [`${y}-${p(m)}-${p(dd)}`, `${p(m)}/${p(dd)}/${y}`]);
  }
}
export const version = (rng: Rng): string =>
  pick(rng, [
    () => `v${int(rng, 0, 9)}.${int(rng, 0, 30)}.${int(rng, 0, 20)}`,
    () => `${int(rng, 1, 20)}.${int(rng, 0, 9)}.${int(rng, 0, 99)}`,
    () => `v${int(rng, 1, 12)}.${int(rng, 0, 9)}.${int(rng, 0, 9)}.${int(rng, 0, 99)}`,
    () => `${int(rng, 1, 4)}.${int(rng, 0, 9)}.${int(rng, 0, 20)}-rc.${int(rng, 1, 5)}`,
  ])();
export const orderNumber = (rng: Rng): string =>
  pick(rng, [
    () => `#${d(rng, 9)}`,
    () => `INV-20${int(rng, 19, 26)}-${d(rng, 5)}`,
    () => `${int(rng, 100, 999)}-${d(rng, 7)}-${d(rng, 7)}`,
    () => `PO ${d(rng, 8)}`,
    () => `ORD${d(rng, 10)}`,
  ])();
export const price = (rng: Rng, lang: Lang): string => {
  const whole = int(rng, 1, 25000);
  const cents = String(int(rng, 0, 99)).padStart(2, '0');
  switch (lang) {
    case 'de':
      return `${whole.toLocaleString('de-DE')},${cents} €`;
    case 'fr':
      return `${whole.toLocaleString('fr-FR').replace(/\u202f/g, ' ')},${cents} €`;
    case 'es':
      return `${whole.toLocaleString('es-ES')},${cents} €`;
    case 'ja':
      return `¥${(whole * 100).toLocaleString('ja-JP')}`;
    default:
      return `$${whole.toLocaleString('en-US')}.${cents}`;
  }
};
