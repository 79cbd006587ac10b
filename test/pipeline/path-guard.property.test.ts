import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isMemvaultError } from '../../src/errors.js';
import { canonicalizePath, MAX_PATH_BYTES } from '../../src/pipeline/path-guard.js';

const RUNS = 2000;

function tryCanonical(raw: string): string | null {
  try {
    return canonicalizePath(raw);
  } catch (error) {
    if (isMemvaultError(error, 'INVALID_PATH')) return null;
    throw error;
  }
}

// Raw paths that often get past the prefix check: '/memories/' followed by anything, including the
// characters the guard cares about, and full Unicode.
const tricky = fc.constantFrom(
  '.',
  '..',
  '/',
  '\\',
  '%',
  '%2e',
  '%2f',
  '%25',
  '%c0',
  '%ae',
  '%u',
  'ff0e',
  '．',
  '／',
  '‥',
  '…',
  ' ',
  '+',
  ';',
  ':',
  '?',
  '#',
  '\u0000',
  '\u200b',
  '\u0301',
  'a',
  'é',
  'e\u0301',
  '日',
  '😀',
  'C',
  'con',
);
const pathish = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 80 }).map((s) => `/memories/${s}`),
  fc.array(tricky, { maxLength: 20 }).map((parts) => `/memories/${parts.join('')}`),
  fc
    .array(fc.oneof(tricky, fc.string({ unit: 'grapheme', maxLength: 6 })), { maxLength: 12 })
    .map((parts) => `/memories/${parts.join('/')}`),
  fc.string({ unit: 'binary-ascii', maxLength: 60 }),
  fc.string({ unit: 'binary', maxLength: 60 }),
);

