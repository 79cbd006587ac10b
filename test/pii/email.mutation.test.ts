/**
 * The e-mail detector's edges, for mutation testing (scripts/mutation/targets.mjs, pii-email-ssn):
 * the RFC 5321 length limits, which characters a local part and a domain may hold, what ends an
 * address, top-level domains, file names that look like addresses, transport and URL forms, and the
 * addresses with "at" and "dot" spelt out.
 */
import { describe, expect, it } from 'vitest';
import { detectEmails } from '../../src/pii/detectors/email.js';
import { redact } from '../../src/pii/index.js';
import type { Candidate } from '../../src/pii/types.js';

const emails = (text: string): string[] =>
  redact(text)
    .findings.filter((f) => f.type === 'EMAIL')
    .map((f) => text.slice(f.start, f.end));

describe('EMAIL: length limits', () => {
  it('a local part of 64 characters is an address, 65 are not', () => {
    const local64 = 'a'.repeat(64);
    expect(emails(`to ${local64}@example.com`)).toEqual([`${local64}@example.com`]);
    expect(emails(`to a${local64}@example.com`)).toEqual([]);
    // At the very start of the text too.
    expect(emails(`${local64}@example.com`)).toEqual([`${local64}@example.com`]);
  });

  it('a domain of 253 characters is read whole, a longer one only up to the limit', () => {
    const label = 'b'.repeat(60);
    const domain253 = `${label}.${label}.${label}.${label}.${'c'.repeat(5)}.com`; // 4 * 61 + 6 + 3 = 253
    expect(domain253.length).toBe(253);
    expect(emails(`x ${'j'}@${domain253} y`)).toEqual([`j@${domain253}`]);
    const domain254 = `${label}.${label}.${label}.${label}.${'c'.repeat(6)}.com`;
    // Cut at 253 characters, the last label is "co": still a domain, cut where the limit is.
    expect(emails(`x j@${domain254} y`)).toEqual([`j@${domain254.slice(0, 253)}`]);
  });

  it('a label of 63 characters is valid, 64 are not', () => {
    expect(emails(`x j@${'d'.repeat(63)}.com y`)).toEqual([`j@${'d'.repeat(63)}.com`]);
    expect(emails(`x j@${'d'.repeat(64)}.com y`)).toEqual([]);
  });
});

describe('EMAIL: the local part', () => {
  it.each([
    ["o'brien@mail.ie", "o'brien@mail.ie"],
    ['first.last@example.com', 'first.last@example.com'],
    ['a_b@example.com', 'a_b@example.com'],
    ['a%b@example.com', 'a%b@example.com'],
    ['a+tag@example.com', 'a+tag@example.com'],
    ['a-b@example.com', 'a-b@example.com'],
    ['Z9@example.com', 'Z9@example.com'],
    ['josé@example.com', 'josé@example.com'],
    ['ÀÿȀɏ@example.com', 'ÀÿȀɏ@example.com'],
    ['иван@example.com', 'иван@example.com'],
    ['ѐҁ@example.com', 'ѐҁ@example.com'],
    ['ҊԯЀ@example.com', 'ҊԯЀ@example.com'],
    ['ωμέγα@example.com', 'ωμέγα@example.com'],
  ])('%s', (text, value) => {
    expect(emails(`mail ${text} now`)).toEqual([value]);
  });

  it.each([
    ['a×b@example.com', 'b@example.com'], // the multiplication sign is not a letter
    ['a÷b@example.com', 'b@example.com'],
    ['a\u00bfb@example.com', 'b@example.com'], // just below the Latin letters
    ['a\u0250b@example.com', 'b@example.com'], // just above Latin Extended-B (IPA, no longer taken as Latin)
    ['a/b@example.com', 'b@example.com'],
    ['a:b@example.com', 'b@example.com'],
    ['a!b@example.com', 'b@example.com'],
    ['a"b@example.com', 'b@example.com'],
    ['メールはtaro@example.jp', 'taro@example.jp'],
    ['a\u0482b@example.com', 'b@example.com'], // a Cyrillic sign, not a letter
    ['a\u0489b@example.com', 'b@example.com'],
  ])('%s: the address starts after the character that is not part of one', (text, value) => {
    expect(emails(`mail ${text} now`)).toEqual([value]);
  });

  it.each([
    ['.jane@example.com', 'jane@example.com'],
    ["'jane@example.com", 'jane@example.com'],
    [".'.jane@example.com", 'jane@example.com'],
  ])('%s: leading dots and quotes are not part of it', (text, value) => {
    expect(emails(`mail ${text} now`)).toEqual([value]);
  });

  it.each(['jane.@example.com', '@example.com', '..@example.com', "'@example.com"])('%s is no address', (text) => {
    expect(emails(`mail ${text} now`)).toEqual([]);
  });
});

