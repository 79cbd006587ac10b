import { describe, expect, it } from 'vitest';
import {
  canonicalizePath,
  canonicalizeWithoutShortcut,
  InvalidPathError,
  type PathRule,
} from '../../src/pipeline/path-guard.js';
import { memoryVault, viaHandler } from './helpers.js';

function ruleOf(path: string, canonicalize = canonicalizePath): PathRule | 'accepted' {
  try {
    canonicalize(path);
    return 'accepted';
  } catch (error) {
    if (error instanceof InvalidPathError) return error.rule;
    throw error;
  }
}

/** Each spelling, right below /memories, as a directory, and with something below it. */
const placements = (name: string) => [
  `/memories/${name}`,
  `/memories/${name}/`,
  `/memories/${name}/renames/j1`,
  `/memories/./${name}/x.md`,
];

function expectRule(paths: string[], rule: PathRule | 'accepted'): void {
  const wrong = paths.flatMap((p) => {
    // The one-regex shortcut and the full walk must agree on every one of them.
    const got = [ruleOf(p), ruleOf(p, canonicalizeWithoutShortcut)];
    return got[0] === rule && got[1] === rule ? [] : [`${JSON.stringify(p)}: ${got.join(' / ')}`];
  });
  expect(wrong).toEqual([]);
}

describe('the reserved directory in every spelling a file system or URL layer folds into it', () => {
  const bases = [
    '.memvault',
    '.MEMVAULT',
    '.MemVault',
    '%2ememvault',
    '%2Ememvault',
    '%252ememvault',
    '%u002ememvault',
    '%U002Ememvault',
    '.%6demvault',
    '．memvault',
    '.memvau\u200blt',
    '.ｍｅｍｖａｕｌｔ',
  ];
  const endings = [
    '.',
    '..',
    '...',
    ' ',
    '  ',
    '. ',
    ' .',
    '. . ', // Windows drops trailing dots and spaces
    ';',
    ';x',
    ';jsessionid=1', // URL path parameters
    '?',
    '?x=1',
    '#',
    '#frag', // URL query and fragment
    ':',
    '::$DATA',
    ':$DATA',
    '::$INDEX_ALLOCATION',
    ':stream:$DATA',
    '. ::$DATA', // NTFS streams
    '%2e',
    '%20',
    '%2e%20',
    '%3b',
    '%3bx',
    '%3f',
    '%23',
    '%3a%3a$DATA',
    '%252e',
    '%u002e',
    '+', // the same, encoded
    '\u200b',
    '\u00a0',
    '\u3000',
    '\u2060', // invisible or wide spaces that a skeleton drops or folds
  ];

  it(`refuses ${bases.length} spellings x ${endings.length + 1} endings x 4 placements as reserved`, () => {
    const paths = bases.flatMap((base) => ['', ...endings].flatMap((end) => placements(`${base}${end}`)));
    expectRule(paths, 'reserved');
    expect(paths.length).toBeGreaterThan(1500);
  });

  it('refuses its 8.3 short name', () => {
    expectRule(
      ['MEMVAU~1', 'memvau~1', 'MEMVAU~2', 'memvau~12', 'MEMVAU~1.', 'MEMVAU~1::$DATA'].flatMap(placements),
      'reserved',
    );
  });

  it('accepts the near misses: other names, and the name below the top level', () => {
    expectRule(
      [
        '.memvaultx',
        '.memvault-old',
        '.memvault.bak',
        '.memvault2;',
        'memvault',
        '.memvaul',
        'x.memvault',
        '.memvault_',
        'MEMVAU~',
        'memvau~x',
        'MEMVAULT~1',
      ].map((n) => `/memories/${n}`),
      'accepted',
    );
    expectRule(
      [
        '/memories/a/.memvault',
        '/memories/a/.memvault.',
        '/memories/a/.memvault;x',
        '/memories/notes/.memvault::$DATA',
      ],
      'accepted',
    );
  });
});

