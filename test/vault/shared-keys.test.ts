/**
 * Shared key state changes are seen by every instance. A key record or deployment
 * record that disappears or changes is an error on every instance (a fresh one at once, a running
 * one after at most the key-cache age), never a silently created new key; a legitimate rewrite
 * (rotation) is not mistaken for a change. On the memory store and on the file store (real files);
 * test/s3/shared-keys.test.ts runs the same against radosgw.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createEncryptedCodecProvider,
  DEPLOYMENT_CHANGED_MESSAGE,
  type EncryptedCodecProvider,
} from '../../src/crypto/codec.js';
import { DEPLOYMENT_RECORD_KEY, userKeyKey } from '../../src/crypto/layout.js';
import { rotateKeys } from '../../src/crypto/operations.js';
import { loadSodium } from '../../src/crypto/sodium.js';
import { KEY_RECORD_MISSING_MESSAGE } from '../../src/crypto/wrapped-secret.js';
import type { KeyProvider } from '../../src/crypto/key-provider.js';
import { FileStore } from '../../src/store/file.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { ObjectStore } from '../../src/store/port.js';
import { caught, expectCode, HookedStore, localProvider } from '../crypto/helpers.js';
import { decode, encode } from '../kit/text.js';

beforeAll(async () => {
  await loadSodium();
});

const MAX_AGE = 60_000;
const PATH = '/memories/a.md';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'memvault-shared-keys-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const stores: Array<[string, () => ObjectStore]> = [
  ['memory store', () => new MemoryStore()],
  ['file store', () => new FileStore(path.join(dir, 'data'))],
];

/** Two instances on one store, with one test clock for their key caches. */
async function twoInstances(store: ObjectStore, keyProvider?: KeyProvider) {
  const clock = { now: 1_000_000 };
  const key = keyProvider ?? (await localProvider());
  const open = () =>
    createEncryptedCodecProvider({
      store,
      keyProvider: key,
      cache: { now: () => clock.now, maxAgeMs: MAX_AGE, wipeGraceMs: 0 },
    });
  return { clock, key, a: await open(), b: await open(), open };
}

async function write(
  store: ObjectStore,
  provider: EncryptedCodecProvider,
  userId: string,
  content: string,
): Promise<void> {
  const codec = await provider.forUser(userId);
  await store.put(codec.keyFor(PATH), codec.seal(PATH, encode(content)));
}

async function read(store: ObjectStore, provider: EncryptedCodecProvider, userId: string): Promise<string> {
  const codec = await provider.forUser(userId);
  return decode(codec.open(PATH, (await store.get(codec.keyFor(PATH)))!.body));
}

