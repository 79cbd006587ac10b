/**
 * An erasure evicts the user's cached key before it deletes the key record, and again after: a load
 * that starts between the two (the same instance, another command) reads the record while it still
 * exists, and must not leave the erased key cached for the commands after the erasure.
 */
import { describe, expect, it } from 'vitest';
import { userKeyKey } from '../../src/crypto/layout.js';
import { forgetUser } from '../../src/crypto/operations.js';
import type { ObjectInfo } from '../../src/store/port.js';
import { StoreWrapper } from '../kit/stores.js';
import { newVault } from './helpers.js';

class HeadHook extends StoreWrapper {
  onHead: ((key: string) => Promise<void>) | undefined;
  override async head(key: string): Promise<ObjectInfo | null> {
    const hook = this.onHead;
    if (hook) {
      this.onHead = undefined;
      await hook(key);
    }
    return this.inner.head(key);
  }
}

describe('an erasure and a key load that starts while it runs', () => {
  it('no command after forgetUser opens what the erased key sealed', async () => {
    const view = new HeadHook();
    const { provider: codecs } = await newVault({ store: view, cache: { wipeGraceMs: 0 } });
    const before = await codecs.forUser('alice');
    const sealed = before.seal('/memories/a.md', new TextEncoder().encode('secret'));
    const keyKey = userKeyKey(codecs.uidOf('alice'));

    // While forget runs its first HEAD (after its evict, before its delete), a request arrives.
    view.onHead = async (key) => {
      if (key === keyKey) await codecs.forUser('alice');
    };
    const r = await forgetUser({ store: view, codecProvider: codecs, userId: 'alice' });
    expect(r.keyDeleted).toBe(true);
    expect(await view.inner.head(keyKey)).toBeNull();

    const after = await codecs.forUser('alice');
    // The erased key must be gone: this must not open.
    expect(() => after.open('/memories/a.md', sealed)).toThrow();
    await codecs.close();
  });
});
