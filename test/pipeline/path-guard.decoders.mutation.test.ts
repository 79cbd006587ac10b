/**
 * The path guard's decoders and limits at the edges the first mutation runs left unasserted.
 * Each case is a name a user could send: what the lenient and the tag-blind UTF-8
 * readings make of its escapes decides whether it is refused, and a decoder that reads one byte
 * class wrongly either lets a disguised separator, traversal or invisible name through or refuses
 * an ordinary name. Every case is checked by the shortcut and the full walk alike.
 */
import { describe, expect, it } from 'vitest';
import type { CommandContext } from '../../src/pipeline/context.js';
import {
  canonicalizePath,
  canonicalizeWithoutShortcut,
  InvalidPathError,
  MAX_PATH_BYTES,
  pathGuard,
  showPath,
  type PathRule,
} from '../../src/pipeline/path-guard.js';
import type { MemoryCommand } from '../../src/tool/types.js';

function outcome(
  path: string,
  canonicalize = canonicalizePath,
): { rule: PathRule; message: string } | { accepted: string } {
  try {
    return { accepted: canonicalize(path) };
  } catch (error) {
    if (error instanceof InvalidPathError) return { rule: error.rule, message: error.message };
    throw error;
  }
}

const ruleOf = (path: string): PathRule | 'accepted' => {
  const short = outcome(path);
  expect(outcome(path, canonicalizeWithoutShortcut), path).toEqual(short);
  return 'rule' in short ? short.rule : 'accepted';
};

describe('the strict (lenient-overlong) UTF-8 reading, byte class by byte class', () => {
  it('0xfe and 0xff start nothing: each is Latin-1, and the next byte is read on its own', () => {
    // Read as a two-byte lead, 0xfe/0xff + a continuation byte would be a Thaana or NKo combining
    // mark (U+07A6, U+07EE): an invisible name. As Latin-1 it is 'þ¦' / 'ÿ®', an ordinary name.
    expect(ruleOf('/memories/%fe%a6')).toBe('accepted');
    expect(ruleOf('/memories/%ff%ae')).toBe('accepted');
  });

  it('0xfc and 0xfd need five continuation bytes: with four they are Latin-1, not an overlong form', () => {
    expect(ruleOf('/memories/%fc%a9%a9%a9%a9')).toBe('accepted');
    expect(ruleOf('/memories/%fd%a9%a9%a9%a9')).toBe('accepted');
    expect(ruleOf('/memories/%fc%a9%a9%a9%a9%a9')).toBe('overlong-utf8');
  });

  it('0xc2-0xdf with a continuation byte is one character, not a letter and a C1 control', () => {
    // %c3%80 is 'À'; read as Latin-1 bytes it would be 'Ã' + U+0080, a control character.
    expect(ruleOf('/memories/%c3%80.md')).toBe('accepted');
    expect(ruleOf('/memories/%df%80')).toBe('accepted');
  });

  it('a continuation byte on its own is Latin-1 and never starts a sequence', () => {
    // 0xa0 0xaf as a two-byte sequence would be '/' (0x2f): as Latin-1 it is NBSP and a macron.
    expect(ruleOf('/memories/a%a0%afb')).toBe('accepted');
    expect(ruleOf('/memories/x%bf%ae%bf%ae')).toBe('accepted');
  });

  it("a three-byte lead contributes only its low bits: U+0800 is a letter, not a tag character's neighbour", () => {
    // Taking the whole lead byte would put U+0800 at U+E0800 (default-ignorable): an invisible name.
    expect(ruleOf('/memories/%e0%a0%80')).toBe('accepted');
    expect(ruleOf('/memories/%e1%80%80')).toBe('accepted');
  });

  it('a lead byte followed by a byte without the continuation tag is Latin-1 followed by that byte', () => {
    // 'Â/' once decoded: a separator, although a decoder that skips the tag check reads '¯'.
    expect(ruleOf('/memories/a%c2%2fb')).toBe('encoded-separator');
    expect(ruleOf('/memories/%c2%2e%c2%2e')).toBe('accepted');
    expect(ruleOf('/memories/%e2%2e%2e')).toBe('accepted');
  });

  it('the bytes before a Latin-1 fallback are kept', () => {
    // '©:' once decoded. Losing the text before a fallback byte makes something else of the name.
    expect(ruleOf('/memories/%a9:')).toBe('accepted');
    expect(ruleOf('/memories/%2e%2e%a9')).toBe('accepted');
    expect(ruleOf('/memories/%2e%2e%c3')).toBe('accepted');
  });

  it('encoded surrogates are U+FFFD each, visible, and never pair up into another character', () => {
    expect(ruleOf('/memories/%ed%a0%80')).toBe('accepted');
    expect(ruleOf('/memories/..%ed%a0%80')).toBe('accepted');
    // Paired, these would be U+E0001 (a tag character) and U+102E0 (a combining mark): invisible names.
    expect(ruleOf('/memories/%ed%ad%80%ed%b0%81')).toBe('accepted');
    expect(ruleOf('/memories/%ed%a0%80%ed%bb%a0')).toBe('accepted');
    // A %u escape is a UTF-16 unit as sent; an encoded low surrogate after it is still U+FFFD.
    expect(ruleOf('/memories/%uDB40%ed%bf%bf')).toBe('accepted');
    expect(ruleOf('/memories/%uDB40%ed%b0%81')).toBe('accepted');
    expect(ruleOf('/memories/%uDB40%uDC01')).toBe('invisible-name');
    // The same with the high half encoded (U+D800 itself) and the low half as a %u escape: U+102E0 if paired.
    expect(ruleOf('/memories/%ed%a0%80%uDEE0')).toBe('accepted');
  });
});

