import { describe, expect, it } from 'vitest';
import { isMemvaultError } from '../../src/errors.js';
import {
  canonicalizeCommand,
  canonicalizePath,
  InvalidPathError,
  MAX_PATH_BYTES,
  MAX_SEGMENT_BYTES,
  showPath,
  type PathRule,
} from '../../src/pipeline/path-guard.js';
import type { MemoryCommand } from '../../src/tool/types.js';

function ruleOf(path: string): PathRule | 'accepted' {
  try {
    canonicalizePath(path);
    return 'accepted';
  } catch (error) {
    if (error instanceof InvalidPathError) return error.rule;
    throw error;
  }
}

/** Each rule, both directions: [rejected path, the rule that must fire] and a near miss that passes. */
const RULES: Array<{ rule: PathRule; rejected: string[]; accepted: string[] }> = [
  { rule: 'empty', rejected: [''], accepted: ['/memories'] },
  {
    rule: 'outside-root',
    rejected: [
      '/memories_evil',
      '/memoriesX',
      '//memories',
      '//memories/x',
      '/Memories',
      'memories/x',
      '/etc/passwd',
      'C:/memories',
      'file:///memories/x',
      ' /memories',
      '/memories ',
    ],
    accepted: ['/memories', '/memories/', '/memories/memories_evil', '/memories/X'],
  },
  {
    rule: 'dot-segment',
    rejected: ['/memories/..', '/memories/a/../b', '/memories/a/..', '/memories/../memories'],
    accepted: ['/memories/notes..v2.txt', '/memories/..hidden', '/memories/a..'],
  },
  {
    rule: 'dots-and-spaces',
    rejected: [
      '/memories/...',
      '/memories/....',
      '/memories/. .',
      '/memories/.. ',
      '/memories/ ..',
      '/memories/ ',
      '/memories/..;',
      '/memories/..;x',
      '/memories/..?',
      '/memories/..#',
      '/memories/..::$INDEX_ALLOCATION',
    ],
    accepted: [
      '/memories/.hidden',
      '/memories/...etc',
      '/memories/a. .b',
      '/memories/;..',
      '/memories/ab:..',
      '/memories/?..',
    ],
  },
  {
    rule: 'backslash',
    rejected: ['/memories/a\\b', '/memories\\..\\x', '\\\\server\\share', '/memories/..\\x'],
    accepted: ['/memories/a b'],
  },
  {
    rule: 'control-character',
    rejected: [
      '/memories/a\u0000',
      '/memories/a\nb',
      '/memories/a\rb',
      '/memories/a\tb',
      '/memories/\u007f',
      '/memories/\u0085',
      '/memories/\u202eexe.md',
      '/memories/\ufeffx',
      '/memories/a%00b',
      '/memories/a%0ab',
      '/memories/a%c2%85',
    ],
    // '%0a' followed by a combining accent composes to '%0á' in NFC: the sent spelling is checked too.
    accepted: ['/memories/a\u00a0b', '/memories/a\u200db', '/memories/%0á'],
  },
  {
    rule: 'control-character',
    rejected: ['/memories/e%0a\u0301'],
    accepted: ['/memories/e%0b\u0301x'.replace('%0b', '')],
  },
  {
    rule: 'encoded-traversal',
    rejected: [
      '/memories/%2e%2e',
      '/memories/%2E%2E/x',
      '/memories/.%2e',
      '/memories/%2e',
      '/memories/%252e%252e',
      '/memories/%25252e%25252e',
      '/memories/%u002e%u002e',
      '/memories/%uff0e%uff0e',
      '/memories/%%32%65%%32%65',
      '/memories/．．',
      '/memories/‥',
      '/memories/…',
      '/memories/﹒﹒',
      '/memories/․',
      '/memories/。。',
      '/memories/.\u200b.',
      '/memories/.\u0301.',
      '/memories/..+',
      '/memories/..%20',
      '/memories/..¥..¥win.ini',
      '/memories/..₩x',
    ],
    accepted: [
      '/memories/%2e%2ex',
      '/memories/a%2e%2e',
      '/memories/a‥b',
      '/memories/wait….md',
      '/memories/メモ。md',
      '/memories/¥100',
      '/memories/½ cup',
      '/memories/c++',
    ],
  },
  {
    rule: 'encoded-separator',
    rejected: [
      '/memories/..%2f',
      '/memories/a%2fb',
      '/memories/a%5cb',
      '/memories/a%252fb',
      '/memories/a／b',
      '/memories/a＼b',
      '/memories/a∕b',
      '/memories/a∖b',
      '/memories/a﹨b',
      '/memories/..%u2215',
      '/memories/%ef%bc%8f',
      '/memories/℀',
    ],
    accepted: ['/memories/a%2xb', '/memories/a%zfb', '/memories/a%b'],
  },
  {
    rule: 'overlong-utf8',
    rejected: [
      '/memories/%c0%ae%c0%ae',
      '/memories/..%c0%af',
      '/memories/..%c1%9c',
      '/memories/%e0%80%ae',
      '/memories/%f0%80%80%ae',
      '/memories/%f8%80%80%80%ae',
      '/memories/%25c0%25ae',
      '/memories/%c0%ee',
      '/memories/%c1%1c',
    ],
    accepted: ['/memories/%c3%a9.md', '/memories/%e2%80%a2.md', '/memories/%ff.md'],
  },
  {
    rule: 'drive-or-scheme',
    rejected: [
      '/memories/C:',
      '/memories/c:windows',
      '/memories/C%3a',
      '/memories/file:',
      '/memories/http:',
      '/memories/php:filter',
      '/memories/data:text',
      '/memories/ｃ:',
    ],
    accepted: [
      '/memories/10:30 standup.md',
      '/memories/Meeting: notes.md',
      '/memories/TODO: x',
      '/memories/data: x',
      '/memories/re:ideas.md',
      '/memories/2024-01-01T10:30Z.log',
    ],
  },
  {
    rule: 'device-name',
    rejected: ['/memories/CON', '/memories/nul.txt', '/memories/com1', '/memories/LPT9.md', '/memories/ＣＯＮ'],
    accepted: ['/memories/console.md', '/memories/nullable', '/memories/com10'],
  },
  {
    rule: 'empty-segment',
    rejected: ['/memories//x', '/memories//', '/memories/a//b', '/memories/a///'],
    accepted: ['/memories/a/', '/memories/a/b/'],
  },
  {
    rule: 'reserved',
    rejected: [
      '/memories/.memvault',
      '/memories/.memvault/renames/x',
      '/memories/.MEMVAULT',
      '/memories/./.memvault',
      '/memories/%2ememvault',
      '/memories/．memvault',
    ],
    accepted: ['/memories/a/.memvault', '/memories/.memvaultx', '/memories/memvault'],
  },
  { rule: 'ill-formed-unicode', rejected: ['/memories/\ud800', '/memories/a\udc00'], accepted: ['/memories/😀'] },
  {
    rule: 'segment-too-long',
    rejected: [`/memories/${'a'.repeat(MAX_SEGMENT_BYTES + 1)}`, `/memories/${'é'.repeat(128)}`],
    accepted: [`/memories/${'a'.repeat(MAX_SEGMENT_BYTES)}`, `/memories/${'é'.repeat(127)}`],
  },
  {
    rule: 'too-long',
    rejected: [`/memories/${'abcdefghi/'.repeat(409)}x`, `/memories/${'x'.repeat(10_000)}`],
    accepted: [`/memories/${'abcdefghi/'.repeat(408)}x`],
  },
];

