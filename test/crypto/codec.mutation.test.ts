/**
 * The encrypted codec at its edges: every refusal of a user id with its message, the
 * key-length limit at its exact byte, canonical-path checks, keys that are not the user's, sizes,
 * copies of key material, and the provider's life cycle (closed, released keys, one load per user).
 */
import { describe, expect, it } from 'vitest';
import { createEncryptedCodecProvider, MAX_USER_ID_LENGTH, validateUserId } from '../../src/crypto/codec.js';
import { CONTENT_OVERHEAD } from '../../src/crypto/format.js';
import { MemoryStore } from '../../src/store/memory.js';
import { caught, caughtSync, HookedStore, localProvider, newMasterKey, newVault } from './helpers.js';
import { encode } from '../kit/text.js';

describe('validateUserId: each refusal in its own words', () => {
  const refusal = (id: unknown) => {
    const e = caughtSync(() => validateUserId(id));
    expect(e.code).toBe('INVALID_USER');
    return e.message;
  };

  it('not a string, empty, or only white space', () => {
    for (const id of [undefined, null, 7, {}, '', ' ', '\t \u00a0'])
      expect(refusal(id)).toBe('memvault: the user id must be a non-empty string');
    expect(validateUserId(' a ')).toBe(' a ');
  });

  it('at most 256 UTF-16 units', () => {
    expect(MAX_USER_ID_LENGTH).toBe(256);
    expect(validateUserId('x'.repeat(256))).toBe('x'.repeat(256));
    expect(refusal('x'.repeat(257))).toBe('memvault: the user id is longer than 256 characters');
  });

  it('C0, DEL and C1 controls are refused; the characters either side of those ranges are not', () => {
    for (const c of ['\u0000', '\u001f', '\u007f', '\u0085', '\u009f'])
      expect(refusal(`a${c}b`)).toBe('memvault: the user id contains control characters');
    for (const c of ['\u0020', '\u007e', '\u00a0', '\u00ff']) expect(validateUserId(`a${c}b`)).toBe(`a${c}b`);
  });

  it('lone surrogates and U+FFFD, each with its reason', () => {
    expect(refusal('a\ud800')).toBe(
      'memvault: the user id is not well-formed Unicode (it has an unpaired surrogate), so it cannot be told apart from other ids',
    );
    expect(refusal('a\ufffd')).toBe(
      'memvault: the user id contains U+FFFD, the replacement character of a lossy decoding, so it cannot be told apart from other ids; pass the id as it was before decoding',
    );
    expect(validateUserId('a\ud83d\ude00')).toBe('a\ud83d\ude00');
  });
});