describe('names made only of invisible characters', () => {
  const invisible = [
    '\u200b',
    '\u200c',
    '\u200d',
    '\u2060',
    '\u200b\u200c\u200d',
    '\u00ad',
    '\u180e',
    '\u034f',
    '\ufe0f',
    '\u200e',
    '\u200f',
    '\u061c',
    '\u3164',
    '\u115f',
    '\u1160',
    '\uffa0',
    '\u2800',
    '\u0301',
    '\u20dd',
    '\u{e0020}\u{e0041}',
    '\u{1d173}',
    '\u2061\u2062\u2063\u2064',
    '%e2%80%8b',
    '%e3%85%a4',
    '%u200b',
    '%c2%ad',
    '%e2%a0%80',
    '\u200b\u3164\u2800',
  ];

  it(`refuses ${invisible.length} of them, at every depth and as any path field`, () => {
    const paths = invisible.flatMap((n) => [
      `/memories/${n}`,
      `/memories/${n}/x.md`,
      `/memories/a/${n}`,
      `/memories/a/${n}/b`,
    ]);
    expectRule(paths, 'invisible-name');
  });

  it('accepts names that merely contain them next to visible text', () => {
    expectRule(
      [
        'a\u200b',
        '\u200bnotes.md',
        '👨‍👩‍👧 family.md',
        '🏳️‍🌈.md',
        'فارسی\u200cنامه.md',
        '\u3164a',
        'x\u0301',
        '⠁braille',
        'a%e2%80%8b',
      ].map((n) => `/memories/${n}`),
      'accepted',
    );
  });

  it('the model is told why', async () => {
    const { vault } = await memoryVault();
    const outcome = await viaHandler(vault, 'u', { command: 'view', path: '/memories/\u200b' });
    expect(outcome).toEqual({
      ok: false,
      content: expect.stringMatching(
        /^Error: Invalid path "\/memories\/\u200b": a name must have at least one visible character/,
      ),
    });
  });
});

describe('encoded traversal beyond %XX, refused like %2e%2e', () => {
  const traversal = [
    '%U002E%U002E',
    '%u002E%U002e', // IIS %uXXXX, either case
    '%e0%80%2e%e0%80%2e',
    '%e0%40%ae%e0%40%ae',
    '%f0%80%80%2e',
    '%e0%80%2e.', // overlong forms a tag-blind decoder reads as '.'
    '0x2e0x2e',
    '0X2E0X2E',
    '0x2e.',
    '.0x2e',
    '0x2e', // hex text
    '&#46;&#46;',
    '&#x2e;&#x2E;',
    '&#x002e;&#46;',
    '&#46;', // HTML character references
    '%30x2e%30x2e',
    '0x%32e0x%32e',
    '%2526%252346;%2526%252346;', // the same, percent-encoded on top
  ];

  it('refuses each as a traversal in disguise (or as the overlong form it is), at every depth', () => {
    const wrong = traversal
      .flatMap((t) => [`/memories/${t}`, `/memories/${t}/etc/passwd`, `/memories/a/b/${t}/${t}/x`])
      .filter((p) => !['encoded-traversal', 'overlong-utf8'].includes(ruleOf(p)));
    expect(wrong).toEqual([]);
  });

  it('refuses tag-blind decodings that read as a separator or a two-dot leader', () => {
    expect(ruleOf('/memories/..%e0%80%2f')).toBe('overlong-utf8');
    expect(ruleOf('/memories/%e2%40%a5')).toBe('encoded-traversal'); // '‥' to a tag-blind decoder
    expect(ruleOf('/memories/..0x2fetc')).toBe('encoded-separator');
    expect(ruleOf('/memories/a0x5cb')).toBe('encoded-separator');
    expect(ruleOf('/memories/a&#47;b')).toBe('encoded-separator');
  });

  it('accepts ordinary names with hex, entities or Latin-1 escapes that decode to nothing dangerous', () => {
    expectRule(
      [
        '0x41.md',
        'opcode 0x2e.md',
        'ratio 0x2e2e',
        'addr 0xdeadbeef.md',
        '0x.md',
        '&amp; notes.md',
        '&#38; notes.md',
        '&#46 x',
        'caf%e9.md',
        '%e9t%e9.md',
        '%c3%a9t%c3%a9.md',
        '%e0%e9%e8.md',
      ].map((n) => `/memories/${n}`),
      'accepted',
    );
  });
});