describe('path guard rules, both directions', () => {
  for (const { rule, rejected, accepted } of RULES) {
    it(`${rule}: rejects what it must, accepts the near misses`, () => {
      for (const path of rejected) expect([path, ruleOf(path)]).toEqual([path, rule]);
      for (const path of accepted) expect([path, ruleOf(path)]).toEqual([path, 'accepted']);
    });
  }

  it('paths: exactly 4,096 bytes pass, 4,097 do not; segments: 255 pass, 256 do not', () => {
    const at = (bytes: number) => {
      const head = '/memories/';
      const body = Array.from({ length: Math.ceil((bytes - head.length) / 100) }, () => 'n'.repeat(99)).join('/');
      return head + body.slice(0, bytes - head.length);
    };
    expect(Buffer.byteLength(at(MAX_PATH_BYTES))).toBe(MAX_PATH_BYTES);
    expect(ruleOf(at(MAX_PATH_BYTES))).toBe('accepted');
    expect(ruleOf(at(MAX_PATH_BYTES + 1))).toBe('too-long');
    expect(ruleOf(`/memories/${'日'.repeat(85)}`)).toBe('accepted');
    expect(ruleOf(`/memories/${'日'.repeat(85)}a`)).toBe('segment-too-long');
  });

  it('canonicalises: NFC, "." segments and one trailing slash go away', () => {
    expect(canonicalizePath('/memories/')).toBe('/memories');
    expect(canonicalizePath('/memories/.')).toBe('/memories');
    expect(canonicalizePath('/memories/./a/./b/')).toBe('/memories/a/b');
    expect(canonicalizePath('/memories/cafe\u0301.md')).toBe('/memories/caf\u00e9.md');
    expect(canonicalizePath('/memories/caf\u00e9.md')).toBe('/memories/caf\u00e9.md');
    expect(canonicalizePath('/memories/한국어'.normalize('NFD'))).toBe('/memories/한국어');
    // The stored name keeps what the model wrote: no percent-decoding, no NFKC folding.
    expect(canonicalizePath('/memories/my%20notes.md')).toBe('/memories/my%20notes.md');
    expect(canonicalizePath('/memories/ｆｕｌｌ.md')).toBe('/memories/ｆｕｌｌ.md');
  });

  it('throws only MemvaultError INVALID_PATH, also for non-strings', () => {
    for (const value of [undefined, null, 42, {}, ['/memories']]) {
      let thrown: unknown;
      try {
        canonicalizePath(value as unknown as string);
      } catch (error) {
        thrown = error;
      }
      expect(isMemvaultError(thrown, 'INVALID_PATH')).toBe(true);
    }
  });

  it('errors quote the path safely: invisible characters escaped, long paths cut', () => {
    expect(showPath('/memories/a\u0000\u202e')).toBe('"/memories/a\\u0000\\u202e"');
    expect(showPath('x'.repeat(1000)).length).toBeLessThan(210);
    let message = '';
    try {
      canonicalizePath(`/memories/${'../'.repeat(1000)}`);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message.startsWith('Error: Invalid path "/memories/../')).toBe(true);
    expect(message.length).toBeLessThan(400);
  });

  it('canonicalises every path field of every command', () => {
    const rename: MemoryCommand = { command: 'rename', old_path: '/memories/./a/', new_path: '/memories/cafe\u0301' };
    canonicalizeCommand(rename);
    expect(rename).toEqual({ command: 'rename', old_path: '/memories/a', new_path: '/memories/caf\u00e9' });
    const bad: MemoryCommand = { command: 'rename', old_path: '/memories/a', new_path: '/memories/../x' };
    expect(() => canonicalizeCommand(bad)).toThrow(InvalidPathError);
    for (const command of ['view', 'create', 'str_replace', 'insert', 'delete'] as const) {
      const c = {
        command,
        path: '/memories/%2e%2e/x',
        file_text: '',
        old_str: 'a',
        new_str: '',
        insert_line: 0,
        insert_text: '',
      } as unknown as MemoryCommand;
      expect(() => canonicalizeCommand(c)).toThrow(InvalidPathError);
    }
  });
});