describe('EMAIL: the domain and what ends it', () => {
  it.each([
    ['jane@example.com.', 'jane@example.com'],
    ['jane@example.com-', 'jane@example.com'],
    ['jane@example.com.-.', 'jane@example.com'],
    ['jane@sub-domain.example.co.uk', 'jane@sub-domain.example.co.uk'],
    ['jane@müller.de', 'jane@müller.de'],
    ['user@пример.рф', 'user@пример.рф'],
    ['user@example.xn--p1ai', 'user@example.xn--p1ai'],
    ['user@example.XN--P1AI', 'user@example.XN--P1AI'],
    ['jane@example.com,', 'jane@example.com'],
    ['<jane@example.com>', 'jane@example.com'],
  ])('%s', (text, value) => {
    expect(emails(`mail ${text} now`)).toEqual([value]);
  });

  it.each([
    'jane@example', // no dot
    'jane@example.c', // one-letter top-level domain
    'jane@example.c0m', // a digit in it
    'jane@example.co-', // '-' taken off leaves .co: still valid, tested below
    'jane@.example.com',
    'jane@example..com',
    'jane@-example.com',
    'jane@example-.com',
    'jane@example.xn-p1ai', // not punycode, and a hyphen is no letter
    'jane@example.рфx',
    'jane@example.xрф',
  ])('%s', (text) => {
    const found = emails(`mail ${text} now`);
    if (text === 'jane@example.co-') expect(found).toEqual(['jane@example.co']);
    else expect(found).toEqual([]);
  });

  it.each([
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
  ])('logo@2x.%s is an asset name, not an address', (ext) => {
    expect(emails(`see logo@2x.${ext} here`)).toEqual([]);
    expect(emails(`see logo@2x.${ext.toUpperCase()} here`)).toEqual([]);
  });

  it.each(['md', 'txt', 'yaml', 'yml', 'csv', 'log', 'pdf', 'html', 'xml', 'eml', 'vcf', 'ics'])(
    'jane@example.com.%s is a file named after the address; jane@example.%s is an address',
    (ext) => {
      expect(emails(`see jane@example.com.${ext} here`)).toEqual(['jane@example.com']);
      expect(emails(`see jane@example.com.${ext.toUpperCase()} here`)).toEqual(['jane@example.com']);
      expect(emails(`see jane@example.${ext} here`)).toEqual([`jane@example.${ext}`]);
    },
  );

  it('an address literal in brackets is an address; a bad one, or one without its bracket, is not', () => {
    expect(emails('to jane@[192.0.2.1] now')).toEqual(['jane@[192.0.2.1]']);
    expect(emails('to jane@[255.249.200.199] now')).toEqual(['jane@[255.249.200.199]']);
    expect(emails('to jane@[256.0.2.1] now')).toEqual([]);
    expect(emails('to jane@[192.0.2] now')).toEqual([]);
    expect(emails('to jane@[192.0.2.1 now')).toEqual([]);
    expect(emails('to jane@(192.0.2.1) now')).toEqual([]);
  });

  it('two addresses in a row, and an @ inside the first, are read as what they are', () => {
    expect(emails('a@example.com b@example.org')).toEqual(['a@example.com', 'b@example.org']);
    expect(emails('a@example.com,b@example.org')).toEqual(['a@example.com', 'b@example.org']);
    // The second '@' ends the first domain; nothing before the end of an address starts another.
    expect(emails('a@example.com@example.org')).toEqual(['a@example.com']);
  });
});

