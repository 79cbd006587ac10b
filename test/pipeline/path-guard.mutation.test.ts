/**
 * The path guard at its exact edges (mutation testing found these unasserted): the
 * 4,096-byte limit for non-ASCII paths (before and after NFC), every rule's message as the model
 * reads it, how a rejected path is quoted, the lenient UTF-8 decoder's lead-byte classes, and what
 * the middleware records.
 */
import { describe, expect, it } from 'vitest';
import { createVault } from '../../src/memvault.js';
import type { CommandContext, Middleware } from '../../src/pipeline/context.js';
import {
  canonicalizePath,
  canonicalizeWithoutShortcut,
  InvalidPathError,
  MAX_PATH_BYTES,
  MAX_SEGMENT_BYTES,
  showPath,
  type PathRule,
} from '../../src/pipeline/path-guard.js';
import { MemoryStore } from '../../src/store/memory.js';
import { attackPaths, legitimatePaths } from './corpus.js';

const HINT = 'Paths must be /memories or /memories/<name>[/<name>...].';

function outcome(
  path: string,
  canonicalize = canonicalizePath,
): { rule: PathRule; message: string } | { accepted: string } {
  try {
    return { accepted: canonicalize(path) };
  } catch (error) {
    if (error instanceof InvalidPathError) {
      expect(error.code).toBe('INVALID_PATH');
      expect(error.name).toBe('InvalidPathError');
      return { rule: error.rule, message: error.message };
    }
    throw error;
  }
}

const ruleOf = (path: string) => {
  const o = outcome(path);
  const full = outcome(path, canonicalizeWithoutShortcut);
  expect(full).toEqual(o);
  return 'rule' in o ? o.rule : 'accepted';
};

/** A path of exactly `bytes` UTF-8 bytes made of `unit` (repeated in segments within the segment limit), padded with ASCII. */
function pathOfBytes(bytes: number, unit: string): string {
  const unitBytes = Buffer.byteLength(unit);
  const perSegment = Math.floor(200 / unitBytes);
  let path = '/memories';
  while (Buffer.byteLength(path) + 1 + perSegment * unitBytes + 1 + 10 <= bytes) path += `/${unit.repeat(perSegment)}`;
  const rest = bytes - Buffer.byteLength(path) - 1;
  path += `/${'p'.repeat(rest)}`;
  expect(Buffer.byteLength(path)).toBe(bytes);
  return path;
}

describe('the 4,096-byte path limit counts UTF-8 bytes, not characters', () => {
  for (const unit of ['é', '日', '😀']) {
    it(`${unit}: exactly 4,096 bytes pass, 4,097 do not (far fewer than 4,096 characters)`, () => {
      const at = pathOfBytes(MAX_PATH_BYTES, unit);
      const over = pathOfBytes(MAX_PATH_BYTES + 1, unit);
      expect(over.length).toBeLessThan(MAX_PATH_BYTES);
      expect(ruleOf(at)).toBe('accepted');
      expect(canonicalizePath(at)).toBe(at);
      expect(outcome(over)).toEqual({
        rule: 'too-long',
        message: `Error: Invalid path ${showPath(over)}: the path is longer than 4,096 bytes (UTF-8).`.replace(
          '4,096',
          '4096',
        ),
      });
    });
  }

  it('the limit holds for the NFC form that is stored, also when NFC makes the path longer', () => {
    // U+0958 (3 bytes) is NFC U+0915 U+093C (6 bytes): composition exclusions grow under NFC.
    const qa = '\u0958';
    expect(Buffer.byteLength(qa.normalize('NFC'))).toBe(6);
    const segments = Array.from({ length: 16 }, () => qa.repeat(40));
    const grown = `/memories/${segments.join('/')}`;
    const grownBytes = Buffer.byteLength(grown.normalize('NFC'));
    const fits = `${grown}/${'p'.repeat(MAX_PATH_BYTES - grownBytes - 1)}`;
    const over = `${fits}p`;
    expect(Buffer.byteLength(over)).toBeLessThan(MAX_PATH_BYTES);
    expect(Buffer.byteLength(canonicalizePath(fits))).toBe(MAX_PATH_BYTES);
    expect(ruleOf(over)).toBe('too-long');
  });

  it('a segment of exactly 255 bytes passes in every script; 256 do not; a decomposed spelling is measured as stored (NFC)', () => {
    expect(ruleOf(`/memories/${'é'.repeat(127)}a`)).toBe('accepted');
    expect(ruleOf(`/memories/${'é'.repeat(127)}ab`)).toBe('segment-too-long');
    expect(ruleOf(`/memories/${'😀'.repeat(63)}abc`)).toBe('accepted');
    expect(ruleOf(`/memories/${'😀'.repeat(64)}`)).toBe('segment-too-long');
    // 85 x 'e' + U+0301 is 255 bytes decomposed (3 x 85) but 170 bytes as NFC 'é': accepted.
    expect(ruleOf(`/memories/${'e\u0301'.repeat(85)}`)).toBe('accepted');
    expect(ruleOf(`/memories/${'e\u0301'.repeat(128)}`)).toBe('segment-too-long');
    const o = outcome(`/memories/${'é'.repeat(128)}`);
    expect(o).toMatchObject({ rule: 'segment-too-long' });
    expect(
      (o as { message: string }).message.endsWith(`: a name may be at most ${MAX_SEGMENT_BYTES} bytes (UTF-8).`),
    ).toBe(true);
  });
});