describe('path guard properties (fast-check)', () => {
  it('(a) a canonical path re-canonicalises to itself', () => {
    fc.assert(
      fc.property(pathish, (raw) => {
        const canonical = tryCanonical(raw);
        if (canonical !== null) expect(canonicalizePath(canonical)).toBe(canonical);
      }),
      { numRuns: RUNS },
    );
  });

  it('(b) canonical paths: under /memories, no ".." segment, no "\\", no control, no "//", NFC, within limits', () => {
    fc.assert(
      fc.property(pathish, (raw) => {
        const canonical = tryCanonical(raw);
        if (canonical === null) return;
        expect(canonical === '/memories' || canonical.startsWith('/memories/')).toBe(true);
        const segments = canonical.split('/').slice(2);
        expect(segments.some((s) => s === '..' || s === '.' || s === '' || /^[.\s]+$/.test(s))).toBe(false);
        expect(canonical.includes('\\')).toBe(false);
        expect(canonical.includes('//')).toBe(false);
        expect(/[\u0000-\u001f\u007f-\u009f]/.test(canonical)).toBe(false);
        expect(canonical.endsWith('/')).toBe(false);
        expect(canonical.normalize('NFC')).toBe(canonical);
        expect(Buffer.byteLength(canonical)).toBeLessThanOrEqual(MAX_PATH_BYTES);
      }),
      { numRuns: RUNS },
    );
  });

  it('(c) arbitrary strings never throw anything but MemvaultError INVALID_PATH', () => {
    fc.assert(
      fc.property(
        fc.oneof(pathish, fc.string({ unit: 'binary', maxLength: 5000 }), fc.string({ unit: 'grapheme-composite' })),
        (raw) => {
          tryCanonical(raw); // rethrows anything else
        },
      ),
      { numRuns: RUNS },
    );
  });

  // Names built only from characters that mean nothing to any layer below; at least one letter or digit.
  const safeChar = fc.constantFrom(
    ...Array.from("abcxyzABCXYZ0123456789 _-.()[]~!@$&=,'éÉüßçñøåæ日本語中文한국어русскийΕλληνικάעבריתالعربية😀🎉"),
    'e\u0301',
    '👨\u200d👩\u200d👧',
  );
  const legitSegment = fc
    .array(safeChar, { minLength: 1, maxLength: 24 })
    .map((chars) => chars.join(''))
    .filter(
      (s) =>
        /[\p{L}\p{N}\p{Extended_Pictographic}]/u.test(s) &&
        !/^(con|prn|aux|nul|com\d|lpt\d)(\.|$)/i.test(s) &&
        s.toLowerCase() !== '.memvault' &&
        Buffer.byteLength(s) <= 255,
    );

  it('(d) any join of legitimate names is accepted, as the NFC of what was sent', () => {
    fc.assert(
      fc.property(fc.array(legitSegment, { minLength: 0, maxLength: 8 }), fc.boolean(), (segments, trailingSlash) => {
        const raw = `/memories${segments.map((s) => `/${s}`).join('')}${trailingSlash && segments.length > 0 ? '/' : ''}`;
        const expected =
          segments.length === 0 ? '/memories' : `/memories/${segments.map((s) => s.normalize('NFC')).join('/')}`;
        expect(tryCanonical(raw)).toBe(expected);
      }),
      { numRuns: RUNS },
    );
  });

  // Tokens that make a whole segment a traversal, and tokens that poison a segment wherever they sit.
  const segmentTokens = [
    '..',
    '...',
    '. .',
    '.. ',
    '%2e%2e',
    '%2E%2e',
    '.%2e',
    '%252e%252e',
    '%c0%ae%c0%ae',
    '%e0%80%ae%e0%80%ae',
    '%uff0e%uff0e',
    '%u002e%u002e',
    '．．',
    '‥',
    '…',
    '﹒﹒',
    '。。',
    '..;',
    '..%00',
    '..+',
    '.\u200b.',
    '%2e',
    'C:',
    'file:',
    '.memvault',
  ];
  const infixTokens = [
    '\\',
    '%2f',
    '%5c',
    '%252f',
    '%c0%af',
    '%c1%9c',
    '%u2215',
    '／',
    '＼',
    '∕',
    '\u0000',
    '%00',
    '\n',
    '%0a',
    '\u202e',
    '\ud800',
    '%ef%bc%8f',
    '..%2f',
    '..\\',
    '%c0%ae',
  ];

  it('(e) a traversal token inserted into a legitimate path is rejected', () => {
    fc.assert(
      fc.property(
        fc.array(legitSegment, { minLength: 1, maxLength: 6 }),
        fc.nat(),
        fc.oneof(
          fc.record({ kind: fc.constant('segment' as const), token: fc.constantFrom(...segmentTokens) }),
          fc.record({ kind: fc.constant('infix' as const), token: fc.constantFrom(...infixTokens), at: fc.nat() }),
        ),
        (segments, where, insertion) => {
          const i = where % (segments.length + 1);
          const parts = [...segments];
          if (insertion.kind === 'segment') {
            // '.memvault' and drive letters are only refused in the first place / any place respectively.
            parts.splice(insertion.token === '.memvault' ? 0 : i, 0, insertion.token);
          } else {
            const j = i % segments.length;
            const s = parts[j]!;
            const k = insertion.at % (s.length + 1);
            parts[j] = s.slice(0, k) + insertion.token + s.slice(k);
          }
          expect(tryCanonical(`/memories/${parts.join('/')}`)).toBeNull();
        },
      ),
      { numRuns: RUNS },
    );
  });
});

describe('the shortcut for already canonical ASCII paths', () => {
  const asciiPath = fc
    .array(
      fc.oneof(
        fc.constantFrom(
          '.',
          '..',
          '...',
          ' ',
          '. .',
          'con',
          'CON.txt',
          'nul',
          'com1',
          'lpt9.md',
          'console',
          '.memvault',
          '.MEMVAULT',
          '',
          'a'.repeat(255),
          'b'.repeat(256),
        ),
        fc.string({ unit: fc.constantFrom(...'aZ09_.- /'.split('')), maxLength: 12 }),
      ),
      { maxLength: 8 },
    )
    .chain((parts) =>
      fc
        .constantFrom(
          '/memories',
          '/memories',
          '/memories',
          '/Memories',
          '/MEMORIES',
          '/memoriesX',
          '//memories',
          'memories',
        )
        .map((root) => `${root}${parts.map((p) => `/${p}`).join('')}`),
    );

  it('gives exactly the answer of the full walk', async () => {
    const { canonicalizeWithoutShortcut } = await import('../../src/pipeline/path-guard.js');
    const outcome = (f: (raw: string) => string, raw: string) => {
      try {
        return f(raw);
      } catch (error) {
        return `rejected: ${(error as Error).message}`;
      }
    };
    fc.assert(
      fc.property(fc.oneof(asciiPath, pathish), (raw) => {
        expect(outcome(canonicalizePath, raw)).toBe(outcome(canonicalizeWithoutShortcut, raw));
      }),
      { numRuns: 5000 },
    );
  });
});