describe('a user codec', () => {
  it('keys: below the user prefix, one encrypted name per segment, different under different parents', async () => {
    const { provider } = await newVault();
    const codec = await provider.forUser('alice');
    expect(codec.filesPrefix).toBe(`u/${codec.uid}/f/`);
    const key = codec.keyFor('/memories/x/note');
    expect(key.startsWith(codec.filesPrefix)).toBe(true);
    const parts = key.slice(codec.filesPrefix.length).split('/');
    expect(parts).toHaveLength(2);
    const other = codec.keyFor('/memories/y/note').slice(codec.filesPrefix.length).split('/');
    expect(other[1]).not.toBe(parts[1]);
    // The same name at the root is yet another encryption ("/memories" + "x/note" is not "/memories/x" + "note").
    expect(codec.keyFor('/memories/note')).not.toBe(`${codec.filesPrefix}${parts[1]}`);
    // Deterministic: the same path gives the same key, and the key gives the path back.
    expect(codec.keyFor('/memories/x/note')).toBe(key);
    expect(codec.pathFor(key)).toBe('/memories/x/note');
    expect(codec.prefixFor('/memories')).toBe(codec.filesPrefix);
    expect(codec.prefixFor('/memories/x')).toBe(`${codec.filesPrefix}${parts[0]}/`);
  });

  it('names stay right past the memo limit (4,096 names): cleared, not confused', async () => {
    const { provider } = await newVault();
    const codec = await provider.forUser('alice');
    const first = codec.keyFor('/memories/n0');
    for (let i = 1; i <= 4100; i++) expect(codec.pathFor(codec.keyFor(`/memories/n${i}`))).toBe(`/memories/n${i}`);
    expect(codec.keyFor('/memories/n0')).toBe(first);
    expect(codec.pathFor(first)).toBe('/memories/n0');
  });

  it('refuses paths that are not canonical, the root as a file, and keys of other users', async () => {
    const { provider } = await newVault();
    const codec = await provider.forUser('alice');
    const bob = await provider.forUser('bob');
    for (const path of [
      '/memories',
      'memories/x',
      '/memoriesx',
      '/memories/',
      '/memories//x',
      '/memories/./x',
      '/memories/../x',
      '/memories/x/',
    ]) {
      const e = caughtSync(() => codec.keyFor(path));
      expect(e.code, path).toBe('INVALID_PATH');
      expect(e.message, path).toBe('Error: The path is not a canonical path below /memories.');
    }
    expect(caughtSync(() => codec.seal('/memories/../x', encode('x'))).code).toBe('INVALID_PATH');
    const foreign = caughtSync(() => codec.pathFor(bob.keyFor('/memories/a')));
    expect([foreign.code, foreign.message]).toEqual([
      'INTEGRITY',
      'Error: A stored object does not belong to this user.',
    ]);
    expect(caughtSync(() => codec.pathFor(codec.filesPrefix)).code).toBe('INTEGRITY');
  });

  it('the store key limit holds at its exact byte, with the message that says why', async () => {
    const { provider } = await newVault({ maxKeyBytes: 200 });
    const codec = await provider.forUser('alice');
    // Find the longest name that fits: its key is at most 200 bytes, one more character is over.
    const fitsAt = (length: number) => {
      try {
        codec.keyFor(`/memories/${'a'.repeat(length)}`);
        return true;
      } catch {
        return false;
      }
    };
    let n = 1;
    while (fitsAt(n + 1)) n += 1;
    const fits = codec.keyFor(`/memories/${'a'.repeat(n)}`);
    expect(Buffer.byteLength(fits)).toBeLessThanOrEqual(200);
    const over = `/memories/${'a'.repeat(n + 1)}`;
    const e = caughtSync(() => codec.keyFor(over));
    expect(e.code).toBe('INVALID_PATH');
    expect(e.message).toBe(
      `Error: The path ${over} is too long to store. Encrypted names are about a third longer than the names themselves, and the store limits a key to 200 bytes; use shorter names or fewer directory levels.`,
    );
    // Exactly at the limit passes: a provider whose limit is that key's length accepts it, one byte less refuses it.
    const store = new MemoryStore();
    const keyProvider = await localProvider();
    const length = Buffer.byteLength(
      (await (await createEncryptedCodecProvider({ store, keyProvider })).forUser('alice')).keyFor('/memories/abc'),
    );
    const exact = await (
      await createEncryptedCodecProvider({ store, keyProvider, maxKeyBytes: length })
    ).forUser('alice');
    expect(Buffer.byteLength(exact.keyFor('/memories/abc'))).toBe(length);
    const short = await (
      await createEncryptedCodecProvider({ store, keyProvider, maxKeyBytes: length - 1 })
    ).forUser('alice');
    expect(caughtSync(() => short.keyFor('/memories/abc')).code).toBe('INVALID_PATH');
    // The default is S3's 1,024 bytes.
    const defaults = await (await newVault()).provider.forUser('alice');
    expect(() => defaults.keyFor(`/memories/${'a'.repeat(n + 1)}`)).not.toThrow();
  });

  it('sizes: the stored overhead is subtracted, never below zero', async () => {
    const { provider } = await newVault();
    const codec = await provider.forUser('alice');
    expect(codec.seal('/memories/a', encode('hello')).byteLength).toBe(5 + CONTENT_OVERHEAD);
    expect(codec.plaintextSize(5 + CONTENT_OVERHEAD)).toBe(5);
    expect(codec.plaintextSize(CONTENT_OVERHEAD)).toBe(0);
    expect(codec.plaintextSize(3)).toBe(0);
    expect(codec.plaintextSize(0)).toBe(0);
    expect(new TextDecoder().decode(codec.open('/memories/a', codec.seal('/memories/a', encode('hello'))))).toBe(
      'hello',
    );
  });

  it('the audit pseudonym key is a copy: wiping it changes nothing for the next caller', async () => {
    const { provider } = await newVault();
    const codec = await provider.forUser('alice');
    const key = codec.auditPseudonymKey!();
    const copy = Uint8Array.from(key);
    key.fill(0);
    expect(codec.auditPseudonymKey!()).toEqual(copy);
    expect(copy.some((b) => b !== 0)).toBe(true);
    const mac = provider.auditMacKey();
    const macCopy = Uint8Array.from(mac);
    mac.fill(0);
    expect(provider.auditMacKey()).toEqual(macCopy);
  });

  it('a codec whose key was evicted says so and does nothing', async () => {
    const { provider } = await newVault({ cache: { wipeGraceMs: 0 } });
    const codec = await provider.forUser('alice');
    expect(provider.cachedUsers).toBe(1);
    provider.evict(codec.uid);
    expect(provider.cachedUsers).toBe(0);
    const e = caughtSync(() => codec.keyFor('/memories/a'));
    expect([e.code, e.message]).toEqual([
      'KEY_UNAVAILABLE',
      'Error: The memory key was released while this command ran; please try again.',
    ]);
    // The next command loads the key again, the same key.
    const again = await provider.forUser('alice');
    expect(again.uid).toBe(codec.uid);
  });
});