describe('every rule tells the model what is wrong, in its own words', () => {
  const cases: Array<[string, PathRule, string]> = [
    ['', 'empty', `the path is empty. ${HINT}`],
    [
      '/memories/a\u00e9\u0000',
      'control-character',
      'control characters (including NUL, line breaks and bidi overrides) are not allowed in paths.',
    ],
    ['/memories/\u00e9\ud800', 'ill-formed-unicode', 'the path is not valid Unicode (it has an unpaired surrogate).'],
    ['/memories/a\\b', 'backslash', 'backslashes are not allowed in paths; use "/" between names.'],
    ['//memories/x', 'outside-root', `paths may not start with "//" (network or protocol-relative paths). ${HINT}`],
    ['\\\\server', 'backslash', 'backslashes are not allowed in paths; use "/" between names.'],
    ['C:/memories', 'outside-root', `drive letters and URL schemes are not allowed. ${HINT}`],
    ['file:///memories', 'outside-root', `drive letters and URL schemes are not allowed. ${HINT}`],
    [
      '/memoriesX',
      'outside-root',
      `only /memories itself and paths below it are allowed, not other names that start with "memories". ${HINT}`,
    ],
    ['memories/x', 'outside-root', `paths are absolute: start with /memories. ${HINT}`],
    ['/etc/passwd', 'outside-root', `every path must be /memories or start with /memories/. ${HINT}`],
    ['/memories//x', 'empty-segment', 'empty names ("//") are not allowed in paths.'],
    ['/memories/..', 'dot-segment', '".." segments are not allowed, not even inside /memories.'],
    [
      '/memories/...',
      'dots-and-spaces',
      'a name may not consist only of dots and spaces (nor before ";", "?", "#" or ":").',
    ],
    [
      '/memories/..;x',
      'dots-and-spaces',
      'a name may not consist only of dots and spaces (nor before ";", "?", "#" or ":").',
    ],
    [
      '/memories/%2e%2e',
      'encoded-traversal',
      'a name may not decode or normalise to only dots and spaces (".." in disguise).',
    ],
    [
      '/memories/..¥..',
      'encoded-traversal',
      'a name may not read as ".." when "¥", "₩" or "⁄" is taken as a separator (legacy code pages).',
    ],
    ['/memories/a%2fb', 'encoded-separator', 'a name may not contain "/" or "\\" in any encoding or look-alike form.'],
    ['/memories/a%0ab', 'control-character', 'control characters are not allowed in any encoding.'],
    ['/memories/%c0%ae', 'overlong-utf8', 'overlong UTF-8 percent-encodings (such as %c0%ae) are not allowed.'],
    ['/memories/c:x', 'drive-or-scheme', 'drive letters and URL schemes are not allowed in paths.'],
    ['/memories/CON', 'device-name', 'reserved device names (CON, NUL, COM1, ...) are not allowed as names.'],
    ['/memories/ＣＯＮ', 'device-name', 'reserved device names (CON, NUL, COM1, ...) are not allowed as names.'],
    [
      '/memories/\u200b',
      'invisible-name',
      'a name must have at least one visible character (zero-width, formatting and filler characters alone are not a name).',
    ],
    [
      '/memories/.memvault',
      'reserved',
      "/memories/.memvault is reserved for memvault's own use (in every spelling that a file system or URL layer reads as it).",
    ],
    ['/memories/x'.padEnd(MAX_PATH_BYTES + 1, 'x'), 'too-long', 'the path is longer than 4096 bytes (UTF-8).'],
  ];
  for (const [path, rule, reason] of cases) {
    it(`${rule}: ${JSON.stringify(path.slice(0, 30))}`, () => {
      expect(outcome(path)).toEqual({ rule, message: `Error: Invalid path ${showPath(path)}: ${reason}` });
      expect(outcome(path, canonicalizeWithoutShortcut)).toEqual({
        rule,
        message: `Error: Invalid path ${showPath(path)}: ${reason}`,
      });
    });
  }

  it('too many encoding layers is its own rule', () => {
    // '%2525...41': each round of decoding peels one '25' off; past 32 distinct forms the name is refused.
    const deep = `/memories/%${'25'.repeat(40)}41`;
    expect(outcome(deep)).toEqual({
      rule: 'too-deeply-encoded',
      message: `Error: Invalid path ${showPath(deep)}: the name is encoded or normalised in too many layers.`,
    });
    expect(ruleOf(`/memories/%${'25'.repeat(20)}41`)).toBe('accepted');
  });

  it('non-strings are refused with their own message', () => {
    for (const value of [undefined, 7, null]) {
      expect(outcome(value as unknown as string)).toEqual({
        rule: 'not-a-string',
        message: 'Error: a path must be a string.',
      });
    }
  });
});

