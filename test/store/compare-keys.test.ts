/**
 * compareKeys (src/store/memory.ts) orders keys by their UTF-8 bytes, as S3 does, comparing JS code
 * units until the first difference and bytes only when a surrogate is involved.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareKeys } from '../../src/store/memory.js';

const bytewise = (a: string, b: string) => Math.sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));

describe('compareKeys', () => {
  it('agrees with the UTF-8 byte order on prefixes, BMP characters on both sides of the surrogates, and astral ones', () => {
    const units = ['a', 'b', '/', '\u00e9', '\ud7ff', '\ue000', '\uffda', '\u{1F600}', '\u{10000}'];
    const key = fc.array(fc.constantFrom(...units), { maxLength: 5 }).map((parts) => parts.join(''));
    // Half the pairs share a prefix (one key extends the other), where the order is decided late.
    const pair = fc.oneof(
      fc.tuple(key, key),
      fc.tuple(key, key).map(([a, rest]) => [a, a + rest] as const),
    );
    let astral = 0;
    fc.assert(
      fc.property(pair, ([a, b]) => {
        expect(Math.sign(compareKeys(a, b)), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).toBe(bytewise(a, b));
        expect(Math.sign(compareKeys(b, a))).toBe(bytewise(b, a));
        if (/[\ud800-\udfff]/.test(a + b)) astral++;
      }),
      { numRuns: 4000 },
    );
    expect(astral).toBeGreaterThan(1000);
    // The case JS order gets wrong: U+1F600 sorts after U+FFDA by bytes, before it as UTF-16.
    expect(compareKeys('k/\u{1F600}', 'k/\uffda')).toBeGreaterThan(0);
    expect(compareKeys('k/a', 'k/a')).toBe(0);
    expect(compareKeys('k/', 'k/a')).toBeLessThan(0);
  });
});
