/**
 * The subkeys of a user's key versions (src/crypto/format.ts, deriveUserKeys and deriveKeyring): a
 * data key or name root of the wrong length, and a record that lacks a version it needs, are refused
 * with KEY_UNAVAILABLE and a fixed message, never derived into keys; names and the audit pseudonym
 * key come from version 1 in every version of the ring.
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { deriveKeyring, deriveUserKeys } from '../../src/crypto/format.js';
import { loadSodium } from '../../src/crypto/sodium.js';
import { MemvaultError } from '../../src/errors.js';

beforeAll(async () => {
  await loadSodium();
});

const key = (n = 32): Uint8Array => new Uint8Array(randomBytes(n));

function refusal(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(MemvaultError);
    return { code: (error as MemvaultError).code, message: (error as MemvaultError).message };
  }
  throw new Error('expected a refusal');
}

describe('deriveUserKeys', () => {
  it('refuses a data key of the wrong length, whatever the name root', () => {
    for (const bad of [key(31), key(33), key(0)]) {
      expect(refusal(() => deriveUserKeys(bad, 2, key()))).toEqual({
        code: 'KEY_UNAVAILABLE',
        message: 'A data key has the wrong length.',
      });
      expect(refusal(() => deriveUserKeys(bad, 1))).toEqual({
        code: 'KEY_UNAVAILABLE',
        message: 'A data key has the wrong length.',
      });
    }
  });

  it('refuses a name root of the wrong length with a good data key', () => {
    for (const bad of [key(16), key(64)]) {
      expect(refusal(() => deriveUserKeys(key(), 2, bad))).toEqual({
        code: 'KEY_UNAVAILABLE',
        message: 'A data key has the wrong length.',
      });
    }
  });

  it('takes content keys from the version and name keys from the root', () => {
    const root = key();
    const second = key();
    const v1 = deriveUserKeys(root, 1);
    const v2 = deriveUserKeys(second, 2, root);
    expect(Buffer.from(v2.nameKey).equals(Buffer.from(v1.nameKey))).toBe(true);
    expect(Buffer.from(v2.nameSivKey).equals(Buffer.from(v1.nameSivKey))).toBe(true);
    expect(Buffer.from(v2.auditPseudonymKey).equals(Buffer.from(v1.auditPseudonymKey))).toBe(true);
    expect(Buffer.from(v2.contentKey).equals(Buffer.from(v1.contentKey))).toBe(false);
    expect(Buffer.from(v2.commitment).equals(Buffer.from(v1.commitment))).toBe(false);
    expect(v2.keyVersion).toBe(2);
  });
});

describe('deriveKeyring', () => {
  const lacks = { code: 'KEY_UNAVAILABLE', message: 'A key record lacks a key version it needs.' };

  it('refuses secrets without version 1 (the name root)', () => {
    expect(refusal(() => deriveKeyring(new Map([[2, key()]]), 2, [2]))).toEqual(lacks);
  });

  it('refuses a current version that is not among the content versions', () => {
    expect(
      refusal(() =>
        deriveKeyring(
          new Map([
            [1, key()],
            [2, key()],
          ]),
          2,
          [1],
        ),
      ),
    ).toEqual(lacks);
    expect(refusal(() => deriveKeyring(new Map([[1, key()]]), 3, [1]))).toEqual(lacks);
  });

  it('refuses a content version whose secret is missing', () => {
    expect(
      refusal(() =>
        deriveKeyring(
          new Map([
            [1, key()],
            [3, key()],
          ]),
          3,
          [2, 3],
        ),
      ),
    ).toEqual(lacks);
  });

  it('derives one entry per content version, the current one for new content, all with the root names', () => {
    const root = key();
    const ring = deriveKeyring(
      new Map([
        [1, root],
        [2, key()],
        [3, key()],
      ]),
      3,
      [2, 3],
    );
    expect([...ring.byVersion.keys()]).toEqual([2, 3]);
    expect(ring.current.keyVersion).toBe(3);
    expect(ring.current).toBe(ring.byVersion.get(3));
    const names = deriveUserKeys(root, 1).nameKey;
    for (const keys of ring.byVersion.values()) expect(Buffer.from(keys.nameKey).equals(Buffer.from(names))).toBe(true);
  });
});
