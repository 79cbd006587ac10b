import fc from 'fast-check';
import { beforeAll, expect, it } from 'vitest';
import { hchacha20, xchachaDecrypt, xchachaEncrypt } from '../../src/crypto/aead.js';
import { loadSodium, type Sodium } from '../../src/crypto/sodium.js';

let sodium: Sodium;
beforeAll(async () => {
  sodium = await loadSodium();
});

const bytes = (n: number) => fc.uint8Array({ minLength: n, maxLength: n });

it('HChaCha20 matches the test vector of draft-irtf-cfrg-xchacha section 2.2.1', () => {
  const key = Uint8Array.from({ length: 32 }, (_, i) => i);
  const nonce = Buffer.from('000000090000004a0000000031415927', 'hex');
  expect(hchacha20(key, nonce).toString('hex')).toBe('82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc');
  expect(() => hchacha20(key.subarray(1), nonce)).toThrow();
  expect(() => hchacha20(key, nonce.subarray(1))).toThrow();
});

it("seals byte for byte as libsodium's crypto_aead_xchacha20poly1305_ietf_encrypt, and each opens the other's", () => {
  fc.assert(
    fc.property(bytes(32), bytes(24), fc.uint8Array({ maxLength: 300 }), fc.uint8Array({ maxLength: 9000 }), (key, nonce, ad, plaintext) => {
      const ours = xchachaEncrypt(plaintext, ad, nonce, key);
      const theirs = sodium.crypto_aead_xchacha20poly1305_ietf_encrypt(plaintext, ad, null, nonce, key);
      expect(Buffer.from(ours).equals(Buffer.from(theirs))).toBe(true);
      expect(Buffer.from(xchachaDecrypt(theirs, ad, nonce, key)).equals(Buffer.from(plaintext))).toBe(true);
      expect(Buffer.from(sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(null, ours, ad, nonce, key)).equals(Buffer.from(plaintext))).toBe(true);
    }),
    { numRuns: 200 },
  );
});

it('refuses every changed byte of ciphertext, tag, associated data, nonce or key, and input shorter than a tag', () => {
  const key = new Uint8Array(32).fill(3);
  const nonce = new Uint8Array(24).fill(5);
  const ad = new TextEncoder().encode('deployment|uid|/memories/a.md');
  const sealed = xchachaEncrypt(new TextEncoder().encode('secret text'), ad, nonce, key);
  for (let i = 0; i < sealed.byteLength; i++) {
    const changed = Uint8Array.from(sealed);
    changed[i]! ^= 1;
    expect(() => xchachaDecrypt(changed, ad, nonce, key)).toThrow();
  }
  const otherAd = Uint8Array.from(ad);
  otherAd[0]! ^= 1;
  expect(() => xchachaDecrypt(sealed, otherAd, nonce, key)).toThrow();
  for (const i of [0, 15, 16, 23]) {
    const otherNonce = Uint8Array.from(nonce);
    otherNonce[i]! ^= 1;
    expect(() => xchachaDecrypt(sealed, ad, otherNonce, key)).toThrow();
  }
  const otherKey = Uint8Array.from(key);
  otherKey[31]! ^= 1;
  expect(() => xchachaDecrypt(sealed, ad, nonce, otherKey)).toThrow();
  expect(() => xchachaDecrypt(sealed.subarray(0, 15), ad, nonce, key)).toThrow();
  expect(() => xchachaDecrypt(sealed.subarray(0, 16), ad, nonce, key)).toThrow();
  expect(() => xchachaEncrypt(sealed, ad, nonce.subarray(1), key)).toThrow('nonce must be 24 bytes');
  expect(() => xchachaEncrypt(sealed, ad, nonce, key.subarray(1))).toThrow('key must be 32 bytes');
});

it("returns arrays of their own, never views of Node's shared buffer pool (an unwrapped data key passes through)", () => {
  const key = new Uint8Array(32).fill(9);
  const nonce = new Uint8Array(24).fill(1);
  const sealed = xchachaEncrypt(new Uint8Array(32).fill(7), new Uint8Array(0), nonce, key);
  const opened = xchachaDecrypt(sealed, new Uint8Array(0), nonce, key);
  for (const out of [sealed, opened]) {
    expect(out.byteOffset).toBe(0);
    expect(out.buffer.byteLength).toBe(out.byteLength);
  }
  expect(Array.from(opened)).toEqual(new Array(32).fill(7));
  // The empty plaintext seals to a tag alone, and opens to nothing.
  const empty = xchachaEncrypt(new Uint8Array(0), new Uint8Array(0), nonce, key);
  expect(empty.byteLength).toBe(16);
  expect(xchachaDecrypt(empty, new Uint8Array(0), nonce, key).byteLength).toBe(0);
});