describe('EMAIL: transport and URL forms', () => {
  it('git@host:org/repo is a transport address; git@host alone and other users are addresses', () => {
    expect(emails('clone git@github.com:org/repo.git now')).toEqual([]);
    expect(emails('write git@github.com now')).toEqual(['git@github.com']);
    expect(emails('clone gitx@github.com:org/repo.git now')).toEqual(['gitx@github.com']);
    expect(emails('clone xgit@github.com:org/repo.git now')).toEqual(['xgit@github.com']);
  });

  it('the user info of a URL is not an address; an address after a path or a space is', () => {
    expect(emails('https://user:pw@example.com/x')).toEqual([]);
    expect(emails('ftp://jane@example.com')).toEqual([]);
    expect(emails('https://example.com/jane@example.org')).toEqual(['jane@example.org']);
    expect(emails('https://example.com jane@example.org')).toEqual(['jane@example.org']);
    expect(emails('x:/jane@example.org')).toEqual(['jane@example.org']);
    expect(emails('//jane@example.org')).toEqual(['jane@example.org']);
    // A quote ends the token: it is no part of a URL (a leading quote is not part of an address either).
    expect(emails("https://'jane@example.org")).toEqual(['jane@example.org']);
    for (const sep of ['\t', '\n', '\r', '"']) {
      expect(emails(`https://x${sep}jane@example.org`), JSON.stringify(sep)).toEqual(['jane@example.org']);
    }
  });

  it('the look back for a URL is bounded', () => {
    // A "://" more than 300 characters before the address is not looked for by the email detector
    // (its own candidates, before any other detector's claim)...
    const text = `https://${'a'.repeat(320)}:jane@example.org`;
    const own: Candidate[] = [];
    detectEmails(text, { phoneRegions: [] }, own);
    expect(own.map((c) => text.slice(c.start, c.end))).toEqual(['jane@example.org']);
    // ...while the URL password detector reads a user of any length, so the engine redacts the
    // password of this URL (the user part is no secret, the host stays).
    expect(emails(text)).toEqual([]);
    expect(redact(text).text).toBe(`https://${'a'.repeat(320)}:[REDACTED:SECRET]@example.org`);
  });
});

