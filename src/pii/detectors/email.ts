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

// ---- Addresses with "at" and "dot" spelt out, written so that harvesters miss them ----

// The "at" of an obfuscated address: bracketed ("[at]", "(at)", "{at}", "<at>", spaces around
// optional) or a word between spaces or tabs (never a line break: no value runs over one).
const SPELT_AT = /[ \t]?[[({<][ \t]?at[ \t]?[\])}>][ \t]?|[ \t]+at[ \t]+/gi;
// The same for "dot", tried where a domain label ends.
const SPELT_DOT = /[ \t]?[[({<][ \t]?dot[ \t]?[\])}>][ \t]?|[ \t]+dot[ \t]+/iy;

/**
 * Mailbox providers whose domain after a plain "at" means an address: "john at gmail.com" is one,
 * "work at google.com" is not. Exact domains, and providers under many country domains by their
 * first label (yahoo.co.uk, hotmail.fr, gmx.net, yandex.ru...).
 */
const WEBMAIL_DOMAINS = new Set([
  'gmail.com',
  'googlemail.com',
  'msn.com',
  'ymail.com',
  'rocketmail.com',
  'aol.com',
  'icloud.com',
  'me.com',
  'mac.com',
  'proton.me',
  'pm.me',
  'protonmail.com',
  'protonmail.ch',
  'tutanota.com',
  'tutanota.de',
  'tuta.io',
  'web.de',
  't-online.de',
  'freenet.de',
  'posteo.de',
  'mailbox.org',
  'mail.ru',
  'bk.ru',
  'inbox.ru',
  'list.ru',
  'rambler.ru',
  'ya.ru',
  'qq.com',
  '163.com',
  '126.com',
  'sina.com',
  'naver.com',
  'hanmail.net',
  'daum.net',
  'orange.fr',
  'wanadoo.fr',
  'free.fr',
  'laposte.net',
  'sfr.fr',
  'libero.it',
  'virgilio.it',
  'comcast.net',
  'verizon.net',
  'att.net',
  'sbcglobal.net',
  'cox.net',
  'btinternet.com',
  'sky.com',
  'zoho.com',
  'fastmail.com',
  'fastmail.fm',
  'hey.com',
  'mail.com',
  'email.com',
  'seznam.cz',
  'wp.pl',
  'o2.pl',
  'interia.pl',
  'bigpond.com',
  'shaw.ca',
  'rogers.com',
  'rediffmail.com',
  'docomo.ne.jp',
  'ezweb.ne.jp',
  'telefonica.net',
  'terra.com.br',
  'uol.com.br',
  'bol.com.br',
]);
const WEBMAIL_FAMILIES = new Set(['yahoo', 'hotmail', 'outlook', 'live', 'gmx', 'yandex', 'aol']);

// Words that stand before "at" in prose ("meet me at gmail.com", "my account at yahoo.com", "I
// work at outlook.com"): not the local part of an address.
const PROSE_BEFORE_AT = new Set(
  (
    'i me you he him she her it we us they them my your our their this that these those here there who what which ' +
    'is am are was were be been being do does did has have had will would can could may might shall should must ' +
    'not no yes and or but so if as of to for from with by on in into onto up out off over under about look looked ' +
    'looking work works worked working job jobs account accounts inbox mailbox mail email e-mail address addresses ' +
    'login log sign signed signup registered hosted available found reach reached contact contacted meet meeting met ' +
    'see seen stay stayed live lives lived arrive arrived arrives home office team staff people engineer engineers ' +
    'intern developer developers manager user users customer customers support sales help hired employed'
  ).split(' '),
);

// Top-level domains accepted after a spelt-out "dot" following a plain "at" ("jane at example dot
// com"); any two-letter country code as well.
const COMMON_TLDS = new Set([
  'com',
  'org',
  'net',
  'edu',
  'gov',
  'mil',
  'int',
  'info',
  'biz',
  'name',
  'mobi',
  'pro',
  'app',
  'dev',
  'io',
  'ai',
]);

function startsSpeltDot(c: number): boolean {
  return c === 32 || c === 9 || c === 91 || c === 40 || c === 123 || c === 60;
}

interface DomainRead {
  end: number;
  labels: string[];
  speltDot: boolean;
}

/**
 * Reads a domain from `from`: ASCII labels joined by '.' or a spelt-out dot ("dot", "[dot]",
 * "(dot)"), at most MAX_DOMAIN characters. Undefined unless there are two labels or more and the
 * last is a plausible top-level domain.
 */
