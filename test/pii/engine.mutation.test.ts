/**
 * The engine's own edges, for mutation testing (scripts/mutation/targets.mjs, pii-engine): the
 * folded view and its offset map against a plain reference, how overlaps are settled, the policy
 * and the allow-list, and the character classes the scanners share.
 */
import { describe, expect, it } from 'vitest';
import {
  codeAt,
  hasContextBefore,
  isAsciiAlnum,
  isAsciiLetter,
  isDigit,
  isHex,
  isUnspacedScript,
  isUpper,
  isWordChar,
  luhnValid,
} from '../../src/pii/chars.js';
import { countByType, detectAll, placeholder, redact, resolveOverlaps, scan } from '../../src/pii/engine.js';
import { isDropped, normalizedView, visibleAfter, visibleBefore } from '../../src/pii/normalize.js';
import type { Candidate } from '../../src/pii/types.js';

// ---------------------------------------------------------------------------------------------
// The folded view, against a reference written from the rules in normalize.ts's header.

const SPACES = [0xa0, 0x1680, 0x2000, 0x2001, 0x2005, 0x2009, 0x200a, 0x202f, 0x205f, 0x3000];
const DROPPED = [0xad, 0x200b, 0x200c, 0x200d, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xfeff];
const DASHES = [0x2010, 0x2011, 0x2012, 0x2013, 0x2014, 0x2015, 0x2212, 0xfe58, 0xfe63];
const DIGIT_BASES = [0x0660, 0x06f0, 0x0966, 0x09e6, 0x0e50];
// Neighbours of every range above that are left alone.
const KEPT = [
  0x9f, 0xac, 0xae, 0x167f, 0x1681, 0x1fff, 0x200e, 0x200f, 0x2016, 0x202e, 0x2030, 0x205e, 0x2065, 0x2211, 0x2213,
  0x2fff, 0x3001, 0xfe57, 0xfe59, 0xfe62, 0xfe64, 0xfefe, 0xff00, 0xff5f, 0x065f, 0x066a, 0x06ef, 0x06fa, 0x0965,
  0x0970, 0x09e5, 0x09f0, 0x0e4f, 0x0e5a, 0xe9,
];

function referenceFold(c: number): number {
  if (SPACES.includes(c) || (c >= 0x2000 && c <= 0x200a)) return 32;
  if (DROPPED.includes(c)) return -1;
  if (DASHES.includes(c)) return 45;
  if (c >= 0xff01 && c <= 0xff5e) return c - 0xfee0;
  for (const base of DIGIT_BASES) if (c >= base && c <= base + 9) return 48 + c - base;
  return c;
}

const ESCAPES: Record<string, string> = { '40': '@', '2B': '+', '20': ' ', '2D': '-', '2E': '.' };

/** The view's characters, each with the input span it comes from. */
function referenceTokens(text: string): Array<{ char: string; start: number; end: number }> {
  const out: Array<{ char: string; start: number; end: number }> = [];
  for (let i = 0; i < text.length; i++) {
    const escaped = text[i] === '%' ? ESCAPES[text.slice(i + 1, i + 3).toUpperCase()] : undefined;
    if (escaped !== undefined) {
      out.push({ char: escaped, start: i, end: i + 3 });
      i += 2;
      continue;
    }
    const f = referenceFold(text.charCodeAt(i));
    if (f !== -1) out.push({ char: String.fromCharCode(f), start: i, end: i + 1 });
  }
  return out;
}

/** Deterministic texts mixing ASCII, every folded class, escapes and their near misses. */
function* texts(): Generator<string> {
  const pieces = [
    'a',
    '7',
    ' ',
    '%',
    '%40',
    '%2b',
    '%2E',
    '%41',
    '%2',
    '%%20',
    '-',
    'é',
    '\u00a0',
    '\u200b',
    '\u00ad',
    '\u2013',
    '\uff11',
    '\u0663',
    '\u3000',
    '\ufeff',
    '😀',
    '電',
  ];
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
  for (let t = 0; t < 300; t++) {
    let s = '';
    const n = next() % 9;
    for (let k = 0; k < n; k++) s += pieces[next() % pieces.length];
    yield s;
  }
  for (const c of [
    ...SPACES,
    ...DROPPED,
    ...DASHES,
    ...KEPT,
    0xff01,
    0xff10,
    0xff20,
    0xff5e,
    ...DIGIT_BASES,
    ...DIGIT_BASES.map((b) => b + 9),
  ])
    yield `x${String.fromCharCode(c)}1`;
}