describe('EMAIL: "at" and "dot" spelt out', () => {
  it.each([
    ['jane [at] example [dot] com', 'jane [at] example [dot] com'],
    ['jane(at)example.com', 'jane(at)example.com'],
    ['jane{at}example.com', 'jane{at}example.com'],
    ['jane<at>example.com', 'jane<at>example.com'],
    ['jane [ at ] example.com', 'jane [ at ] example.com'],
    ['jane\t[at]\texample.com', 'jane\t[at]\texample.com'],
    ['jane [AT] example.org', 'jane [AT] example.org'],
    ['JANE AT EXAMPLE.COM', 'JANE AT EXAMPLE.COM'],
    ['jane at example dot com', 'jane at example dot com'],
    ['jane at example dot org', 'jane at example dot org'],
    ['jane at example dot de', 'jane at example dot de'],
    ['jane at example (dot) io', 'jane at example (dot) io'],
    ['jane at mail dot example dot net', 'jane at mail dot example dot net'],
    ['john at gmail.com', 'john at gmail.com'],
    ['john at GMail.Com', 'john at GMail.Com'],
    ['john at yahoo.co.uk', 'john at yahoo.co.uk'],
    ['john at hotmail.fr', 'john at hotmail.fr'],
    ['john at gmx.net', 'john at gmx.net'],
    ['john at web.de', 'john at web.de'],
    ['jane@example dot com', 'jane@example dot com'],
    ['jane@example [dot] com', 'jane@example [dot] com'],
    ['j.doe at gmail.com', 'j.doe at gmail.com'],
    ['jane [at] www.example.com', 'jane [at] www.example.com'], // a bracketed at: any domain
    ['.jdoe at gmail.com', 'jdoe at gmail.com'], // a leading dot is no part of it, as with '@'
    ["'jane [at] example.com'", 'jane [at] example.com'], // quoted
  ])('%s', (text, value) => {
    expect(emails(`Write to ${text} please`)).toEqual([value]);
  });

  it.each([
    'meet me at gmail.com',
    'my account at yahoo.com',
    'I work at outlook.com',
    'work at google.com', // not a mailbox provider
    'jane at example.com', // plain "at" and a plain dot: any domain would be prose
    'jane at example dot exe', // not a common top-level domain
    'jane at example dot comx',
    '42 at example dot com', // a number is no local part
    'jane at www.gmail.com',
    'jane AT www.example.com',
    'jane at\ngmail.com', // never across a line break
    'jane\nat gmail.com',
    'jane. at gmail.com',
    'jane [at] example.png',
    'jane [at] example',
    'jane [at] example.c',
    'jane [at] -example.com',
    'jane [at] example-.com',
    'jane [at] example.com9',
    'jane [at] example.comé',
    'x@jane [at] example.com', // an '@' right before the local part
  ])('%s is not an address', (text) => {
    expect(emails(`Note: ${text} please`)).toEqual([]);
  });

  it('a label of 63 characters may be read, 64 may not', () => {
    expect(emails(`x jane [at] ${'e'.repeat(63)}.com y`)).toEqual([`jane [at] ${'e'.repeat(63)}.com`]);
    expect(emails(`x jane [at] ${'e'.repeat(64)}.com y`)).toEqual([]);
  });

  it('a top-level domain of 24 letters is one, 25 are not', () => {
    expect(emails(`x jane [at] example.${'t'.repeat(24)} y`)).toEqual([`jane [at] example.${'t'.repeat(24)}`]);
    expect(emails(`x jane [at] example.${'t'.repeat(25)} y`)).toEqual([]);
  });

  it('a local part of 64 characters before a spelt "at" is one; one running on past it is not', () => {
    const local = 'l'.repeat(64);
    expect(emails(`x ${local} [at] example.com y`)).toEqual([`${local} [at] example.com`]);
    expect(emails(`x l${local} [at] example.com y`)).toEqual([]);
  });

  it('after a refused "at" the scan goes on: the next one in the text is found', () => {
    expect(emails('meet me at gmail.com or jane [at] example.com')).toEqual(['jane [at] example.com']);
    expect(emails('jane [at] example.com and john [at] example.org')).toEqual([
      'jane [at] example.com',
      'john [at] example.org',
    ]);
  });

  it('every listed mailbox provider makes a plain "at" an address', () => {
    const providers = [
      'googlemail.com',
      'proton.me',
      'posteo.de',
      'mail.ru',
      'qq.com',
      'naver.com',
      'orange.fr',
      'libero.it',
      'comcast.net',
      'uol.com.br',
      'docomo.ne.jp',
      'fastmail.fm',
    ];
    for (const p of providers) expect(emails(`write john at ${p} now`), p).toEqual([`john at ${p}`]);
    for (const family of ['yahoo.de', 'outlook.es', 'live.nl', 'yandex.ru', 'aol.de'])
      expect(emails(`write john at ${family} now`), family).toEqual([`john at ${family}`]);
    expect(emails('write john at example.ru now')).toEqual([]);
  });
});

// The detector's tables, as the detector is meant to hold them (each entry matters to someone's address).
const WEBMAIL_DOMAINS = [
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
];
const WEBMAIL_FAMILIES = ['yahoo', 'hotmail', 'outlook', 'live', 'gmx', 'yandex', 'aol'];
const COMMON_TLDS = [
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
];

