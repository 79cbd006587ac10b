import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEncryptedCodecProvider } from '../../src/crypto/codec.js';
import { encryptedSegmentLength } from '../../src/crypto/format.js';
import { loadSodium } from '../../src/crypto/sodium.js';
import type { UserCodec } from '../../src/crypto/user-codec.js';
import { caughtSync, expectCode, newVault } from './helpers.js';

beforeAll(async () => {
  await loadSodium();
});

// Canonical segments: non-empty, no '/', not '.' or '..' (the path guard's job; here any text).
const segment = fc
  .string({ unit: 'grapheme', minLength: 1, maxLength: 40 })
  .filter((s) => !s.includes('/') && s !== '.' && s !== '..');
const relativePath = fc.array(segment, { minLength: 1, maxLength: 6 });

describe('encrypted names', () => {
  let codec: UserCodec;
  beforeAll(async () => {
    codec = await (await newVault()).provider.forUser('alice@example.com');
  });

  it('round-trips any canonical path through keyFor / pathFor', () => {
    fc.assert(
      fc.property(relativePath, (segments) => {
        const path = `/memories/${segments.join('/')}`;
        const key = codec.keyFor(path);
        expect(key.startsWith(codec.filesPrefix)).toBe(true);
        expect(key.split('/').length).toBe(codec.filesPrefix.split('/').length - 1 + segments.length);
        expect(codec.pathFor(key)).toBe(path);
      }),
      { numRuns: 300 },
    );
  });

  it('prefixFor(dir) ends with "/" and is a prefix of keyFor(every file below dir), and of no sibling', () => {
    fc.assert(
      fc.property(relativePath, segment, relativePath, (dirSegments, name, otherSegments) => {
        const dir = `/memories/${dirSegments.join('/')}`;
        const prefix = codec.prefixFor(dir);
        expect(prefix.endsWith('/')).toBe(true);
        expect(codec.keyFor(`${dir}/${name}`).startsWith(prefix)).toBe(true);
        const other = `/memories/${otherSegments.join('/')}`;
        const otherIsBelow = other.startsWith(`${dir}/`);
        expect(codec.keyFor(other).startsWith(prefix)).toBe(otherIsBelow);
      }),
      { numRuns: 300 },
    );
    expect(codec.prefixFor('/memories')).toBe(codec.filesPrefix);
    expect(codec.filesPrefix).toBe(`u/${codec.uid}/f/`);
  });

  it('is deterministic across processes and hides names: no plaintext, same name in two folders differs', async () => {
    const { store, keyProvider, provider } = await newVault();
    const first = await provider.forUser('alice');
    const second = await (await createEncryptedCodecProvider({ store, keyProvider })).forUser('alice');
    expect(second.keyFor('/memories/projects/notes.md')).toBe(first.keyFor('/memories/projects/notes.md'));
    const a = first.keyFor('/memories/a/notes.md').split('/').pop();
    const b = first.keyFor('/memories/b/notes.md').split('/').pop();
    expect(a).not.toBe(b);
    expect(first.keyFor('/memories/projects/notes.md')).not.toMatch(/projects|notes/);
    // Another user's codec names the same path differently.
    const bob = await provider.forUser('bob');
    expect(bob.keyFor('/memories/projects/notes.md').split('/').slice(3)).not.toEqual(
      first.keyFor('/memories/projects/notes.md').split('/').slice(3),
    );
  });

  it('keeps segments short: a 255-byte segment becomes 362 characters', () => {
    const long = 'x'.repeat(255);
    const key = codec.keyFor(`/memories/${long}`);
    const encoded = key.slice(codec.filesPrefix.length);
    expect(encoded.length).toBe(362);
    expect(encryptedSegmentLength(255)).toBe(362);
    expect(codec.keyFor('/memories/a').slice(codec.filesPrefix.length).length).toBe(encryptedSegmentLength(1));
  });

  it('throws INVALID_PATH "too long" when the store key would exceed 1,024 bytes', () => {
    const path = `/memories/${Array.from({ length: 3 }, () => 'y'.repeat(255)).join('/')}`;
    const error = caughtSync(() => codec.keyFor(path));
    expectCode(error, 'INVALID_PATH');
    expect(error.message).toContain('too long');
    // Just under the limit works: two 255-byte segments.
    expect(Buffer.byteLength(codec.keyFor(`/memories/${'y'.repeat(255)}/${'z'.repeat(255)}`))).toBeLessThanOrEqual(
      1024,
    );
  });

  it('honours a smaller maxKeyBytes (a store adapter that adds a prefix)', async () => {
    const small = await (await newVault({ maxKeyBytes: 100 })).provider.forUser('alice');
    expectCode(
      caughtSync(() => small.keyFor(`/memories/${'q'.repeat(60)}`)),
      'INVALID_PATH',
    );
    expect(small.keyFor('/memories/q').length).toBeLessThanOrEqual(100);
  });

  it('pathFor rejects tampered, foreign and malformed keys with INTEGRITY', async () => {
    const key = codec.keyFor('/memories/dir/file.md');
    const last = key.at(-2) === 'A' ? 'B' : 'A';
    const tampered = `${key.slice(0, -2)}${last}${key.slice(-1)}`;
    expectCode(
      caughtSync(() => codec.pathFor(tampered)),
      'INTEGRITY',
    );
    // Segments moved under another parent do not decrypt (the SIV binds the parent path).
    const [, dirSegment] = codec.keyFor('/memories/dir').split('/f/');
    const fileSegment = key.split('/').pop()!;
    expectCode(
      caughtSync(() => codec.pathFor(`${codec.filesPrefix}${fileSegment}`)),
      'INTEGRITY',
    );
    expectCode(
      caughtSync(() => codec.pathFor(`${codec.filesPrefix}${dirSegment}/${dirSegment}`)),
      'INTEGRITY',
    );
    expectCode(
      caughtSync(() => codec.pathFor(`${codec.filesPrefix}${dirSegment}/`)),
      'INTEGRITY',
    );
    expectCode(
      caughtSync(() => codec.pathFor(`${codec.filesPrefix}`)),
      'INTEGRITY',
    );
    expectCode(
      caughtSync(() => codec.pathFor(`${codec.filesPrefix}not*base64`)),
      'INTEGRITY',
    );
    const bob = await (await newVault()).provider.forUser('bob');
    expectCode(
      caughtSync(() => codec.pathFor(bob.keyFor('/memories/dir/file.md'))),
      'INTEGRITY',
    );
  });

  it('refuses non-canonical paths (caller bugs) instead of naming them', () => {
    for (const bad of ['/memories', 'memories/a', '/other/a', '/memories//a', '/memories/a/', '/memories/../a']) {
      expectCode(
        caughtSync(() => codec.keyFor(bad)),
        'INVALID_PATH',
      );
    }
  });
});