describe.each(stores)('on the %s', (_name, makeStore) => {
  it('a deleted key record: a fresh instance refuses at once, a running one after the cache age; no new key is made', async () => {
    const store = makeStore();
    const { clock, a, b, open } = await twoInstances(store);
    await write(store, a, 'alice', 'kept');
    expect(await read(store, b, 'alice')).toBe('kept');
    const recordKey = userKeyKey(a.uidOf('alice'));
    const saved = (await store.get(recordKey))!.body;
    await store.delete(recordKey);

    const fresh = await open();
    const refused = await caught(() => fresh.forUser('alice'));
    expectCode(refused, 'STORE_INCONSISTENT');
    expect(refused.message).toBe(KEY_RECORD_MISSING_MESSAGE);
    expect(refused.message).toContain('restores the key record from a backup');
    // Within the cache age the running instances still hold the key (documented bound) ...
    expect(await read(store, a, 'alice')).toBe('kept');
    clock.now += MAX_AGE;
    // ... and after it, every instance gives the same error.
    for (const instance of [a, b]) expectCode(await caught(() => instance.forUser('alice')), 'STORE_INCONSISTENT');
    expect(await store.head(recordKey)).toBeNull();

    // Restoring the record (from a backup) heals every instance; the old file opens again.
    await store.put(recordKey, saved);
    for (const instance of [a, b, fresh]) expect(await read(store, instance, 'alice')).toBe('kept');
    await store.close();
  });

  it('a brand-new user (nothing stored) still gets a key, exactly one however many instances race', async () => {
    const store = makeStore();
    const { a, b } = await twoInstances(store);
    const codecs = await Promise.all([a.forUser('new'), b.forUser('new'), a.forUser('new'), b.forUser('new')]);
    await store.put(codecs[0]!.keyFor(PATH), codecs[0]!.seal(PATH, encode('first')));
    for (const codec of codecs)
      expect(decode(codec.open(PATH, (await store.get(codec.keyFor(PATH)))!.body))).toBe('first');
    await store.close();
  });

  it('a deleted deployment record: running instances stop after the cache age; a new start refuses', async () => {
    const store = makeStore();
    const { clock, a, b, open } = await twoInstances(store);
    await write(store, a, 'alice', 'kept');
    const saved = (await store.get(DEPLOYMENT_RECORD_KEY))!.body;
    await store.delete(DEPLOYMENT_RECORD_KEY);
    expectCode(await caught(() => open()), 'STORE_INCONSISTENT');
    expect(await read(store, b, 'alice')).toBe('kept');
    clock.now += MAX_AGE;
    for (const instance of [a, b]) {
      const stopped = await caught(() => instance.forUser('alice'));
      expectCode(stopped, 'STORE_INCONSISTENT');
      expect(stopped.message).toBe(DEPLOYMENT_CHANGED_MESSAGE);
      // Every later call checks again (and keeps failing) while the record is gone.
      expectCode(await caught(() => instance.forUser('bob')), 'STORE_INCONSISTENT');
    }
    expect(await store.head(DEPLOYMENT_RECORD_KEY)).toBeNull();
    await store.put(DEPLOYMENT_RECORD_KEY, saved);
    for (const instance of [a, b]) expect(await read(store, instance, 'alice')).toBe('kept');
    await store.close();
  });

  it("a deployment record replaced by another deployment's stops running instances; a rotation does not", async () => {
    const store = makeStore();
    const { clock, key, a, b } = await twoInstances(store);
    await write(store, a, 'alice', 'kept');
    // A rotation re-wraps the same secret: an instance configured as docs/encryption.md says (new
    // key, old key as previous) sees the new ETag, opens the record, finds the same secret, carries on.
    const newKey = await localProvider();
    const both = await createEncryptedCodecProvider({
      store,
      keyProvider: newKey,
      previousKeyProviders: [key],
      cache: { now: () => clock.now, maxAgeMs: MAX_AGE },
    });
    await rotateKeys({ store, from: key, to: newKey });
    clock.now += MAX_AGE;
    expect(await read(store, both, 'alice')).toBe('kept');

    // Another deployment's record (same master key, other secret) put in its place.
    const other = new MemoryStore();
    await createEncryptedCodecProvider({ store: other, keyProvider: newKey });
    await store.put(DEPLOYMENT_RECORD_KEY, (await other.get(DEPLOYMENT_RECORD_KEY))!.body);
    expect(await read(store, both, 'alice')).toBe('kept'); // within the cache age
    clock.now += MAX_AGE;
    expectCode(await caught(() => both.forUser('alice')), 'STORE_INCONSISTENT');
    // Instances on the old key alone cannot even open the replaced record: also stopped.
    for (const instance of [a, b]) expectCode(await caught(() => instance.forUser('alice')), 'STORE_INCONSISTENT');
    await store.close();
  });
});

describe('races around a missing key record', () => {
  it('a first file written by another instance between our read and our listing is not mistaken for a lost record', async () => {
    const store = new HookedStore();
    const key = await localProvider();
    const a = await createEncryptedCodecProvider({ store, keyProvider: key });
    const b = await createEncryptedCodecProvider({ store, keyProvider: key });
    const uid = a.uidOf('racer');
    let raced = false;
    // When A has read "no record" and is about to list, B creates the user and writes a file.
    const list = store.list.bind(store);
    store.list = async (prefix, options) => {
      if (!raced && prefix === `u/${uid}/`) {
        raced = true;
        await write(store, b, 'racer', 'from b');
      }
      return list(prefix, options);
    };
    const codec = await a.forUser('racer');
    expect(raced).toBe(true);
    expect(decode(codec.open(PATH, (await store.get(codec.keyFor(PATH)))!.body))).toBe('from b');
  });
});
