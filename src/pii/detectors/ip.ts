import { isIPv6 } from 'node:net';
import { codeAt, isDigit, isHex, isWordChar } from '../chars.js';
import type { Candidate, Detector } from '../types.js';
import { VERSION_BEFORE } from './context.js';

// "ghcr.io/acme/api:1.5.2.45" — a tag glued to a name by ':' is a version; "host:10.0.0.1" is not.
const IMAGE_TAG_BEFORE =
  /(?<![\w.-])(?![\w.-]*(?:ip|addr|address|host|server|src|dst|from|to|peer|gateway|gw|dns|nameserver|proxy|upstream|listen|bind):$)[\w./-]*[A-Za-z][\w./-]*:$/i;

export const IP_PRIORITY = 50;

// Octets without leading zeros (0-255); bounded, so each start costs a few steps.
const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4 = new RegExp(`(?<![\\w.\\-])${OCTET}\\.${OCTET}\\.${OCTET}\\.${OCTET}(?![\\w]|\\.\\d|-\\w)`, 'g');

// Words that say the dotted quad after them is an address, so "ip 1.2.3.4" counts though it looks like a version.
const ADDRESS_BEFORE =
  /(?:\b(?:ip|ipv4|ips|addr|address|adresse|dirección|indirizzo|host|hostname|server|serveur|src|dst|source|peer|gateway|gw|dns|nameserver|resolver|proxy|upstream|listen|bind|client|remote|from|connect(?:ed|ing)?(?: to)?|ssh|ping|curl|nslookup|dig)\b[\s:=@'"(]{0,4}|@|\/\/)$/i;

/**
 * Addresses that identify no host: this network and unspecified (0/8), loopback (127/8), the
 * documentation ranges (192.0.2/24, 198.51.100/24, 203.0.113/24, RFC 5737), benchmarking
 * (198.18/15), multicast and reserved (224/3, which also holds the broadcast address), and netmasks
 * (contiguous ones, also their inverse, the wildcard masks of ACLs).
 */
export function nonHostIpv4(octets: readonly number[]): boolean {
  const [a, b, c] = octets as [number, number, number, number];
  if (a === 0 || a === 127 || a >= 224) return true;
  if ((a === 192 && b === 0 && c === 2) || (a === 198 && b === 51 && c === 100) || (a === 203 && b === 0 && c === 113))
    return true;
  if (a === 198 && (b === 18 || b === 19)) return true;
  const value = ((octets[0]! << 24) | (octets[1]! << 16) | (octets[2]! << 8) | octets[3]!) >>> 0;
  const inverse = ~value >>> 0;
  const contiguous = (v: number) => v !== 0 && (v | (v - 1)) >>> 0 === 0xffffffff; // ones then zeros
  return contiguous(value) || (inverse !== 0xffffffff && contiguous(inverse) && octets[3] === 255);
}

/**
 * Dotted quads that are host addresses, not versions: no "v" / "version" / "release" just before,
 * no "-beta" / "-rc1" / "-2" suffix after, not a non-host address (nonHostIpv4), and when every
 * part is a single digit ("1.2.3.4", "4.8.0.1", a version more often than not) only with a word
 * such as "ip", "host" or "server" before it. `allIps` keeps every well-formed address.
 */
function detectIpv4(text: string, out: Candidate[], allIps: boolean): void {
  IPV4.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = IPV4.exec(text)) !== null) {
    const start = m.index;
    const before = text.slice(Math.max(0, start - 24), start);
    if (VERSION_BEFORE.test(before) || IMAGE_TAG_BEFORE.test(before)) continue;
    if (!allIps) {
      const octets = m[0].split('.').map(Number);
      if (nonHostIpv4(octets)) continue;
      if (m[0].length === 7 && !ADDRESS_BEFORE.test(before)) continue;
    }
    out.push({ type: 'IP_ADDRESS', start, end: start + m[0].length, priority: IP_PRIORITY });
  }
}

