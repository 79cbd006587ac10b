/**
 * A key load that read the user's record just before a re-key wrote its new version, and took long
 * to unwrap (a slow KMS): the cache dates it from the read, so it is gone before the re-key's wait
 * ends and drops the old version; nothing is sealed afterwards under a dropped version.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createEncryptedCodecProvider } from '../../src/crypto/codec.js';
import type { KeyProvider, WrapContext } from '../../src/crypto/key-provider.js';
import { rekeyUid } from '../../src/crypto/rekey.js';
import { loadSodium } from '../../src/crypto/sodium.js';
import { MemoryStore } from '../../src/store/memory.js';
import { Clock } from './rekey-scenarios.js';
import { localProvider } from './helpers.js';

beforeAll(async () => {
  await loadSodium();
});

describe('a slow key load racing a re-key', () => {
  it('never leaves an object sealed under a dropped key version', async () => {
    const clock = new Clock();
    const store = new MemoryStore(clock.date);
    const local = await localProvider();
    let onUnwrap: (() => Promise<void>) | undefined;
    const slow: KeyProvider = {
      kind: local.kind,
      keyId: local.keyId,
      wrap: (k, c) => local.wrap(k, c),
      unwrap: async (w: Uint8Array, c: WrapContext) => {
        const out = await local.unwrap(w, c);
        const hook = onUnwrap;
        if (hook && c.uid !== '_deployment') {
          onUnwrap = undefined;
          await hook();
        }
        return out;
      },
    };
    const maxAgeMs = 10 * 60_000;
    const settleMs = maxAgeMs + 60_000; // what src/lifecycle/rekey.ts derives from the cache age
    const a = await createEncryptedCodecProvider({
      store,
      keyProvider: slow,
      cache: { maxAgeMs, wipeGraceMs: 0, now: clock.now },
    });
    const uid = a.uidOf('alice');
    await a.forUser('alice'); // creates the key (version 1)
    a.evict(uid);

    const rekey = { store, primary: local, providers: [local], settleMs, now: clock.now, wait: false };
    // Instance A loads alice's key: it has read the v1 record when the re-key writes v2, and its
    // unwrap then takes two minutes.
    onUnwrap = async () => {
      const started = await rekeyUid({ ...rekey, uid });
      expect(started.keyVersion).toBe(2);
      clock.t += 2 * 60_000;
    };
    await a.forUser('alice');

    // The settle time has passed: the re-key drops version 1.
    clock.t += settleMs - 2 * 60_000 + 1_000;
    const done = await rekeyUid({ ...rekey, uid });
    expect(done.oldVersionsDropped).toBe(true);

    // Instance A still serves alice from its cache (not yet maxAgeMs old) and writes a file.
    const codec = await a.forUser('alice');
    const path = '/memories/late.md';
    await store.put(codec.keyFor(path), codec.seal(path, new TextEncoder().encode('written after the drop')));

    // Any instance that reads the record now must be able to open it.
    const b = await createEncryptedCodecProvider({ store, keyProvider: local, cache: { now: clock.now } });
    const fresh = await b.forUser('alice');
    const stored = (await store.get(fresh.keyFor(path)))!;
    await fresh.ensureKeyFor?.(stored.body);
    expect(new TextDecoder().decode(fresh.open(path, stored.body))).toBe('written after the drop');
  });
});