function readDomain(text: string, from: number): DomainRead | undefined {
  const labels: string[] = [];
  let speltDot = false;
  let pos = from;
  let end = from;
  const limit = Math.min(text.length, from + MAX_DOMAIN);
  for (;;) {
    let labelEnd = pos;
    while (labelEnd < limit && (isAsciiAlnum(text.charCodeAt(labelEnd)) || text.charCodeAt(labelEnd) === 45))
      labelEnd++;
    if (labelEnd === pos || labelEnd - pos > 63) break;
    const label = text.slice(pos, labelEnd);
    if (label.startsWith('-') || label.endsWith('-')) break;
    labels.push(label);
    end = labelEnd;
    if (text.charCodeAt(labelEnd) === 46 && isAsciiAlnum(codeAt(text, labelEnd + 1))) {
      pos = labelEnd + 1;
      continue;
    }
    SPELT_DOT.lastIndex = labelEnd;
    if (SPELT_DOT.exec(text) !== null && isAsciiAlnum(codeAt(text, SPELT_DOT.lastIndex))) {
      speltDot = true;
      pos = SPELT_DOT.lastIndex;
      continue;
    }
    break;
  }
  if (labels.length < 2) return undefined;
  // A word, a digit or an '@' running on from the last label: not the end of an address (a dot or
  // a quote after it ends a sentence or a quotation).
  const after = codeAt(text, end);
  if ((isLocalChar(after) && after !== 46 && after !== 39) || after === 64) return undefined;
  const tld = (labels[labels.length - 1] ?? '').toLowerCase();
  if (!/^[a-z]{2,24}$/.test(tld) || FILE_EXTENSIONS.has(tld)) return undefined;
  return { end, labels, speltDot };
}

/**
 * "jane [at] example [dot] com", "jane(at)example.com", "jane at example dot com", "JANE AT
 * EXAMPLE.COM", "john at gmail.com": addresses written so that harvesters miss them. A bracketed
 * "at" or an upper-case "AT" make an address of any domain; a plain "at" needs the dots spelt out
 * too (with a common top-level domain) or a mailbox provider's domain, and a local part that is
 * not a word of prose ("work at google.com", "meet me at gmail.com" are not addresses).
 */
function detectSpeltAddresses(text: string, out: Candidate[]): void {
  SPELT_AT.lastIndex = 0;
  let scanFrom = 0; // the end of the last address found: no local part reaches back into it
  let m: RegExpExecArray | null;
  while ((m = SPELT_AT.exec(text)) !== null) {
    const tokenStart = m.index;
    const tokenEnd = tokenStart + m[0].length;
    const word = m[0].trim();
    const bracketed = word.length > 2;
    // Local part: walk left over the characters an address may hold.
    let start = tokenStart;
    while (start > scanFrom && tokenStart - start < MAX_LOCAL && isLocalChar(text.charCodeAt(start - 1))) start--;
    // What stops the walk: a run longer than a local part may be, or an '@' (part of an address written otherwise).
    const stoppedBy = codeAt(text, start - 1);
    while (start < tokenStart && (text.charCodeAt(start) === 46 || text.charCodeAt(start) === 39)) start++; // no leading dot/quote
    if (
      start === tokenStart ||
      text.charCodeAt(tokenStart - 1) === 46 ||
      (start > scanFrom && isLocalChar(stoppedBy)) ||
      stoppedBy === 64
    ) {
      SPELT_AT.lastIndex = tokenStart + 1;
      continue;
    }
    const domain = readDomain(text, tokenEnd);
    if (domain === undefined) {
      SPELT_AT.lastIndex = tokenStart + 1;
      continue;
    }
    const local = text.slice(start, tokenStart);
    const tld = (domain.labels[domain.labels.length - 1] ?? '').toLowerCase();
    const prose =
      PROSE_BEFORE_AT.has(local.toLowerCase()) || /^\d+$/.test(local) || domain.labels[0]?.toLowerCase() === 'www';
    let accepted = bracketed || (word === 'AT' && !prose);
    if (!accepted && !prose) {
      const literal = domain.labels.join('.').toLowerCase();
      accepted = domain.speltDot
        ? COMMON_TLDS.has(tld) || tld.length === 2
        : WEBMAIL_DOMAINS.has(literal) || WEBMAIL_FAMILIES.has(domain.labels[0]?.toLowerCase() ?? '');
    }
    if (accepted) {
      out.push({ type: 'EMAIL', start, end: domain.end, priority: EMAIL_PRIORITY });
      SPELT_AT.lastIndex = domain.end;
      scanFrom = domain.end;
    } else {
      SPELT_AT.lastIndex = tokenStart + 1;
    }
  }
}

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