describe('normalizedView', () => {
  it('folds each class of characters and leaves their neighbours alone', () => {
    for (const c of SPACES) expect(normalizedView(`1${String.fromCharCode(c)}2`).text, c.toString(16)).toBe('1 2');
    for (const c of DROPPED) expect(normalizedView(`1${String.fromCharCode(c)}2`).text, c.toString(16)).toBe('12');
    for (const c of DASHES) expect(normalizedView(`1${String.fromCharCode(c)}2`).text, c.toString(16)).toBe('1-2');
    for (const c of KEPT)
      expect(normalizedView(`1${String.fromCharCode(c)}2`).text, c.toString(16)).toBe(`1${String.fromCharCode(c)}2`);
    expect(normalizedView('\uff01\uff10\uff19\uff20\uff21\uff5e').text).toBe('!09@A~');
    for (const base of DIGIT_BASES)
      expect(normalizedView(String.fromCharCode(base, base + 5, base + 9)).text).toBe('059');
  });

  it('decodes the five escapes in either case, and nothing else', () => {
    expect(normalizedView('jane%40example%2Ecom %2b49%2030%2d1').text).toBe('jane@example.com +49 30-1');
    expect(normalizedView('%41 %2 %4 %').text).toBe('%41 %2 %4 %');
  });

  it('a text with nothing to fold is its own view', () => {
    const view = normalizedView('plain ascii, 100% sure');
    expect(view.text).toBe('plain ascii, 100% sure');
    expect(view.toOriginal(5)).toBe(5);
    expect(view.spanToOriginal(2, 9)).toEqual({ start: 2, end: 9 });
  });

  it('every character of the view maps back to the input it came from, and every span to the input it covers', () => {
    for (const text of texts()) {
      const tokens = referenceTokens(text);
      const view = normalizedView(text);
      expect(view.text, JSON.stringify(text)).toBe(tokens.map((t) => t.char).join(''));
      for (let i = 0; i <= tokens.length; i++)
        expect(view.toOriginal(i), `${JSON.stringify(text)} @${i}`).toBe(
          i < tokens.length ? tokens[i]!.start : text.length,
        );
      for (let s = 0; s <= tokens.length; s++) {
        for (let e = s; e <= tokens.length; e++) {
          const start = s < tokens.length ? tokens[s]!.start : text.length;
          const expected = e > s ? { start, end: tokens[e - 1]!.end } : { start, end: start };
          expect(view.spanToOriginal(s, e), `${JSON.stringify(text)} [${s},${e})`).toEqual(expected);
        }
      }
    }
  });

  it('isDropped is true exactly for the invisible characters', () => {
    for (const c of DROPPED) expect(isDropped(c), c.toString(16)).toBe(true);
    for (const c of [...SPACES, ...DASHES, ...KEPT, 0x20, 0x41, 0x25]) expect(isDropped(c), c.toString(16)).toBe(false);
  });
});

