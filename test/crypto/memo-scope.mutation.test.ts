/**
 * UserCodec.memoScope (src/crypto/codec.ts): one object per key entry, the same for every codec of
 * that entry, a new one once the entry is gone, and never shared between users. The audit
 * pseudonyms hang off it (test/audit/pseudonym-memo.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { auditPseudonymsOf } from '../../src/audit/pseudonyms.js';
import { newVault } from './helpers.js';

describe('memoScope', () => {
  it('is one object per user key entry: kept across commands, new after an eviction, per user', async () => {
    const { provider: codecs } = await newVault();
    const first = await codecs.forUser('alice');
    const scope = first.memoScope;
    expect(scope).toBeTypeOf('object');
    expect(scope).not.toBeNull();
    const again = await codecs.forUser('alice');
    expect(again).not.toBe(first);
    expect(again.memoScope).toBe(scope);
    expect((await codecs.forUser('bob')).memoScope).not.toBe(scope);
    codecs.evict(codecs.uidOf('alice'));
    expect((await codecs.forUser('alice')).memoScope).not.toBe(scope);
    await codecs.close();
  });

  it("is refused, like the key, once the key is wiped: nothing hung off it is served past the key's life", async () => {
    const { provider: codecs } = await newVault({ cache: { wipeGraceMs: 0 } });
    const codec = await codecs.forUser('alice');
    const remembered = auditPseudonymsOf(codec, codecs);
    expect(auditPseudonymsOf(codec, codecs)).toBe(remembered);
    codecs.evict(codecs.uidOf('alice')); // no grace: wiped at once
    expect(() => codec.memoScope).toThrow(/released/);
    expect(() => auditPseudonymsOf(codec, codecs)).toThrow(/released/);
    await codecs.close();
  });
});
