/**
 * Addresses with "at" and "dot" spelt out, written so that harvesters miss them ("jane [at] example
 * [dot] com"); email.ts also reads a domain whose dots are spelt out after a real '@'.
 */
import { codeAt, isAsciiAlnum } from '../chars.js';
import type { Candidate } from '../types.js';
import { EMAIL_PRIORITY, FILE_EXTENSIONS, isLocalChar, MAX_DOMAIN, MAX_LOCAL } from './email-chars.js';

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

export function startsSpeltDot(c: number): boolean {
  return c === 32 || c === 9 || c === 91 || c === 40 || c === 123 || c === 60;
}

export interface DomainRead {
  end: number;
  labels: string[];
  speltDot: boolean;
}

/**
 * Reads a domain from `from`: ASCII labels joined by '.' or a spelt-out dot ("dot", "[dot]",
 * "(dot)"), at most MAX_DOMAIN characters. Undefined unless there are two labels or more and the
 * last is a plausible top-level domain.
 */
export function readDomain(text: string, from: number): DomainRead | undefined {
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
export function detectSpeltAddresses(text: string, out: Candidate[]): void {
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
