/**
 * The redactor's shortcuts must not change what it finds: the anchored keyword search equals the
 * plain keyword alternation, the sparse offset map of the folded view equals a dense one, and
 * known token formats are found wherever they sit in a long run of token characters.
 */
import { describe, expect, it } from 'vitest';
import { KEYWORDS, nextKeyword } from '../../src/pii/detectors/secret.js';
import { redact } from '../../src/pii/index.js';
import { fold, normalizedView } from '../../src/pii/normalize.js';

function random(seed: number): () => number {
  let x = seed;
  return () => (x = (x * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
}

describe('anchored keyword search', () => {
  it('finds exactly what the keyword alternation finds, from every offset', () => {
    const parts = [
      'pass',
      'word',
      'shared access key',
      'api',
      '_',
      ' ',
      'key',
      'clé',
      'cle',
      'ar',
      'x',
      'Token',
      'SECRET',
      'mot de passe',
      'contraseña',
      'pwd',
      'subscription ',
      'encryption-',
      'Schlüssel',
      'clave',
      'passwd',
      '\n',
      'é',
      'PassPhrase',
    ];
    const rnd = random(3);
    let matches = 0;
    for (let t = 0; t < 4000; t++) {
      let s = '';
      const n = Math.floor(rnd() * 12);
      for (let i = 0; i < n; i++) s += parts[Math.floor(rnd() * parts.length)];
      const expected: unknown[] = [];
      const actual: unknown[] = [];
      for (let from = 0; from <= s.length; from++) {
        KEYWORDS.lastIndex = from;
        const e = KEYWORDS.exec(s);
        const a = nextKeyword(s, from);
        expected.push(e?.index, e?.[0]);
        actual.push(a?.index, a?.[0]);
        if (e !== null) matches++;
      }
      if (JSON.stringify(actual) !== JSON.stringify(expected)) expect(actual, s).toEqual(expected);
    }
    expect(matches).toBeGreaterThan(10_000);
  });
});

describe('folded view offset map', () => {
  it('maps every view offset and span back as a dense per-character map does', () => {
    const alphabet = [
      'a',
      '1',
      '\u00a0',
      '\u200b',
      '%40',
      '%2B',
      '%zz',
      '－',
      '０',
      '\u00ad',
      'x',
      '\ufeff',
      '%2e',
      '\u2013',
      '%',
    ];
    const rnd = random(7);
    for (let t = 0; t < 2000; t++) {
      let s = '';
      const len = Math.floor(rnd() * 20);
      for (let i = 0; i < len; i++) s += alphabet[Math.floor(rnd() * alphabet.length)];
      const view = normalizedView(s);
      // Dense reference: where each view character starts and ends in the input.
      const starts: number[] = [];
      const ends: number[] = [];
      let text = '';
      for (let i = 0; i < s.length;) {
        const escape = { '40': '@', '2B': '+', '20': ' ', '2D': '-', '2E': '.' }[s.slice(i + 1, i + 3).toUpperCase()];
        if (s[i] === '%' && escape !== undefined) {
          text += escape;
          starts.push(i);
          ends.push(i + 3);
          i += 3;
          continue;
        }
        const c = s.charCodeAt(i);
        if (c === 0xad || c === 0x200b || c === 0xfeff) {
          i++;
          continue;
        }
        text += c === 0xa0 ? ' ' : c === 0xff0d || c === 0x2013 ? '-' : c === 0xff10 ? '0' : s[i];
        starts.push(i);
        ends.push(i + 1);
        i++;
      }
      starts.push(s.length);
      expect(view.text).toBe(text);
      const expected: number[] = [];
      const actual: number[] = [];
      for (let a = 0; a <= text.length; a++) {
        expected.push(starts[a] as number);
        actual.push(view.toOriginal(a));
        for (let b = a; b <= text.length; b++) {
          const span = view.spanToOriginal(a, b);
          expected.push(starts[a] as number, b > a ? (ends[b - 1] as number) : (starts[a] as number));
          actual.push(span.start, span.end);
        }
      }
      if (actual.join() !== expected.join()) expect(actual, s).toEqual(expected);
    }
  });
});

describe('known token formats inside long runs', () => {
  it.each([
    ['after a key and an equals sign', 'export GITHUB_TOKEN=ghp_8Jk2LmQ9rT4vX7yZ1aB3cD5eF6gH0iJ2kL4m'],
    ['after a path and a colon', 'curl https://api.example.org/v1:ghp_8Jk2LmQ9rT4vX7yZ1aB3cD5eF6gH0iJ2kL4m'],
    [
      'a JWT at the end of a URL',
      'https://app.example.org/cb#id_token=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk',
    ],
  ])('%s', (_label, text) => {
    const { findings } = redact(text);
    expect(findings.map((f) => f.type)).toContain('SECRET');
  });

  it('a format glued inside a longer identifier is not a token', () => {
    expect(
      redact('build_id=xghp_8Jk2LmQ9rT4vX7yZ1aB3cD5eF6gH0iJ2kL4m').findings.filter(
        (f) => f.type === 'SECRET' && f.end - f.start === 40,
      ),
    ).toEqual([]);
  });
});

describe('folded view', () => {
  it('folds every code unit that fold() changes (the scan for candidates skips none) and keeps every other', () => {
    for (let c = 0; c < 0x10000; c++) {
      if (c === 37) continue; // '%' starts an escape only before one of its hex pairs
      const folded = fold(c);
      const expected = folded === -1 ? 'xy' : `x${String.fromCharCode(folded)}y`;
      const view = normalizedView(`x${String.fromCharCode(c)}y`).text;
      if (view !== expected) expect(view, `U+${c.toString(16).padStart(4, '0')}`).toBe(expected);
    }
    expect(normalizedView('a%40b%zz%2e').text).toBe('a@b%zz.');
  });
});