describe('how a rejected path is quoted', () => {
  it('JSON-quoted; C1 controls, line separators, bidi controls and the BOM escaped as \\uXXXX', () => {
    expect(showPath('/memories/a')).toBe('"/memories/a"');
    expect(showPath('a\u0085b\u2028c\u2029d\u202ae\u2066f\u2069g\ufeffh\u007f')).toBe(
      '"a\\u0085b\\u2028c\\u2029d\\u202ae\\u2066f\\u2069g\\ufeffh\\u007f"',
    );
    expect(showPath('a\u0009b')).toBe('"a\\tb"');
    expect(showPath('é日😀')).toBe('"é日😀"');
  });

  it('cut after 200 characters with an ellipsis; 200 are shown whole', () => {
    expect(showPath('x'.repeat(200))).toBe(`"${'x'.repeat(200)}"`);
    expect(showPath('x'.repeat(201))).toBe(`"${'x'.repeat(200)}…"`);
    expect(showPath(`${'y'.repeat(199)}ab`)).toBe(`"${'y'.repeat(199)}a…"`);
  });
});

describe('the lenient UTF-8 decoder: every lead-byte class', () => {
  it('5- and 6-byte forms are always overlong; bytes that start nothing are Latin-1', () => {
    expect(ruleOf('/memories/%fc%80%80%80%80%ae')).toBe('overlong-utf8');
    expect(ruleOf('/memories/%f8%80%80%80%ae')).toBe('overlong-utf8');
    expect(ruleOf('/memories/%fb%bf%bf%bf%bf.md')).toBe('overlong-utf8');
    expect(ruleOf('/memories/%fd%bf%bf%bf%bf%bf.md')).toBe('overlong-utf8');
    // 0xfe and 0xff start nothing: þ, ÿ as Latin-1, ordinary names.
    expect(ruleOf('/memories/%fe.md')).toBe('accepted');
    expect(ruleOf('/memories/%ff.md')).toBe('accepted');
    // A lone continuation byte is Latin-1 too; 0x80-0x9f are then C1 controls.
    expect(ruleOf('/memories/%80.md')).toBe('control-character');
    expect(ruleOf('/memories/%a9.md')).toBe('accepted');
    expect(ruleOf('/memories/%bf.md')).toBe('accepted');
  });

  it('the shortest forms at each length pass; one below each is overlong', () => {
    expect(ruleOf('/memories/%c2%a9.md')).toBe('accepted'); // U+00A9, the smallest 2-byte code point range
    expect(ruleOf('/memories/%c1%bf.md')).toBe('overlong-utf8'); // U+007F in two bytes
    expect(ruleOf('/memories/%e0%a0%80.md')).toBe('accepted'); // U+0800
    expect(ruleOf('/memories/%e0%9f%bf.md')).toBe('overlong-utf8'); // U+07FF in three bytes
    expect(ruleOf('/memories/%f0%90%80%80.md')).toBe('accepted'); // U+10000
    expect(ruleOf('/memories/%f0%8f%bf%bf.md')).toBe('overlong-utf8'); // U+FFFF in four bytes
    expect(ruleOf('/memories/%f4%8f%bf%bf.md')).toBe('accepted'); // U+10FFFF
  });

  it('a truncated sequence falls back to Latin-1 byte by byte; a tag-blind reading that is overlong is refused', () => {
    expect(ruleOf('/memories/%e2%82.md')).toBe('control-character'); // 'â' then U+0082
    expect(ruleOf('/memories/%c3.md')).toBe('accepted'); // 'Ã'
    // 0xe0 0x80 '.' read tag-blind is an overlong '.': the IIS bug.
    expect(ruleOf('/memories/%e0%80%2e')).toBe('overlong-utf8');
    // A bad tag in the last byte: strict decoding gives Latin-1, tag-blind decoding gives '‥'.
    expect(ruleOf('/memories/%e2%80%25')).not.toBe('accepted');
  });

  it('surrogates and code points past U+10FFFF decode to the replacement character, an ordinary name', () => {
    expect(ruleOf('/memories/%ed%a0%80.md')).toBe('accepted');
    expect(ruleOf('/memories/%f4%90%80%80.md')).toBe('accepted');
    expect(ruleOf('/memories/%f7%bf%bf%bf.md')).toBe('accepted');
  });

  it('%uXXXX escapes decode as UTF-16 units, case-insensitively, and mix with byte escapes', () => {
    expect(ruleOf('/memories/%u002e%u002E')).toBe('encoded-traversal');
    expect(ruleOf('/memories/%U002f')).toBe('encoded-separator');
    expect(ruleOf('/memories/%2e%u002e')).toBe('encoded-traversal');
    expect(ruleOf('/memories/%u00e9t%c3%a9.md')).toBe('accepted');
    expect(ruleOf('/memories/%u00')).toBe('accepted');
  });
});

