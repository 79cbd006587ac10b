/**
 * compareKeys (src/store/memory.ts) orders keys by their UTF-8 bytes, as S3 does, comparing JS code
 * units until the first difference and bytes only when a surrogate is involved.
 */
import { describe, expect, it } from 'vitest';
import { compareKeys } from '../../src/store/memory.js';

const bytewise = (a: string, b: string) => Math.sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));

describe('compareKeys', () => {
  it('agrees with the UTF-8 byte order on prefixes, BMP characters on both sides of the surrogates, and astral ones', () => {
    const units = ['a', 'b', '/', '\u00e9', '\ud7ff', '\ue000', '\uffda', '\u{1F600}', '\u{10000}'];
    let seed = 11;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const key = () => Array.from({ length: next(6) }, () => units[next(units.length)]).join('');
    let astral = 0;
    for (let i = 0; i < 4000; i++) {
      const a = key();
      const b = next(3) === 0 ? a + key() : key();
      expect(Math.sign(compareKeys(a, b)), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).toBe(bytewise(a, b));
      expect(Math.sign(compareKeys(b, a))).toBe(bytewise(b, a));
      if (/[\ud800-\udfff]/.test(a + b)) astral++;
    }
    expect(astral).toBeGreaterThan(1000);
    // The case JS order gets wrong: U+1F600 sorts after U+FFDA by bytes, before it as UTF-16.
    expect(compareKeys('k/\u{1F600}', 'k/\uffda')).toBeGreaterThan(0);
    expect(compareKeys('k/a', 'k/a')).toBe(0);
    expect(compareKeys('k/', 'k/a')).toBeLessThan(0);
  });
});
