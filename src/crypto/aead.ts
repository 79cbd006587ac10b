/**
 * XChaCha20-Poly1305 (IETF), the one AEAD of the format, byte for byte libsodium's
 * crypto_aead_xchacha20poly1305_ietf_encrypt/decrypt (ciphertext then the 16-byte tag), computed by
 * Node's own ChaCha20-Poly1305 (OpenSSL, native) under the HChaCha20 subkey of the first 16 nonce
 * bytes, with the last 8 nonce bytes after four zero bytes as the IETF nonce: the construction
 * libsodium uses. For a 4 KiB file this is about half the CPU of libsodium's WebAssembly, which
 * also copies every input into and out of its heap. Where OpenSSL offers no ChaCha20-Poly1305 (a
 * FIPS build), libsodium does the work, with the same bytes.
 *
 * Outputs are fresh arrays of their own (never Node's shared buffer pool), and the subkey and the
 * intermediate buffers are zeroed: an unwrapped data key passes through here.
 */
import { createCipheriv, createDecipheriv, getCiphers } from 'node:crypto';
import { readySodium } from './sodium.js';

const KEY_BYTES = 32;
const NONCE_BYTES = 24;
const TAG_BYTES = 16;
const NATIVE = getCiphers().includes('chacha20-poly1305');

/** HChaCha20 (RFC draft-irtf-cfrg-xchacha, section 2.2): the subkey of a key and 16 nonce bytes. */
export function hchacha20(key: Uint8Array, nonce16: Uint8Array): Buffer {
  if (key.byteLength !== KEY_BYTES || nonce16.byteLength !== 16) throw new Error('hchacha20 takes a 32-byte key and 16 nonce bytes');
  const k = new DataView(key.buffer, key.byteOffset, KEY_BYTES);
  const n = new DataView(nonce16.buffer, nonce16.byteOffset, 16);
  const x = new Uint32Array(16);
  x[0] = 0x61707865;
  x[1] = 0x3320646e;
  x[2] = 0x79622d32;
  x[3] = 0x6b206574;
  for (let i = 0; i < 8; i++) x[4 + i] = k.getUint32(i * 4, true);
  for (let i = 0; i < 4; i++) x[12 + i] = n.getUint32(i * 4, true);
  const quarter = (a: number, b: number, c: number, d: number): void => {
    x[a]! += x[b]!;
    x[d] = rotl(x[d]! ^ x[a]!, 16);
    x[c]! += x[d];
    x[b] = rotl(x[b]! ^ x[c]!, 12);
    x[a]! += x[b];
    x[d] = rotl(x[d] ^ x[a]!, 8);
    x[c]! += x[d];
    x[b] = rotl(x[b] ^ x[c]!, 7);
  };
  for (let round = 0; round < 10; round++) {
    quarter(0, 4, 8, 12);
    quarter(1, 5, 9, 13);
    quarter(2, 6, 10, 14);
    quarter(3, 7, 11, 15);
    quarter(0, 5, 10, 15);
    quarter(1, 6, 11, 12);
    quarter(2, 7, 8, 13);
    quarter(3, 4, 9, 14);
  }
  const out = Buffer.alloc(KEY_BYTES);
  for (let i = 0; i < 4; i++) out.writeUInt32LE(x[i]!, i * 4);
  for (let i = 0; i < 4; i++) out.writeUInt32LE(x[12 + i]!, 16 + i * 4);
  x.fill(0);
  return out;
}

function rotl(v: number, bits: number): number {
  return (v << bits) | (v >>> (32 - bits));
}

function ietfNonce(nonce: Uint8Array): Buffer {
  const iv = Buffer.alloc(12);
  iv.set(nonce.subarray(16, NONCE_BYTES), 4);
  return iv;
}

function checkSizes(key: Uint8Array, nonce: Uint8Array): void {
  if (key.byteLength !== KEY_BYTES) throw new Error('key must be 32 bytes');
  if (nonce.byteLength !== NONCE_BYTES) throw new Error('nonce must be 24 bytes');
}

/** Joins parts into a fresh array and zeroes the parts. */
function joinAndWipe(parts: Buffer[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.byteLength;
    p.fill(0);
  }
  return out;
}

/** Ciphertext followed by the tag, as libsodium's crypto_aead_xchacha20poly1305_ietf_encrypt. */
export function xchachaEncrypt(plaintext: Uint8Array, associatedData: Uint8Array, nonce: Uint8Array, key: Uint8Array): Uint8Array {
  checkSizes(key, nonce);
  if (!NATIVE) return readySodium().crypto_aead_xchacha20poly1305_ietf_encrypt(plaintext, associatedData, null, nonce, key);
  const subkey = hchacha20(key, nonce.subarray(0, 16));
  try {
    const cipher = createCipheriv('chacha20-poly1305', subkey, ietfNonce(nonce), { authTagLength: TAG_BYTES });
    cipher.setAAD(associatedData, { plaintextLength: plaintext.byteLength });
    return joinAndWipe([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  } finally {
    subkey.fill(0);
  }
}

/** The plaintext, or a thrown error when the tag does not verify (as libsodium's decrypt throws). */
export function xchachaDecrypt(sealed: Uint8Array, associatedData: Uint8Array, nonce: Uint8Array, key: Uint8Array): Uint8Array {
  checkSizes(key, nonce);
  if (!NATIVE) return readySodium().crypto_aead_xchacha20poly1305_ietf_decrypt(null, sealed, associatedData, nonce, key);
  if (sealed.byteLength < TAG_BYTES) throw new Error('ciphertext cannot be decrypted using that key');
  const subkey = hchacha20(key, nonce.subarray(0, 16));
  try {
    const decipher = createDecipheriv('chacha20-poly1305', subkey, ietfNonce(nonce), { authTagLength: TAG_BYTES });
    const body = sealed.subarray(0, sealed.byteLength - TAG_BYTES);
    decipher.setAAD(associatedData, { plaintextLength: body.byteLength });
    decipher.setAuthTag(sealed.subarray(sealed.byteLength - TAG_BYTES));
    const opened = decipher.update(body);
    try {
      decipher.final(); // throws on a wrong tag, before anything is returned
    } catch (error) {
      opened.fill(0);
      throw error;
    }
    return joinAndWipe([opened]);
  } finally {
    subkey.fill(0);
  }
}
