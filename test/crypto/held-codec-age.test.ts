/**
 * A user codec a long command holds (or a host's `vault.files()` handle) uses the key it was made
 * from. The key cache re-reads a record once its entry reaches the cache's age, but only when asked
 * again: a codec held past that age, with no other command for the user on this instance, must not
 * go on sealing and opening under a key an erasure elsewhere destroyed. It refuses like a wiped key
 * (KEY_UNAVAILABLE, try again) once the cache's age and the wipe grace are over, and not before.
 */
import { describe, expect, it } from 'vitest';
import { forgetUser } from '../../src/crypto/operations.js';
import { MemoryStore } from '../../src/store/memory.js';
import { caughtSync, expectCode, newVault } from './helpers.js';

const PATH = '/memories/a.md';
const bytes = (text: string) => new TextEncoder().encode(text);
const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe('a codec held past the key cache age', () => {
  it('refuses to seal or open once the age and the grace are over, while an erasure elsewhere destroyed the key', async () => {
    let t = 1_000_000;
    const now = () => t;
    const store = new MemoryStore();
    const cache = { now, maxAgeMs: 60_000, wipeGraceMs: 5_000 };
    const { provider: holding, keyProvider } = await newVault({ store, cache });
    const { provider: erasing } = await newVault({ store, keyProvider, cache });
    const held = await holding.forUser('alice');
    const sealed = held.seal(PATH, bytes('before'));

    await forgetUser({ store, codecProvider: erasing, userId: 'alice' });
    t += 60_000 + 4_999; // within the age and the grace: a command already running may finish
    expect(text(held.open(PATH, held.seal(PATH, bytes('late'))))).toBe('late');
    t += 1; // past them: the held codec no longer uses the key
    expectCode(
      caughtSync(() => held.seal(PATH, bytes('after'))),
      'KEY_UNAVAILABLE',
    );
    expectCode(
      caughtSync(() => held.open(PATH, sealed)),
      'KEY_UNAVAILABLE',
    );
    expectCode(
      caughtSync(() => held.keyFor(PATH)),
      'KEY_UNAVAILABLE',
    );
    // A new command re-reads the (now missing) record: a fresh key, which cannot open the old content.
    const fresh = await holding.forUser('alice');
    expect(() => fresh.open(PATH, sealed)).toThrow();
    await holding.close();
    await erasing.close();
  });

  it('a codec made from a key loaded just before the age keeps working through the grace', async () => {
    let t = 1_000_000;
    const { provider } = await newVault({ cache: { now: () => t, maxAgeMs: 60_000, wipeGraceMs: 5_000 } });
    await provider.forUser('alice');
    t += 59_999;
    const codec = await provider.forUser('alice'); // the cached entry, one millisecond before its age
    t += 4_000;
    expect(text(codec.open(PATH, codec.seal(PATH, bytes('x'))))).toBe('x');
    await provider.close();
  });
});
