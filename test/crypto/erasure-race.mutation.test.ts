/**
 * A key load that an erasure overtakes (src/crypto/codec.ts, loadKeys): the load read the key record
 * before `forgetUser` deleted it, and ends after. Its keys go to the command that waited for them,
 * but are never cached, and no later call joins that load: every command after the erasure gets a
 * new key (a new user), never the erased one. (A re-key's eviction meets the same rule; its own
 * tests are test/crypto/rekey*.)
 */
import { describe, expect, it } from 'vitest';
import { auditPseudonymsOf } from '../../src/audit/pseudonyms.js';
import { userKeyKey } from '../../src/crypto/layout.js';
import { forgetUser } from '../../src/crypto/operations.js';
import type { StoredObject } from '../../src/store/port.js';
import { StoreWrapper } from '../kit/stores.js';
import { newVault } from './helpers.js';

/** A store whose next GET of a chosen key reads at once but answers only when released. */
class HeldStore extends StoreWrapper {
  private hold: { key: string; read: () => void; release: Promise<void> } | undefined;

  holdNext(key: string): { read: Promise<void>; release: () => void } {
    let release!: () => void;
    let read!: () => void;
    const readPromise = new Promise<void>((r) => (read = r));
    this.hold = { key, read, release: new Promise<void>((r) => (release = r)) };
    return { read: readPromise, release };
  }

  override async get(key: string): Promise<StoredObject | null> {
    const found = await this.inner.get(key);
    const held = this.hold;
    if (held?.key === key) {
      this.hold = undefined;
      held.read();
      await held.release;
    }
    return found;
  }
}

describe('a key load overtaken by an erasure', () => {
  it('is not cached: a command after forgetUser gets a new key, not the erased one', async () => {
    const view = new HeldStore();
    const store = view.inner;
    const { provider: codecs } = await newVault({ store: view });
    const first = await codecs.forUser('alice');
    const erasedUid = auditPseudonymsOf(first, codecs).uid;
    const sealed = first.seal('/memories/a.md', new TextEncoder().encode('before the erasure'));
    codecs.evict(codecs.uidOf('alice'));

    // A command loads the key: its GET has read the record, and its answer is held back.
    const held = view.holdNext(userKeyKey(codecs.uidOf('alice')));
    const inFlight = codecs.forUser('alice');
    await held.read;
    const erased = await forgetUser({ store: view, codecProvider: codecs, userId: 'alice' });
    expect(erased.keyDeleted).toBe(true);
    expect(await store.head(userKeyKey(codecs.uidOf('alice')))).toBeNull();
    // A command that starts now does not join the stale load (it would wait for it): it finds no
    // key and makes a new one, which is cached.
    const during = await codecs.forUser('alice');
    expect(auditPseudonymsOf(during, codecs).uid).not.toBe(erasedUid);
    // Only then does the stale load end: the command that was running when the erasure came gets
    // the old key, and the cache keeps the new one.
    held.release();
    const late = await inFlight;
    expect(new TextDecoder().decode(late.open('/memories/a.md', sealed))).toBe('before the erasure');
    for (const after of [during, await codecs.forUser('alice')]) {
      expect(auditPseudonymsOf(after, codecs).uid).not.toBe(erasedUid);
      expect(() => after.open('/memories/a.md', sealed)).toThrow();
    }
    expect(auditPseudonymsOf(await codecs.forUser('alice'), codecs).uid).toBe(auditPseudonymsOf(during, codecs).uid);
    await codecs.close();
  });
});