describe('EMAIL: the tables of the spelt-out forms', () => {
  it.each(WEBMAIL_DOMAINS)('john at %s is an address (a mailbox provider)', (domain) => {
    expect(emails(`write john at ${domain} now`)).toEqual([`john at ${domain}`]);
  });

  it.each(WEBMAIL_FAMILIES)('john at %s.<any country> is an address (a provider under many domains)', (family) => {
    expect(emails(`write john at ${family}.co.uk now`)).toEqual([`john at ${family}.co.uk`]);
    expect(emails(`write john at ${family.toUpperCase()}.es now`)).toEqual([`john at ${family.toUpperCase()}.es`]);
    // The provider's name must be the first label.
    expect(emails(`write john at my${family}.es now`)).toEqual([]);
  });

  it.each(COMMON_TLDS)('jane at example dot %s is an address (a common top-level domain)', (tld) => {
    expect(emails(`write jane at example dot ${tld} now`)).toEqual([`jane at example dot ${tld}`]);
  });

  it('any two-letter country code after a spelt dot counts, three unknown letters do not', () => {
    expect(emails('write jane at example dot qz now')).toEqual(['jane at example dot qz']);
    expect(emails('write jane at example dot qzx now')).toEqual([]);
    expect(emails('write jane at example dot q now')).toEqual([]);
  });

  // One word from each part of the prose list.
  it.each(['my', 'I', 'was', 'about', 'account', 'contact', 'office', 'support', 'Them', 'hired'])(
    '"%s at gmail.com" is prose',
    (word) => {
      expect(emails(`and ${word} at gmail.com now`)).toEqual([]);
      expect(emails(`and ${word} AT EXAMPLE.COM now`)).toEqual([]);
      // A bracketed at is an address whatever comes before it.
      expect(emails(`and ${word} [at] example.com now`)).toEqual([`${word} [at] example.com`]);
    },
  );

  it('a number before a plain or upper-case at is no local part; digits inside a word are', () => {
    expect(emails('and 42 AT EXAMPLE.COM now')).toEqual([]);
    expect(emails('and j42 AT EXAMPLE.COM now')).toEqual(['j42 AT EXAMPLE.COM']);
    expect(emails('and 42j at gmail.com now')).toEqual(['42j at gmail.com']);
  });

  it('a plain at in lower or mixed case needs a provider or spelt dots; only "AT" in capitals stands for any domain', () => {
    expect(emails('and jane At example.com now')).toEqual([]);
    expect(emails('and jane aT example.com now')).toEqual([]);
    expect(emails('and jane AT example.com now')).toEqual(['jane AT example.com']);
    expect(emails('and jane AT www.example.com now')).toEqual([]);
  });
});

describe('EMAIL: spelt-out forms, the exact characters', () => {
  it.each([
    ['jane[at]example.com', 'jane[at]example.com'],
    ['jane [at]example.com', 'jane [at]example.com'],
    ['jane[at] example.com', 'jane[at] example.com'],
    ['jane(at)example(dot)com', 'jane(at)example(dot)com'],
    ['jane [ at ] example [ dot ] com', 'jane [ at ] example [ dot ] com'],
    ['jane [at] example{dot}com', 'jane [at] example{dot}com'],
    ['jane [at] example<dot>com', 'jane [at] example<dot>com'],
    ['jane [at] example dot com', 'jane [at] example dot com'],
    ['jane [at] example  dot  com', 'jane [at] example  dot  com'],
    ['jane\tat\texample\tdot\tcom', 'jane\tat\texample\tdot\tcom'],
    ['jane  at  example dot com', 'jane  at  example dot com'],
    ['jane [at] mail-1.example.com', 'jane [at] mail-1.example.com'],
  ])('%s', (text, value) => {
    expect(emails(`Write to ${text}, please`)).toEqual([value]);
  });

  it.each([
    'jane [at example.com', // an unclosed bracket
    'jane at] example.com',
    'jane [[at]] example.com',
    'jane [at]] example.com',
    'jane [a t] example.com',
    'jane [at]  example.com', // two spaces after the bracket
    'jane  [at] example.com',
    'jane [  at ] example.com',
    'jane [at  ] example.com',
    'jane [at] example.',
    'jane [at] example dot',
    'jane [at] example dot .com',
    'jane [at] example dotcom',
    'jane [at] example [dot]', // a spelt dot needs a label after it
    'jane [at] .example.com',
  ])('%s is not an address', (text) => {
    // Nothing after it: a word there could be read as a top-level domain.
    expect(emails(`Note: ${text}`)).toEqual([]);
  });

  it('a spelt dot is read only after a label, and ends where the labels end', () => {
    expect(emails('Write jane [at] example.com dot.')).toEqual(['jane [at] example.com']);
    expect(emails('Write jane [at] example dot com.')).toEqual(['jane [at] example dot com']);
    expect(emails('Write jane [at] example dot co-uk now')).toEqual([]);
  });

  it('what runs on from the last label decides', () => {
    expect(emails('Write jane [at] example.com! now')).toEqual(['jane [at] example.com']);
    expect(emails('Write jane [at] example.com_x now')).toEqual([]);
    expect(emails('Write jane [at] example.com%x now')).toEqual([]);
    expect(emails("Write jane [at] example.com's now")).toEqual(['jane [at] example.com']);
    expect(emails('Write jane [at] example.comé now')).toEqual([]);
    expect(emails('Write jane [at] example.com@x now')).toEqual([]);
  });

  it('the local part before a spelt at: its leading dots and quotes are dropped, an inner dot kept', () => {
    expect(emails("Write 'jane [at] example.com now")).toEqual(['jane [at] example.com']);
    expect(emails("Write '.jane [at] example.com now")).toEqual(['jane [at] example.com']);
    expect(emails('Write j.ane [at] example.com now')).toEqual(['j.ane [at] example.com']);
    expect(emails('Write jane. [at] example.com now')).toEqual([]);
    expect(emails('Write jane.[at] example.com now')).toEqual([]);
    expect(emails('Write . [at] example.com now')).toEqual([]);
    expect(emails('[at] example.com')).toEqual([]);
  });

  it('a spelt address at the very start of the text', () => {
    expect(emails('jane [at] example.com')).toEqual(['jane [at] example.com']);
    expect(emails('jane at gmail.com')).toEqual(['jane at gmail.com']);
  });

  it('a spelt at inside an address found already starts nothing new', () => {
    expect(emails('jane@example.com at gmail.com')).toEqual(['jane@example.com']);
    expect(emails('mail jane [at] example.com [at] example.org')).toEqual(['jane [at] example.com']);
  });

  it('a domain read after a spelt at is bounded: a label of 63, a whole domain of 253 characters', () => {
    const label = 'd'.repeat(61);
    const domain253 = `${label}.${label}.${label}.${label}.a.com`; // 4 * 62 + 5 = 253
    expect(domain253.length).toBe(253);
    expect(emails(`jane [at] ${domain253} x`)).toEqual([`jane [at] ${domain253}`]);
    // One character more: the domain runs past the limit, so it is no address at all.
    expect(emails(`jane [at] ${label}.${label}.${label}.${label}.ab.com x`)).toEqual([]);
    expect(emails(`jane [at] ${'d'.repeat(63)}.com x`)).toEqual([`jane [at] ${'d'.repeat(63)}.com`]);
  });
});

