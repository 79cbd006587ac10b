/**
 * A re-key's drop of the older versions racing an erasure: the key state mark the drop wrote after
 * the erasure listed the user's objects is taken away when it finds the record gone, so nothing of
 * the user is left and the user id can start afresh.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createEncryptedCodecProvider } from '../../src/crypto/codec.js';
import { userPrefix } from '../../src/crypto/layout.js';
import { forgetUid } from '../../src/crypto/operations.js';
import { rekeyUid } from '../../src/crypto/rekey.js';
import { loadSodium } from '../../src/crypto/sodium.js';
import { MemoryStore } from '../../src/store/memory.js';
import { listAll } from '../../src/store/port.js';
import { Clock } from './rekey-scenarios.js';
import { HookedStore, localProvider } from './helpers.js';

beforeAll(async () => {
  await loadSodium();
});

describe('a re-key drop racing forget', () => {
  it('leaves nothing of the user behind, and the user id can start afresh', async () => {
    const clock = new Clock();
    const inner = new MemoryStore(clock.date);
    const store = new HookedStore(inner);
    const local = await localProvider();
    const codecs = await createEncryptedCodecProvider({ store: inner, keyProvider: local, cache: { now: clock.now } });
    const uid = codecs.uidOf('alice');
    await codecs.forUser('alice');
    const rekey = { store, primary: local, providers: [local], settleMs: 1_000, now: clock.now, wait: false, uid };
    expect((await rekeyUid(rekey)).keyVersion).toBe(2);
    clock.t += 2_000;

    // The drop: just before its mark goes out, the user is forgotten.
    store.beforePut = async (key) => {
      if (key.startsWith(`${userPrefix(uid)}a/`) && store.beforePut) {
        store.beforePut = undefined;
        await forgetUid({ store: inner, uid });
      }
    };
    await rekeyUid(rekey).catch(() => undefined); // NOT_FOUND once it sees the record gone

    const left: string[] = [];
    for await (const o of listAll(inner, userPrefix(uid))) left.push(o.key);
    const fresh = await createEncryptedCodecProvider({ store: inner, keyProvider: local, cache: { now: clock.now } });
    let error: unknown;
    await fresh.forUser('alice').catch((e: unknown) => (error = e));
    expect({ left, error }).toEqual({ left: [], error: undefined });
  });
});