describe('the tag-blind reading (a decoder that does not check continuation tags)', () => {
  it('reads a two-byte lead with any next byte: U+0300 alone is an invisible name, two U+00B7 are ".."', () => {
    expect(ruleOf('/memories/%cc%40')).toBe('invisible-name');
    expect(ruleOf('/memories/%c2%77%c2%77')).toBe('encoded-traversal');
  });

  it('only 0xc0-0xf7 start a sequence: 0xf8-0xff are single bytes to it too', () => {
    // As a four-byte lead 0xf8 would make an overlong form of these bytes; as a three-byte lead 0xff
    // would make U+FE0F (a variation selector), as a two-byte lead 0xf9 U+064B (a combining mark).
    expect(ruleOf('/memories/%f8%40%a9%a9')).toBe('accepted');
    expect(ruleOf('/memories/%ff%b8%4f')).toBe('accepted');
    expect(ruleOf('/memories/%f9%4b')).toBe('accepted');
  });

  it('a sequence cut off by the end of the escapes is Latin-1, not completed with zero bits', () => {
    expect(ruleOf('/memories/%cc')).toBe('accepted');
    expect(ruleOf('/memories/x%cc')).toBe('accepted');
  });
});

describe('form decoding and the number of layers', () => {
  it("'+' is a space to a form decoder: '+' alone is a name of spaces, not an empty one", () => {
    expect(outcome('/memories/+')).toMatchObject({ rule: 'encoded-traversal' });
    expect(ruleOf('/memories/a+b.md')).toBe('accepted');
  });

  it('32 distinct forms are allowed, 33 are too many', () => {
    // '%25' repeated n times then '41': every round of decoding peels one layer, n + 2 forms in all.
    const layers = (n: number) => `/memories/%${'25'.repeat(n)}41`;
    let most = 0;
    while (ruleOf(layers(most + 1)) === 'accepted') most += 1;
    expect(ruleOf(layers(most + 1))).toBe('too-deeply-encoded');
    // The name with the most layers allowed has exactly 32 forms: itself, one per layer, and 'A'.
    expect(most + 2).toBe(32);
  });
});

describe('limits', () => {
  it('a path of exactly 4,096 ASCII characters that is not already canonical passes; 4,097 do not', () => {
    // A trailing slash keeps it off the one-regex shortcut.
    const segments = Array.from({ length: 16 }, () => 'a'.repeat(250));
    let path = `/memories/${segments.join('/')}`;
    path += `/${'b'.repeat(MAX_PATH_BYTES - path.length - 2)}/`;
    expect(path.length).toBe(MAX_PATH_BYTES);
    expect(ruleOf(path)).toBe('accepted');
    expect(ruleOf(`${path.slice(0, -1)}b/`)).toBe('too-long');
  });

  it('an already canonical path of 4,097 characters is refused like any other (the shortcut has the same limit)', () => {
    const segments = Array.from({ length: 16 }, () => 'a'.repeat(250));
    const base = `/memories/${segments.join('/')}/`;
    const at = `${base}${'c'.repeat(MAX_PATH_BYTES - base.length)}`;
    expect(at.length).toBe(MAX_PATH_BYTES);
    expect(ruleOf(at)).toBe('accepted');
    expect(ruleOf(`${at}c`)).toBe('too-long');
  });

  it('the limit is on the bytes sent as well as the NFC form kept: a decomposed path over 4,096 bytes is refused', () => {
    // 'e' + U+0301 is 3 bytes as sent, 2 bytes as 'é' (NFC).
    const decomposed = `/memories/${Array.from({ length: 20 }, () => 'e\u0301'.repeat(69)).join('/')}`;
    expect(Buffer.byteLength(decomposed)).toBeGreaterThan(MAX_PATH_BYTES);
    expect(Buffer.byteLength(decomposed.normalize('NFC'))).toBeLessThan(MAX_PATH_BYTES);
    expect(outcome(decomposed)).toEqual({
      rule: 'too-long',
      message: `Error: Invalid path ${showPath(decomposed)}: the path is longer than ${MAX_PATH_BYTES} bytes (UTF-8).`,
    });
  });

  it('a path that NFC makes longer than 4,096 bytes is refused with the too-long message', () => {
    const qa = '\u0958'; // 3 bytes, NFC U+0915 U+093C (6 bytes)
    const grown = `/memories/${Array.from({ length: 20 }, () => qa.repeat(40)).join('/')}`;
    expect(Buffer.byteLength(grown)).toBeLessThan(MAX_PATH_BYTES);
    expect(outcome(grown)).toEqual({
      rule: 'too-long',
      message: `Error: Invalid path ${showPath(grown)}: the path is longer than ${MAX_PATH_BYTES} bytes (UTF-8).`,
    });
  });

  it('a segment too long is reported as such before what its escapes decode to', () => {
    expect(ruleOf(`/memories/${'a'.repeat(253)}%2f`)).toBe('segment-too-long');
    // Decomposed, and too long once composed: the length is reported, not the ".." behind "¥".
    expect(ruleOf(`/memories/..¥${'e\u0301'.repeat(128)}`)).toBe('segment-too-long');
  });

  it('the decomposed spelling of a name with escapes is checked for what it hides, not for its length', () => {
    // 258 bytes as sent, 173 as kept (NFC).
    const name = `${'e\u0301'.repeat(85)}%41`;
    expect(Buffer.byteLength(name)).toBeGreaterThan(255);
    expect(ruleOf(`/memories/${name}`)).toBe('accepted');
    expect(canonicalizePath(`/memories/${name}`)).toBe(`/memories/${'é'.repeat(85)}%41`);
  });
});

