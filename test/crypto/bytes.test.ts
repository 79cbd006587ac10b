/**
 * The byte helpers every seal and open uses (src/crypto/bytes.ts): the one-allocation associated
 * data must be the very bytes of the composed form (the format's test vector pins the composed
 * form), and the pooled nonces must never repeat, across the pool's refills too.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { concatBytes, lengthPrefixed, randomNonce, utf8, withLengthPrefixedTexts } from '../../src/crypto/bytes.js';
import { NONCE_BYTES } from '../../src/crypto/format.js';

describe('withLengthPrefixedTexts', () => {
  it('gives the bytes of concatBytes(fixed, lengthPrefixed(utf8(text)), ...) for any texts, astral and lone surrogates included', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 64 }),
        fc.array(fc.string({ unit: 'binary', maxLength: 300 }), { maxLength: 5 }),
        (fixed, texts) => {
          const composed = concatBytes(fixed, ...texts.map((text) => lengthPrefixed(utf8(text))));
          expect(Buffer.from(withLengthPrefixedTexts(fixed, ...texts)).equals(Buffer.from(composed))).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('keeps fields apart: moving a character across a boundary changes the bytes', () => {
    const fixed = Uint8Array.of(1, 2, 3);
    expect(
      Buffer.from(withLengthPrefixedTexts(fixed, 'ab', 'c')).equals(
        Buffer.from(withLengthPrefixedTexts(fixed, 'a', 'bc')),
      ),
    ).toBe(false);
    expect([...withLengthPrefixedTexts(fixed, 'é', '')]).toEqual([1, 2, 3, 0, 0, 0, 2, 0xc3, 0xa9, 0, 0, 0, 0]);
  });

  it('reads the fixed part at its offset within a larger buffer', () => {
    const whole = Uint8Array.of(9, 9, 7, 8, 9, 9);
    expect([...withLengthPrefixedTexts(whole.subarray(2, 4), 'x')]).toEqual([7, 8, 0, 0, 0, 1, 0x78]);
  });
});

describe('randomNonce', () => {
  it('hands out nonces of the size asked, never the same bytes twice, across many refills of the pool', () => {
    const seen = new Set<string>();
    // 4,096-byte pool: 24-byte nonces do not divide it, so refills happen with bytes left over.
    for (let i = 0; i < 5_000; i++) {
      const nonce = randomNonce(NONCE_BYTES);
      expect(nonce.byteLength).toBe(NONCE_BYTES);
      seen.add(Buffer.from(nonce).toString('hex'));
    }
    expect(seen.size).toBe(5_000);
  });

  it('gives each caller its own copy (changing one nonce changes no other, nor the next)', () => {
    const a = randomNonce(NONCE_BYTES);
    const before = Buffer.from(a).toString('hex');
    const b = randomNonce(NONCE_BYTES);
    a.fill(0);
    expect(a.buffer).not.toBe(b.buffer);
    expect(Buffer.from(b).toString('hex')).not.toBe('00'.repeat(NONCE_BYTES));
    expect(Buffer.from(randomNonce(NONCE_BYTES)).toString('hex')).not.toBe(before);
  });

  it('serves a size larger than the pool, and odd sizes, whole and random', () => {
    const big = randomNonce(10_000);
    expect(big.byteLength).toBe(10_000);
    expect(new Set(big).size).toBeGreaterThan(200); // random bytes, not a zero-filled tail
    for (const size of [1, 7, 24, 4095, 4096]) expect(randomNonce(size).byteLength).toBe(size);
  });
});
