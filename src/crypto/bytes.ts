/** Small byte helpers shared by the crypto modules (no key material is kept here). */
import { randomFillSync, timingSafeEqual } from 'node:crypto';

const utf8Encoder = new TextEncoder();
const strictUtf8Decoder = new TextDecoder('utf-8', { fatal: true });

export function utf8(text: string): Uint8Array {
  return utf8Encoder.encode(text);
}

/** Decode UTF-8, throwing on malformed input (a decrypted name must be valid text). */
export function strictUtf8(bytes: Uint8Array): string {
  return strictUtf8Decoder.decode(bytes);
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const total = parts.reduce((n, p) => n + p.byteLength, 0);
  const out = new Uint8Array(total);
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.byteLength;
  }
  return out;
}

export function u32be(value: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, value, false);
  return out;
}

export function readU32be(bytes: Uint8Array, offset: number): number {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(offset, false);
}

/** Length-prefixed field (u32 big-endian length, then the bytes): keeps AD fields unambiguous. */
export function lengthPrefixed(bytes: Uint8Array): Uint8Array {
  return concatBytes(u32be(bytes.byteLength), bytes);
}

/**
 * `fixed`, then each text as a length-prefixed UTF-8 field: the same bytes as
 * concatBytes(fixed, lengthPrefixed(utf8(t1)), ...), built in one allocation (every seal and open
 * builds its associated data so; the eight small arrays of the composed form cost 3 µs a call).
 */
export function withLengthPrefixedTexts(fixed: Uint8Array, ...texts: string[]): Uint8Array {
  let total = fixed.byteLength;
  const lengths = texts.map((text) => {
    const length = Buffer.byteLength(text, 'utf8');
    total += 4 + length;
    return length;
  });
  const out = new Uint8Array(total);
  out.set(fixed, 0);
  const view = new DataView(out.buffer);
  let offset = fixed.byteLength;
  texts.forEach((text, i) => {
    const length = lengths[i]!;
    view.setUint32(offset, length, false);
    offset += 4;
    utf8Encoder.encodeInto(text, out.subarray(offset, offset + length));
    offset += length;
  });
  return out;
}

/**
 * A fresh random nonce of `bytes` bytes from node:crypto, drawn from a pool filled a batch at a
 * time: randomFillSync costs about 2 µs a call whatever its size, and every write seals twice (its
 * content and its version record). Each nonce is bytes never handed out before (the pool is
 * refilled, never reused); nonces are public (they travel in the header), so the pool holds no secret.
 */
export function randomNonce(bytes: number): Uint8Array {
  if (nonceOffset + bytes > noncePool.byteLength) {
    noncePool = randomFillSync(new Uint8Array(Math.max(NONCE_POOL_BYTES, bytes)));
    nonceOffset = 0;
  }
  const nonce = noncePool.slice(nonceOffset, nonceOffset + bytes);
  nonceOffset += bytes;
  return nonce;
}

const NONCE_POOL_BYTES = 4096;
let noncePool = new Uint8Array(0);
let nonceOffset = 0;

export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && timingSafeEqual(a, b);
}

export function toBase64Url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** Strict base64url (no padding): returns null for anything that would not round-trip. */
export function fromBase64UrlStrict(text: string): Uint8Array | null {
  if (!BASE64URL.test(text) || text.length % 4 === 1) return null;
  const bytes = Buffer.from(text, 'base64url');
  if (bytes.toString('base64url') !== text) return null;
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Strict standard base64 (padding optional): null unless it decodes and round-trips. */
export function fromBase64Strict(text: string): Uint8Array | null {
  if (!BASE64.test(text)) return null;
  const bytes = Buffer.from(text, 'base64');
  if (bytes.toString('base64').replace(/=+$/, '') !== text.replace(/=+$/, '')) return null;
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Strict standard base64 of a secret, decoded into a fresh, zero-filled buffer of its own
 * (Buffer.from(text, 'base64') takes small results from Node's shared pool, where a key would
 * outlive every wipe of the copy). Null unless it decodes and round-trips.
 */
export function decodeBase64Secret(text: string): Uint8Array | null {
  if (!BASE64.test(text)) return null;
  const out = Buffer.alloc(Buffer.byteLength(text, 'base64'));
  const written = out.write(text, 'base64');
  const bytes = new Uint8Array(out.buffer, out.byteOffset, written);
  if (written !== out.byteLength || out.toString('base64').replace(/=+$/, '') !== text.replace(/=+$/, '')) {
    out.fill(0);
    return null;
  }
  return bytes;
}

export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}
