import { codeAt, isAsciiAlnum, isAsciiLetter } from '../chars.js';
import type { Candidate, Detector } from '../types.js';
import {
  EMAIL_PRIORITY,
  FILE_EXTENSIONS,
  isIdnLetter,
  isLatinExtended,
  isLocalChar,
  MAX_DOMAIN,
  MAX_LOCAL,
} from './email-chars.js';
import { detectSpeltAddresses, readDomain, startsSpeltDot } from './email-spelt.js';

export { EMAIL_PRIORITY } from './email-chars.js';

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

// Extensions of files that notes are kept in; also ccTLDs (md, pl...), so stripped only when the
// domain still has a dot without them.
const DOCUMENT_EXTENSIONS = new Set([
  'md',
  'txt',
  'json',
  'yaml',
  'yml',
  'csv',
  'log',
  'pdf',
  'html',
  'xml',
  'eml',
  'vcf',
  'ics',
]);

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
      let scanEnd = at + 1;
      const limit = Math.min(text.length, at + 1 + MAX_DOMAIN);
      while (scanEnd < limit && isDomainChar(text.charCodeAt(scanEnd))) scanEnd++;
      // Trailing dots and hyphens are sentence punctuation, not domain.
      while (scanEnd > at + 1 && (text.charCodeAt(scanEnd - 1) === 46 || text.charCodeAt(scanEnd - 1) === 45))
        scanEnd--;
      const domainEnd = validDomainEnd(text, at + 1, scanEnd);
      // "jane@example dot com": the domain's dots spelt out; "jane@[192.0.2.1]": an address literal (RFC 5321).
      // (A spelt dot starts with a space, a tab or a bracket: only then is the domain read again.)
      const spelt = domainEnd > 0 || !startsSpeltDot(codeAt(text, scanEnd)) ? undefined : readDomain(text, at + 1);
      const end = spelt?.speltDot === true ? spelt.end : domainEnd > 0 ? domainEnd : addressLiteralEnd(text, at + 1);
      if (end > 0 && !isSshRemote(text, start, at, end) && !isUrlUserInfo(text, start)) {
        out.push({ type: 'EMAIL', start, end, priority: EMAIL_PRIORITY });
        scanFrom = end;
        while (next !== -1 && next < end) next = text.indexOf('@', next + 1);
      }
    }
    at = next;
  }
  detectSpeltAddresses(text, out);
};

// RFC 5321's IPv4 address literal. Without the brackets ("root@10.0.0.5") it is a login on a host,
// whose address the IP detector reports.
const ADDRESS_LITERAL = /\[(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\]/y;

/** The end of `[a.b.c.d]` at `from`, or 0. */
function addressLiteralEnd(text: string, from: number): number {
  if (text.charCodeAt(from) !== 91) return 0;
  ADDRESS_LITERAL.lastIndex = from;
  return ADDRESS_LITERAL.test(text) ? ADDRESS_LITERAL.lastIndex : 0;
}

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
  // "jane@example.com.md" is a file named after an address: the extension is not part of it (the
  // rest must be a domain of its own). Before the asset check: "jane@example.com.json" holds one too.
  if (labels.length >= 3 && DOCUMENT_EXTENSIONS.has(tld.toLowerCase()))
    return validDomainEnd(text, from, to - tld.length - 1);
  if (!validTld(tld)) return 0;
  if (FILE_EXTENSIONS.has(tld.toLowerCase())) return 0;
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
