import { codeAt, isAsciiAlnum, isAsciiLetter, isUnspacedScript } from '../chars.js';
import type { Candidate, Detector } from '../types.js';

export const EMAIL_PRIORITY = 70;

// RFC 5321 limits; bounding both scans keeps a megabyte of '@' or of dots linear.
const MAX_LOCAL = 64;
const MAX_DOMAIN = 253;

// Accented Latin letters appear in real addresses (josé@, müller.de); CJK text, by contrast, is
// written right against an address ("メールはtaro@example.jpです"), so other scripts end it.
function isLatinExtended(c: number): boolean {
  return c >= 0xc0 && c <= 0x24f && c !== 0xd7 && c !== 0xf7;
}

const LETTER = /\p{L}/u;

// Internationalised addresses (RFC 6531) and domains (IDNA): letters of the scripts written with
// spaces between words (Greek, Cyrillic, Arabic, Hebrew, Devanagari...): "user@пример.рф".
function isIdnLetter(c: number): boolean {
  if ((c >= 0x400 && c <= 0x481) || (c >= 0x48a && c <= 0x52f)) return true; // Cyrillic letters, without a regex
  return c >= 0x370 && !isUnspacedScript(c) && !(c >= 0xd800 && c <= 0xdfff) && LETTER.test(String.fromCharCode(c));
}

function isLocalChar(c: number): boolean {
  if (c < 128) return isAsciiAlnum(c) || c === 46 || c === 95 || c === 37 || c === 43 || c === 45 || c === 39;
  return isLatinExtended(c) || isIdnLetter(c);
}

function isDomainChar(c: number): boolean {
  if (c < 128) return isAsciiAlnum(c) || c === 46 || c === 45;
  return isLatinExtended(c) || isIdnLetter(c);
}

/** A top-level domain: ASCII letters, its punycode form (`xn--p1ai`), or the letters of one IDN (`рф`). */
function validTld(tld: string): boolean {
  if (tld.length < 2) return false;
  if (/^xn--[a-z0-9-]*[a-z0-9]$/i.test(tld)) return true;
  let ascii = 0;
  for (let i = 0; i < tld.length; i++) {
    const c = tld.charCodeAt(i);
    if (isAsciiLetter(c)) ascii++;
    else if (!isIdnLetter(c)) return false;
  }
  return ascii === tld.length || ascii === 0;
}

// Asset names such as `logo@2x.png` have the shape of an address but a file extension for a TLD.
const FILE_EXTENSIONS = new Set([
  'png',
  'jpg',
  'jpeg',
  'gif',
  'svg',
  'webp',
  'ico',
  'bmp',
  'tif',
  'tiff',
  'avif',
  'heic',
  'js',
  'mjs',
  'cjs',
  'ts',
  'tsx',
  'jsx',
  'css',
  'scss',
  'map',
  'json',
  'lock',
  'wasm',
]);

// Extensions of files that notes are kept in; also ccTLDs (md, pl...), so stripped only when the
// domain still has a dot without them.
const DOCUMENT_EXTENSIONS = new Set(['md', 'txt', 'json', 'yaml', 'yml', 'csv', 'log', 'pdf', 'html', 'xml', 'eml', 'vcf', 'ics']);

/**
 * Finds addresses by jumping from '@' to '@' and scanning outwards a bounded distance, so text
 * without '@' costs one indexOf.
 */
export const detectEmails: Detector = (text: string, _config, out: Candidate[]) => {
  let scanFrom = 0; // nothing before this offset may start a new address (it belonged to the last one)
  let at = text.indexOf('@');
  while (at !== -1) {
    let next = text.indexOf('@', at + 1);
    // Local part: walk left over allowed characters.
    let start = at;
    while (start > scanFrom && at - start < MAX_LOCAL && isLocalChar(text.charCodeAt(start - 1))) start--;
    while (start < at && (text.charCodeAt(start) === 46 || text.charCodeAt(start) === 39)) start++; // no leading dot/quote
    const localOk = start < at && text.charCodeAt(at - 1) !== 46;
    // A local part that filled the whole window is really longer than the limit: not an address.
    const localTooLong = at - start >= MAX_LOCAL && isLocalChar(codeAt(text, start - 1));
    if (localOk && !localTooLong) {
      let end = at + 1;
      const limit = Math.min(text.length, at + 1 + MAX_DOMAIN);
      while (end < limit && isDomainChar(text.charCodeAt(end))) end++;
      // Trailing dots and hyphens are sentence punctuation, not domain.
      while (end > at + 1 && (text.charCodeAt(end - 1) === 46 || text.charCodeAt(end - 1) === 45)) end--;
      const domainEnd = validDomainEnd(text, at + 1, end);
      if (domainEnd > 0 && !isSshRemote(text, start, at, domainEnd) && !isUrlUserInfo(text, start)) {
        out.push({ type: 'EMAIL', start, end: domainEnd, priority: EMAIL_PRIORITY });
        scanFrom = domainEnd;
        while (next !== -1 && next < domainEnd) next = text.indexOf('@', next + 1);
      }
    }
    at = next;
  }
};

/** Returns the end of a plausible domain (labels, at least one dot, alphabetic TLD), or 0. */
function validDomainEnd(text: string, from: number, to: number): number {
  if (to <= from) return 0;
  const domain = text.slice(from, to);
  const labels = domain.split('.');
  if (labels.length < 2) return 0;
  for (const label of labels) {
    if (label.length === 0 || label.length > 63) return 0;
    if (label.startsWith('-') || label.endsWith('-')) return 0;
  }
  const tld = labels[labels.length - 1] ?? '';
  if (!validTld(tld)) return 0;
  if (FILE_EXTENSIONS.has(tld.toLowerCase())) return 0;
  // "jane@example.com.md" is a file named after an address: the extension is not part of it.
  if (labels.length >= 3 && DOCUMENT_EXTENSIONS.has(tld.toLowerCase())) return to - tld.length - 1;
  return to;
}

/** `git@github.com:org/repo.git` is a transport address for a service account, not a person's. */
function isSshRemote(text: string, start: number, at: number, end: number): boolean {
  return text.slice(start, at) === 'git' && codeAt(text, end) === 58;
}

/**
 * `scheme://user:password@host`: the part before '@' is a password (the SECRET detector reports
 * it), and the host is not a mailbox. True when the same whitespace-free token has a "://" before
 * `start` with no '/' between it and the address.
 */
function isUrlUserInfo(text: string, start: number): boolean {
  const from = Math.max(0, start - 300);
  for (let i = start - 1; i >= from; i--) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 9 || c === 10 || c === 13 || c === 34 || c === 39) return false;
    if (c === 47) return i >= 2 && text.charCodeAt(i - 1) === 47 && text.charCodeAt(i - 2) === 58;
  }
  return false;
}
