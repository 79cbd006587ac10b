/** Small byte helpers shared by the crypto modules (no key material is kept here). */
import { timingSafeEqual } from 'node:crypto';

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