describe('the provider', () => {
  it('forUid: not a uid, no key, and an existing user', async () => {
    const { provider } = await newVault();
    for (const uid of ['x', `${'a'.repeat(32)}/`, 'a'.repeat(31), 'a'.repeat(33)]) {
      const e = await caught(() => provider.forUid(uid));
      expect([e.code, e.message], uid).toEqual(['INVALID_USER', 'Error: Not a memvault uid.']);
    }
    const unknown = await caught(() => provider.forUid(provider.uidOf('nobody')));
    expect([unknown.code, unknown.message]).toEqual(['NOT_FOUND', 'Error: No memory key exists for this user.']);
    const alice = await provider.forUser('alice');
    const sealed = alice.seal('/memories/a', encode('x'));
    provider.evict(alice.uid);
    const byUid = await provider.forUid(alice.uid);
    expect(byUid.filesPrefix).toBe(alice.filesPrefix);
    expect(new TextDecoder().decode(byUid.open('/memories/a', sealed))).toBe('x');
  });

  it('one key load per user however many commands ask at once', async () => {
    const store = new HookedStore();
    const { provider } = await newVault({ store });
    let gets = 0;
    store.beforeGet = () => void (gets += 1);
    const codecs = await Promise.all(Array.from({ length: 5 }, () => provider.forUser('carol')));
    expect(new Set(codecs.map((c) => c.uid)).size).toBe(1);
    expect(gets).toBeLessThanOrEqual(1);
    const before = gets;
    await provider.forUser('carol');
    expect(gets).toBe(before);
  });

  it('after close every call says the store is closed; close twice is fine', async () => {
    const { provider } = await newVault();
    const uid = provider.uidOf('alice');
    await provider.close();
    await provider.close();
    for (const call of [
      () => provider.uidOf('alice'),
      () => provider.auditMacKey(),
      () => provider.pathId!(uid, '/memories/a'),
    ]) {
      const e = caughtSync(call);
      expect([e.code, e.message]).toEqual(['KEY_UNAVAILABLE', 'Error: The memory store is closed.']);
    }
    expect((await caught(() => provider.forUser('alice'))).message).toBe('Error: The memory store is closed.');
  });

  it('mode, key id and whether this start created the deployment', async () => {
    const store = new MemoryStore();
    const keyProvider = await localProvider(newMasterKey());
    const first = await createEncryptedCodecProvider({ store, keyProvider });
    expect(first.mode).toBe('local-master-key');
    expect(first.keyId).toBe(keyProvider.keyId);
    expect(first.createdDeployment).toBe(true);
    const second = await createEncryptedCodecProvider({ store, keyProvider });
    expect(second.createdDeployment).toBe(false);
    expect(second.deploymentId).toBe(first.deploymentId);
    expect(second.deploymentFingerprint).toBe(first.deploymentFingerprint);
    // A pinned fingerprint with white space around it is the same pin.
    const pinned = await createEncryptedCodecProvider({
      store,
      keyProvider,
      deploymentFingerprint: ` ${first.deploymentFingerprint}\n`,
    });
    expect(pinned.deploymentId).toBe(first.deploymentId);
  });
});