describe('visibleBefore and visibleAfter', () => {
  it('step over exactly `count` characters of the view, escapes once, invisible ones not at all', () => {
    for (const text of texts()) {
      const tokens = referenceTokens(text);
      // Token boundaries (with the invisible characters in between) are where a window may start or end.
      const boundaries = new Set<number>([0, text.length]);
      for (const t of tokens) boundaries.add(t.start).add(t.end);
      for (let i = 0; i < text.length; i++)
        if (referenceFold(text.charCodeAt(i)) === -1 && !tokens.some((t) => t.start < i && i < t.end))
          boundaries.add(i).add(i + 1);
      for (const pos of boundaries) {
        for (const count of [0, 1, 2, 3, 5]) {
          const before = tokens.filter((t) => t.end <= pos);
          const after = tokens.filter((t) => t.start >= pos);
          const expectedBefore = count === 0 ? pos : before.length >= count ? before[before.length - count]!.start : 0;
          const expectedAfter = count === 0 ? pos : after.length >= count ? after[count - 1]!.end : text.length;
          expect(visibleBefore(text, pos, count), `${JSON.stringify(text)} before ${pos} x${count}`).toBe(
            expectedBefore,
          );
          expect(visibleAfter(text, pos, count), `${JSON.stringify(text)} after ${pos} x${count}`).toBe(expectedAfter);
        }
      }
    }
  });

  it('stop at the ends of the text', () => {
    expect(visibleBefore('abc', 3, 3)).toBe(0);
    expect(visibleBefore('abcd', 4, 3)).toBe(1);
    expect(visibleAfter('abc', 0, 3)).toBe(3);
    expect(visibleAfter('abcd', 0, 3)).toBe(3);
    expect(visibleAfter('ab%4', 0, 4)).toBe(4);
  });
});

// ---------------------------------------------------------------------------------------------

const cand = (type: Candidate['type'], start: number, end: number, priority: number): Candidate => ({
  type,
  start,
  end,
  priority,
});

describe('resolveOverlaps', () => {
  it('spans that only touch do not overlap', () => {
    expect(resolveOverlaps([cand('EMAIL', 5, 10, 2), cand('PHONE', 0, 5, 1)])).toEqual([
      { type: 'PHONE', start: 0, end: 5 },
      { type: 'EMAIL', start: 5, end: 10 },
    ]);
  });

  it('the more specific wins over the longer, the longer over the earlier, the earlier last', () => {
    expect(resolveOverlaps([cand('PHONE', 0, 10, 1), cand('IBAN', 2, 4, 5)])).toEqual([
      { type: 'IBAN', start: 2, end: 4 },
    ]);
    expect(resolveOverlaps([cand('PHONE', 0, 4, 1), cand('EMAIL', 2, 10, 1)])).toEqual([
      { type: 'EMAIL', start: 2, end: 10 },
    ]);
    expect(resolveOverlaps([cand('EMAIL', 2, 6, 1), cand('PHONE', 0, 4, 1)])).toEqual([
      { type: 'PHONE', start: 0, end: 4 },
    ]);
  });

  it('a cluster is every span reached through overlaps, up to the furthest end', () => {
    // A covers B and reaches C; C and D overlap only through C's end.
    const chain = [
      cand('PHONE', 0, 10, 1),
      cand('IBAN', 2, 3, 9),
      cand('EMAIL', 9, 14, 5),
      cand('US_SSN', 13, 20, 1),
      cand('SECRET', 20, 22, 1),
    ];
    expect(resolveOverlaps(chain)).toEqual([
      { type: 'IBAN', start: 2, end: 3 },
      { type: 'EMAIL', start: 9, end: 14 },
      { type: 'SECRET', start: 20, end: 22 },
    ]);
    // The winner in the middle leaves room on both sides: disjoint members are kept, in order.
    expect(
      resolveOverlaps([
        cand('PHONE', 0, 4, 1),
        cand('IBAN', 3, 7, 5),
        cand('EMAIL', 6, 10, 1),
        cand('CREDIT_CARD', 8, 12, 1),
      ]),
    ).toEqual([
      { type: 'IBAN', start: 3, end: 7 },
      { type: 'CREDIT_CARD', start: 8, end: 12 },
    ]);
  });

  it('a span starting where a longer one starts joins its cluster, whatever the input order', () => {
    const a = [cand('PHONE', 4, 6, 1), cand('EMAIL', 4, 12, 1), cand('IBAN', 0, 2, 1)];
    const expected = [
      { type: 'IBAN', start: 0, end: 2 },
      { type: 'EMAIL', start: 4, end: 12 },
    ];
    expect(resolveOverlaps(a)).toEqual(expected);
    expect(resolveOverlaps([...a].reverse())).toEqual(expected);
    expect(a.map((c) => c.start)).toEqual([4, 4, 0]); // the input is not reordered
  });

  it('nothing in, nothing out; one in, one out without its priority', () => {
    expect(resolveOverlaps([])).toEqual([]);
    expect(resolveOverlaps([cand('IBAN', 1, 3, 7)])).toEqual([{ type: 'IBAN', start: 1, end: 3 }]);
  });
});