describe('hex and character-reference text', () => {
  it('0x2e, &#46; and &#x2e; as dots; &#47; and 0x5c as separators; other hex is text', () => {
    expect(ruleOf('/memories/0x2e0x2e')).toBe('encoded-traversal');
    expect(ruleOf('/memories/&#46;&#46;')).toBe('encoded-traversal');
    expect(ruleOf('/memories/&#x2e;&#x2E;')).toBe('encoded-traversal');
    expect(ruleOf('/memories/&#x002e;.')).toBe('encoded-traversal');
    expect(ruleOf('/memories/a&#47;b')).toBe('encoded-separator');
    expect(ruleOf('/memories/a0x5cb')).toBe('encoded-separator');
    expect(ruleOf('/memories/a&#92;b')).toBe('encoded-separator');
    expect(ruleOf('/memories/a0x2Fb')).toBe('encoded-separator');
    expect(ruleOf('/memories/0x41.md')).toBe('accepted');
    expect(ruleOf('/memories/&#65;.md')).toBe('accepted');
  });
});

describe('the reserved name', () => {
  it('8.3 short names of exactly 8 characters and the name after a cut are reserved; shorter look-alikes are not', () => {
    expect(ruleOf('/memories/memvau~1')).toBe('reserved');
    expect(ruleOf('/memories/.memvau~1')).toBe('reserved');
    expect(ruleOf('/memories/memvau~')).toBe('accepted');
    expect(ruleOf('/memories/.memvault:x')).toBe('reserved');
    expect(ruleOf('/memories/.memvault. .')).toBe('reserved');
    expect(ruleOf('/memories/x/.memvault')).toBe('accepted');
    expect(ruleOf('/memories/.memvaultx;')).toBe('accepted');
  });
});

describe('the path guard middleware', () => {
  function recorder(): { middleware: Middleware; last: () => CommandContext } {
    let last: CommandContext | undefined;
    return {
      middleware: async (ctx, next) => {
        const result = await next();
        last = ctx;
        return result;
      },
      last: () => last!,
    };
  }

  it('a refused path is an INVALID_PATH error result, and the decision names the rule, never the path', async () => {
    const rec = recorder();
    const vault = await createVault({ store: new MemoryStore(), outerMiddlewares: [rec.middleware] });
    const refused = await vault.run('alice', { command: 'view', path: '/memories/%2e%2e/secret' });
    expect(refused).toEqual({
      content: `Error: Invalid path "/memories/%2e%2e/secret": a name may not decode or normalise to only dots and spaces (".." in disguise).`,
      isError: true,
      code: 'INVALID_PATH',
    });
    expect(rec.last().decisions['pathGuard']).toEqual({ blocked: true, rule: 'encoded-traversal' });
    expect(rec.last().pathsCanonical).not.toBe(true);

    const renamed = await vault.run('alice', { command: 'rename', old_path: '/memories/a', new_path: '/memories/CON' });
    expect(renamed).toMatchObject({ isError: true, code: 'INVALID_PATH' });
    expect(rec.last().decisions['pathGuard']).toEqual({ blocked: true, rule: 'device-name' });
  });

  it('an accepted path reaches the command canonical, and the decision says not blocked', async () => {
    const rec = recorder();
    const vault = await createVault({ store: new MemoryStore(), outerMiddlewares: [rec.middleware] });
    expect(
      (await vault.run('alice', { command: 'create', path: '/memories/./cafe\u0301.md', file_text: 'x' })).content,
    ).toBe('File created successfully at: /memories/caf\u00e9.md');
    expect(rec.last().decisions['pathGuard']).toEqual({ blocked: false });
    expect(rec.last().pathsCanonical).toBe(true);
    expect((await vault.run('alice', { command: 'view', path: '/memories/caf\u00e9.md' })).content).toContain('1\tx');
  });
});