describe('device names and bare controls', () => {
  it('device names are whole names: names that only end in one are ordinary', () => {
    for (const name of ['icon.png', 'falcon', 'faux.md', 'xnul', 'bigaux.txt', 'telecom1', 'lpt1x', 'bprn']) {
      expect(ruleOf(`/memories/${name}`), name).toBe('accepted');
      expect(ruleOf(`/memories/${name}%20x`), name).toBe('accepted');
    }
    expect(ruleOf('/memories/nul%2etxt')).toBe('device-name');
  });

  it('a path that is only a control character or a lone surrogate is refused for that, not as outside the root', () => {
    expect(ruleOf('\u0000')).toBe('control-character');
    expect(ruleOf('\u0085')).toBe('control-character');
    expect(ruleOf('\ud800')).toBe('ill-formed-unicode');
    expect(ruleOf('é')).toBe('outside-root');
  });
});

describe('reserved names, references and the outside-root reasons', () => {
  it('only the 8.3 name itself is reserved, not names that contain it', () => {
    expect(ruleOf('/memories/memvau~12')).toBe('reserved');
    expect(ruleOf('/memories/xmemvau~1')).toBe('accepted');
    expect(ruleOf('/memories/memvau~1x')).toBe('accepted');
    expect(ruleOf('/memories/memvau~x')).toBe('accepted');
  });

  it('hexadecimal character references to "\\" with leading zeros are separators', () => {
    for (const reference of ['&#x5c;', '&#x05c;', '&#x005C;', '&#92;'])
      expect(ruleOf(`/memories/a${reference}b`), reference).toBe('encoded-separator');
  });

  it('drive letters, bare schemes of any length and the listed schemes glued to a name are refused; other colons are not', () => {
    for (const name of [
      'c:',
      'c:x',
      'ab:',
      'foo:',
      'git+ssh:',
      'http:evil',
      'https:x',
      'ftp:x',
      'ftps:x',
      'php:filter',
      'data:text',
      'FILE:x',
    ]) {
      expect(ruleOf(`/memories/${name}`), name).toBe('drive-or-scheme');
    }
    for (const name of ['my-php:notes', 'todo-http:later', '10:30 standup', 'TODO: call', 'http: x', 'foo:bar']) {
      expect(ruleOf(`/memories/${name}`), name).toBe('accepted');
    }
  });

  it('a colon later in a path outside the root is not a drive or scheme', () => {
    expect(outcome('/etc/a:b')).toEqual({
      rule: 'outside-root',
      message: `Error: Invalid path "/etc/a:b": every path must be /memories or start with /memories/. Paths must be /memories or /memories/<name>[/<name>...].`,
    });
    expect(outcome('x:/memories')).toMatchObject({
      message: expect.stringContaining('drive letters and URL schemes are not allowed.'),
    });
  });
});

describe('the middleware', () => {
  const context = (command: MemoryCommand | undefined): CommandContext =>
    ({
      requestId: 'r',
      uid: 'u',
      input: command,
      command,
      pathsCanonical: false,
      files: {},
      stats: {},
      decisions: {},
    }) as unknown as CommandContext;

  it('a context without a command (refused by validation) passes through untouched', async () => {
    const ctx = context(undefined);
    const result = await pathGuard(ctx, async () => ({ content: 'next', isError: false }));
    expect(result).toEqual({ content: 'next', isError: false });
    expect(ctx.decisions).toEqual({});
    expect(ctx.pathsCanonical).toBe(false);
  });

  it("an error that is not memvault's own propagates without a decision (nothing was judged)", async () => {
    const command = {
      command: 'view',
      get path(): string {
        throw new TypeError('boom');
      },
    } as unknown as MemoryCommand;
    const ctx = context(command);
    await expect(pathGuard(ctx, async () => ({ content: 'next', isError: false }))).rejects.toThrow(TypeError);
    expect(ctx.decisions).toEqual({});
  });
});
