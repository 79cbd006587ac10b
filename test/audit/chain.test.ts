import { describe, expect, it } from 'vitest';
import { canonicalJson, GENESIS_HASH, recordHash } from '../../src/audit/chain.js';

describe('canonical JSON and record hashes', () => {
  it('sorts keys recursively and omits undefined, so key order on disk does not matter', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, 'x'], c: true }, u: undefined })).toBe(
      '{"a":{"c":true,"d":[1,"x"]},"b":1}',
    );
    expect(recordHash({ seq: 1, type: 'start', prevHash: GENESIS_HASH })).toBe(
      recordHash({ prevHash: GENESIS_HASH, type: 'start', seq: 1 }),
    );
  });

  it('covers every field except the hash itself', () => {
    const base = { seq: 2, time: '2026-01-01T00:00:00.000Z', path: '/memories/a' };
    expect(recordHash({ ...base, hash: 'anything' })).toBe(recordHash(base));
    expect(recordHash({ ...base, path: '/memories/b' })).not.toBe(recordHash(base));
    expect(recordHash(base)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses values that cannot round-trip through a JSON line', () => {
    expect(() => canonicalJson({ n: Number.NaN })).toThrow(TypeError);
    expect(() => canonicalJson({ f: () => 1 })).toThrow(TypeError);
  });
});