describe('the attack and legitimate-name corpora, straight against the guard (fast enough for every mutant)', () => {
  it('every attack the guard must catch is refused, by the shortcut and the full walk alike', () => {
    const missed = attackPaths()
      .filter((a) => a.guardRejects)
      .flatMap((a) =>
        [canonicalizePath, canonicalizeWithoutShortcut].flatMap((f) =>
          'accepted' in outcome(a.path, f) ? [`${JSON.stringify(a.path)} (${a.family})`] : [],
        ),
      );
    expect(missed).toEqual([]);
  });

  it('every legitimate name is accepted, as its NFC, by the shortcut and the full walk alike', () => {
    const refused: string[] = [];
    for (const path of legitimatePaths()) {
      const short = outcome(path);
      const full = outcome(path, canonicalizeWithoutShortcut);
      if (!('accepted' in short) || !('accepted' in full) || short.accepted !== full.accepted)
        refused.push(`${JSON.stringify(path)}: ${JSON.stringify(short)}`);
      else if (short.accepted !== canonicalizePath(short.accepted)) refused.push(`${JSON.stringify(path)}: not stable`);
    }
    expect(refused).toEqual([]);
  });
});

describe('percent-decoding: the byte classes that decide what a name reads as', () => {
  it('a lead byte with too few or no continuation bytes is Latin-1, byte by byte', () => {
    // 0xfe starts nothing: 'þ' and then C1 controls, not a 6-byte form.
    expect(ruleOf('/memories/%fe%80%80%80%80%80.md')).toBe('control-character');
    expect(ruleOf('/memories/%fe%80.md')).toBe('control-character');
    // ASCII bytes never take continuation bytes: 'A' then C1 controls.
    expect(ruleOf('/memories/a%41%80')).toBe('control-character');
    expect(ruleOf('/memories/a%41%80%80')).toBe('control-character');
    // Lone Latin-1 middle dots read as two dots.
    expect(ruleOf('/memories/%b7%b7')).toBe('encoded-traversal');
  });

  it('C0 and C1 lead bytes are overlong even alone or with a bad second byte', () => {
    expect(ruleOf('/memories/%c0.md')).toBe('overlong-utf8');
    expect(ruleOf('/memories/%c1')).toBe('overlong-utf8');
    expect(ruleOf('/memories/x%c0')).toBe('overlong-utf8');
  });

  it('two-byte, four-byte and five-byte classes at their first lead byte', () => {
    // U+00B7 (middle dot) twice, as proper two-byte UTF-8: a two-dot traversal.
    expect(ruleOf('/memories/%c2%b7%c2%b7')).toBe('encoded-traversal');
    // 0xf8 starts a (always overlong) five-byte form, not a four-byte one.
    expect(ruleOf('/memories/%f8%bf%bf%bf%bf.md')).toBe('overlong-utf8');
    // A three-byte sequence with a bad last byte: strict decoding falls back, tag-blind reads U+0820 (fine).
    expect(ruleOf('/memories/%e0%a0%2e.md')).toBe('accepted');
  });

  it('tag-blind readings that only a sloppy decoder sees are refused', () => {
    // e2 40 a5: strict decoding gives 'â@¥'; tag-blind decoding gives U+2025 '‥'.
    expect(ruleOf('/memories/%e2%40%a5')).toBe('encoded-traversal');
  });

  it('byte escapes and %u escapes keep their order', () => {
    // '..;x' is a traversal before ';'; ';..x' would not be.
    expect(ruleOf('/memories/%2e%2e%u003bx')).toBe('encoded-traversal');
    expect(ruleOf('/memories/%u003b%2e%2ex')).toBe('accepted');
  });
});