describe('scan, redact and the allow-list', () => {
  const note = 'Mail ann@example.com, IBAN DE89 3704 0044 0532 0130 00, call +49 30 12345678.';

  it('reject lists the refused types in the order of PII_TYPES, allow drops a type, the rest is redacted', () => {
    expect(scan(note, { policy: { PHONE: 'reject', EMAIL: 'reject', IBAN: 'allow' } })).toEqual({
      findings: [
        { type: 'EMAIL', start: 5, end: 20 },
        { type: 'PHONE', start: 61, end: 76 },
      ],
      rejected: ['EMAIL', 'PHONE'],
    });
    expect(scan(note).rejected).toEqual([]);
    expect(redact(note, { policy: { IBAN: 'allow', EMAIL: 'redact' } }).text).toBe(
      'Mail [REDACTED:EMAIL], IBAN DE89 3704 0044 0532 0130 00, call [REDACTED:PHONE].',
    );
  });

  it('an allow-listed value is matched case-insensitively, trimmed, and for numbers without spaces, dashes, dots or brackets', () => {
    const types = (allowList: string[]) => scan(note, { allowList }).findings.map((f) => f.type);
    expect(types([])).toEqual(['EMAIL', 'IBAN', 'PHONE']);
    expect(types(['  ANN@Example.COM  '])).toEqual(['IBAN', 'PHONE']);
    expect(types(['de89-3704-0044-0532-0130-00'])).toEqual(['EMAIL', 'PHONE']);
    expect(types(['+49 (30) 1234.5678'])).toEqual(['EMAIL', 'IBAN']);
    expect(types(['+49\u00a030\u00a012345678'])).toEqual(['EMAIL', 'IBAN']);
    // Folded like the text: full-width digits and a no-break space in the list entry.
    expect(types(['+\uff14\uff19 30 12345678'])).toEqual(['EMAIL', 'IBAN']);
    expect(types(['+49 30 1234567'])).toEqual(['EMAIL', 'IBAN', 'PHONE']);
    // The value is compared as written in the text's view: '_' and '/' are not formatting.
    expect(types(['+49_30_12345678', '+49/30/12345678'])).toEqual(['EMAIL', 'IBAN', 'PHONE']);
  });

  it('an allow-listed value is not rejected', () => {
    expect(scan(note, { policy: { EMAIL: 'reject' }, allowList: ['ann@example.com'] }).rejected).toEqual([]);
  });

  it('redact replaces each finding, keeps the rest, and returns the very input when there is nothing', () => {
    expect(redact(note).text).toBe('Mail [REDACTED:EMAIL], IBAN [REDACTED:IBAN], call [REDACTED:PHONE].');
    const plain = 'nothing to see';
    expect(redact(plain)).toEqual({ text: plain, findings: [] });
    expect(placeholder('US_SSN')).toBe('[REDACTED:US_SSN]');
  });

  it("offsets are the input's when the detectors read a folded view", () => {
    const text = 'x\u200bann\uff20example\u3002com ann%40example.com';
    const found = scan(text).findings;
    expect(found.map((f) => text.slice(f.start, f.end))).toEqual(['ann%40example.com']);
    const spaced = 'IBAN\u00a0DE89\u202f3704\u202f0044\u202f0532\u202f0130\u202f00!';
    expect(scan(spaced).findings).toEqual([{ type: 'IBAN', start: 5, end: spaced.length - 1 }]);
  });

  it('countByType counts each type', () => {
    expect(countByType(scan(`${note} ${note}`).findings)).toEqual({ EMAIL: 2, IBAN: 2, PHONE: 2 });
    expect(countByType([])).toEqual({});
  });

  it('detectAll reads phone numbers with the default regions unless told, and every IP only in "all" mode', () => {
    expect(detectAll('tel 0412 345 678').some((c) => c.type === 'PHONE')).toBe(true);
    expect(detectAll('tel 0412 345 678', { phoneRegions: ['AU'] }).some((c) => c.type === 'PHONE')).toBe(true);
    expect(detectAll('ip 127.0.0.1').some((c) => c.type === 'IP_ADDRESS')).toBe(false);
    expect(detectAll('ip 127.0.0.1', { ipAddresses: 'all' }).some((c) => c.type === 'IP_ADDRESS')).toBe(true);
    expect(detectAll('ip 127.0.0.1', { ipAddresses: 'host' }).some((c) => c.type === 'IP_ADDRESS')).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------

const code = (s: string) => s.charCodeAt(0);

describe('character classes', () => {
  it('digits, letters, upper case and hex, at each edge', () => {
    expect(['/', '0', '9', ':'].map((c) => isDigit(code(c)))).toEqual([false, true, true, false]);
    expect(['@', 'A', 'Z', '[', '`', 'a', 'z', '{'].map((c) => isAsciiLetter(code(c)))).toEqual([
      false,
      true,
      true,
      false,
      false,
      true,
      true,
      false,
    ]);
    expect(['@', 'A', 'Z', '[', 'a'].map((c) => isUpper(code(c)))).toEqual([false, true, true, false, false]);
    expect(['/', '0', '9', ':', '@', 'A', 'F', 'G', '`', 'a', 'f', 'g'].map((c) => isHex(code(c)))).toEqual([
      false,
      true,
      true,
      false,
      false,
      true,
      true,
      false,
      false,
      true,
      true,
      false,
    ]);
    expect(['0', 'z', '_', '-'].map((c) => isAsciiAlnum(code(c)))).toEqual([true, true, false, false]);
  });

  it('word characters: letters and digits of any script and _, not the unspaced scripts; surrogates are', () => {
    expect(['a', 'Z', '5', '_', '-', ' ', '.', '\u007f'].map((c) => isWordChar(code(c)))).toEqual([
      true,
      true,
      true,
      true,
      false,
      false,
      false,
      false,
    ]);
    expect(['é', 'ß', 'Ж', 'ا', '٣', '\u00a0', '\u00b7', '\u2013'].map((c) => isWordChar(code(c)))).toEqual([
      true,
      true,
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
    expect(['電', 'あ', '한', '\uff21', '\ud83d', '\ude00'].map((c) => isWordChar(code(c)))).toEqual([
      false,
      false,
      false,
      false,
      true,
      true,
    ]);
  });

  it('the unspaced scripts, at each edge', () => {
    const at = (cs: number[]) => cs.map((c) => isUnspacedScript(c));
    expect(at([0x2fff, 0x3000, 0x9fff, 0xa000])).toEqual([false, true, true, false]);
    expect(at([0xabff, 0xac00, 0xd7af, 0xd7b0])).toEqual([false, true, true, false]);
    expect(at([0xf8ff, 0xf900, 0xfaff, 0xfb00])).toEqual([false, true, true, false]);
    expect(at([0xfeff, 0xff00, 0xffef, 0xfff0])).toEqual([false, true, true, false]);
  });

  it('codeAt is -1 outside the text', () => {
    expect([codeAt('ab', -1), codeAt('ab', 0), codeAt('ab', 1), codeAt('ab', 2)]).toEqual([-1, 97, 98, -1]);
  });

  it('luhnValid', () => {
    expect(
      ['4111111111111111', '79927398713', '0', '18', '59', '4111111111111112', '79927398710', '1'].map(luhnValid),
    ).toEqual([true, true, true, true, true, false, false, false]);
  });

  it('hasContextBefore looks only at the window before the position', () => {
    const words = /\bssn\b/;
    const text = 'ssn   123';
    expect(hasContextBefore(text, 6, 6, words)).toBe(true);
    expect(hasContextBefore(text, 6, 3, words)).toBe(false);
    expect(hasContextBefore(text, 2, 6, words)).toBe(false);
    expect(hasContextBefore('ssn 1', 4, 100, words)).toBe(true);
  });
});