const MAX_IPV6 = 45; // longest textual IPv6, with an embedded IPv4 tail

function isIpv6Char(c: number): boolean {
  return isHex(c) || c === 58 || c === 46;
}

/**
 * IPv6: around each pair of nearby colons take the whole run of hex digits, colons and dots; a run
 * is examined once however many colons it has, so this is linear. node:net decides validity.
 */
function detectIpv6(text: string, out: Candidate[], allIps: boolean): void {
  // Every IPv6 text form has two colons at most four hex digits apart ("::" or ":db8:").
  const twoColons = /:[0-9A-Fa-f]{0,4}:/g;
  let processedTo = 0; // runs before this offset were examined already; never scan back past it
  let m: RegExpExecArray | null;
  while ((m = twoColons.exec(text)) !== null) {
    const colon = m.index;
    let start = colon;
    while (start > processedTo && isIpv6Char(text.charCodeAt(start - 1))) start--;
    let end = colon + 1;
    while (end < text.length && isIpv6Char(text.charCodeAt(end))) end++;
    processedTo = end;
    twoColons.lastIndex = end;
    // Trailing sentence punctuation ("...::1." or "fe80::1:") is not part of the address.
    let trimmedEnd = end;
    while (trimmedEnd > colon && text.charCodeAt(trimmedEnd - 1) === 46) trimmedEnd--;
    if (trimmedEnd - start > MAX_IPV6 || trimmedEnd - start < 2) continue;
    const candidate = text.slice(start, trimmedEnd);
    const before = codeAt(text, start - 1);
    const after = codeAt(text, trimmedEnd);
    const bounded = !isWordChar(before) && !isWordChar(after) && before !== 58 && after !== 58;
    // The unspecified address alone ("listen on ::", "src=::") is reported in 'all' mode when nothing but
    // space, '=' or brackets is around it; "::" in code ("std::", "a :: b") is not an address.
    const unspecified =
      allIps &&
      candidate === '::' &&
      (before === -1 || before === 32 || before === 61 || before === 40 || before === 91) &&
      (after === -1 || after === 32 || after === 44 || after === 41 || after === 93 || after === 10);
    if (
      bounded &&
      (unspecified || (plausibleIpv6(candidate) && isIPv6(candidate))) &&
      (allIps || !nonHostIpv6(candidate))
    ) {
      out.push({ type: 'IP_ADDRESS', start, end: trimmedEnd, priority: IP_PRIORITY });
    }
  }
}

/**
 * Excludes shapes node accepts but people write for other reasons: a bare "::", C++ "a::b" with
 * letters only, and clock times are rejected by isIPv6 already. At least one digit, and either all
 * eight groups or a "::" with two or more groups.
 */
function plausibleIpv6(candidate: string): boolean {
  let hasDigit = false;
  for (let i = 0; i < candidate.length; i++)
    if (isDigit(candidate.charCodeAt(i))) {
      hasDigit = true;
      break;
    }
  if (!hasDigit) return false;
  const groups = candidate.split(':').filter((g) => g.length > 0).length;
  return candidate.includes('::') ? groups >= 2 || candidate.startsWith('::1') : groups >= 8 || candidate.includes('.');
}

/** Loopback, unspecified, documentation (2001:db8::/32) and multicast (ff00::/8) IPv6 addresses. */
function nonHostIpv6(candidate: string): boolean {
  const lower = candidate.toLowerCase();
  return (
    lower === '::1' ||
    lower === '::' ||
    /^0{0,4}(?::0{0,4}){0,6}:0{0,4}1$/.test(lower) ||
    /^2001:0{0,2}db8:/.test(lower) ||
    lower.startsWith('ff')
  );
}

export const detectIps: Detector = (text: string, config, out: Candidate[]) => {
  detectIpv4(text, out, config.allIps === true);
  detectIpv6(text, out, config.allIps === true);
};