describe('EMAIL: address literals and what ends a domain', () => {
  it.each(['0.0.0.0', '9.99.199.249', '250.251.252.253', '255.255.255.255', '10.200.100.1'])(
    'jane@[%s] is an address',
    (ip) => {
      expect(emails(`to jane@[${ip}] now`)).toEqual([`jane@[${ip}]`]);
    },
  );

  it.each(['256.1.1.1', '1.1.1.260', '1.1.1.300', '01.1.1.1', '1.1.1', '1.1.1.1.1', 'a.b.c.d', '1.1.1.1x'])(
    'jane@[%s] is not',
    (ip) => {
      expect(emails(`to jane@[${ip}] now`)).toEqual([]);
    },
  );

  it('a domain followed by a spelt dot is read again only when a space, a tab or a bracket follows the labels', () => {
    expect(emails('to jane@example dot com now')).toEqual(['jane@example dot com']);
    expect(emails('to jane@example\tdot\tcom now')).toEqual(['jane@example\tdot\tcom']);
    expect(emails('to jane@example(dot)com now')).toEqual(['jane@example(dot)com']);
    expect(emails('to jane@example{dot}com now')).toEqual(['jane@example{dot}com']);
    expect(emails('to jane@example<dot>com now')).toEqual(['jane@example<dot>com']);
    expect(emails('to jane@example[dot]com now')).toEqual(['jane@example[dot]com']);
    expect(emails('to jane@example,dot com now')).toEqual([]);
    expect(emails('to jane@example dog com now')).toEqual([]);
    // A domain that is whole already is not read on.
    expect(emails('to jane@example.com dot org now')).toEqual(['jane@example.com']);
  });

  it('a file name after an address: the extension is not part of it, and what is left must be a domain', () => {
    expect(emails('see jane@example.com.json here')).toEqual(['jane@example.com']);
    expect(emails('see jane@example.com.md.md here')).toEqual(['jane@example.com']);
    expect(emails('see jane@example.c.md here')).toEqual([]);
    expect(emails('see jane@example.123.md here')).toEqual([]);
  });

  it('git@ is a transport address only right before a colon', () => {
    expect(emails('clone git@github.com/org now')).toEqual(['git@github.com']);
    expect(emails('clone git@github.com;x now')).toEqual(['git@github.com']);
  });
});
