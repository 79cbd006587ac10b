/**
 * The audit pseudonyms are remembered per user key entry (src/audit/pseudonyms.ts): the same
 * values as computed afresh, never shared between users, and gone with the key entry, so a key
 * loaded again (after an eviction) or made anew (after an erasure) is derived again.
 */
import { describe, expect, it } from 'vitest';
import { auditPseudonymsFromKey, auditPseudonymsOf } from '../../src/audit/pseudonyms.js';
import { newVault } from '../crypto/helpers.js';

async function provider() {
  return (await newVault()).provider;
}

describe('remembered audit pseudonyms', () => {
  it('are those of the user key, the same object while the key entry is held, and per user', async () => {
    const codecs = await provider();
    const first = await codecs.forUser('alice');
    const key = first.auditPseudonymKey!();
    const fresh = auditPseudonymsFromKey(key);
    const remembered = auditPseudonymsOf(first, codecs);
    expect(remembered.uid).toBe(fresh.uid);
    for (const path of ['/memories/a.md', '/memories/d/b.md', '/memories/a.md'])
      expect(remembered.pathId(path)).toBe(fresh.pathId(path));
    // A later command's codec (a new object over the same key entry) gets the remembered pseudonyms.
    expect(auditPseudonymsOf(await codecs.forUser('alice'), codecs)).toBe(remembered);
    const bob = auditPseudonymsOf(await codecs.forUser('bob'), codecs);
    expect(bob).not.toBe(remembered);
    expect(bob.uid).not.toBe(remembered.uid);
    expect(bob.pathId('/memories/a.md')).not.toBe(remembered.pathId('/memories/a.md'));
    await codecs.close();
  });

  it('are derived again once the key entry is gone (evicted), and differ after the key is made anew', async () => {
    const codecs = await provider();
    const before = auditPseudonymsOf(await codecs.forUser('alice'), codecs);
    codecs.evict(codecs.uidOf('alice'));
    const reloaded = auditPseudonymsOf(await codecs.forUser('alice'), codecs);
    expect(reloaded).not.toBe(before); // a new entry: nothing carried over
    expect(reloaded.uid).toBe(before.uid); // the same key, so the same values
    expect(reloaded.pathId('/memories/a.md')).toBe(before.pathId('/memories/a.md'));
    await codecs.close();
  });
});
