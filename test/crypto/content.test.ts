import { beforeAll, describe, expect, it } from 'vitest';
import { createEncryptedCodecProvider } from '../../src/crypto/codec.js';
import {
  CONTENT_OVERHEAD,
  deriveUserKeys,
  INTEGRITY_MESSAGE,
  openContent,
  sealContentWithNonce,
} from '../../src/crypto/format.js';
import { loadSodium } from '../../src/crypto/sodium.js';
import { MemoryStore } from '../../src/store/memory.js';
import { caught, caughtSync, expectCode, newMasterKey, newVault } from './helpers.js';
import { decode, encode } from '../kit/text.js';

beforeAll(async () => {
  await loadSodium();
});

const PATH = '/memories/notes/secret.md';
const PLAINTEXT = 'meet at 7';

describe('content sealing', () => {
  it('round-trips and reports the plaintext size', async () => {
    const { provider } = await newVault();
    const codec = await provider.forUser('alice');
    const sealed = codec.seal(PATH, encode(PLAINTEXT));
    expect(sealed.byteLength).toBe(PLAINTEXT.length + CONTENT_OVERHEAD);
    expect(codec.plaintextSize(sealed.byteLength)).toBe(PLAINTEXT.length);
    expect(decode(codec.open(PATH, sealed))).toBe(PLAINTEXT);
    // Random nonces: sealing twice never gives the same bytes.
    expect(Buffer.from(codec.seal(PATH, encode(PLAINTEXT))).equals(Buffer.from(sealed))).toBe(false);
  });

  it('rejects every single-byte change of a small object, at every position, with INTEGRITY and no text', async () => {
    const { provider } = await newVault();
    const codec = await provider.forUser('alice');
    const sealed = codec.seal(PATH, encode(PLAINTEXT));
    let checked = 0;
    for (let position = 0; position < sealed.byteLength; position++) {
      for (const mask of [0x01, 0x80, 0xff]) {
        const tampered = sealed.slice();
        tampered[position] = tampered[position]! ^ mask;
        const error = caughtSync(() => codec.open(PATH, tampered));
        expectCode(error, 'INTEGRITY');
        expect(error.message).toBe(INTEGRITY_MESSAGE);
        expect(error.message).not.toContain(PLAINTEXT);
        expect(error.message).not.toContain('secret.md');
        checked++;
      }
    }
    expect(checked).toBe(sealed.byteLength * 3);
    // Truncation and extension too.
    for (let length = 0; length < sealed.byteLength; length++)
      expectCode(
        caughtSync(() => codec.open(PATH, sealed.subarray(0, length))),
        'INTEGRITY',
      );
    const extended = new Uint8Array(sealed.byteLength + 1);
    extended.set(sealed);
    expectCode(
      caughtSync(() => codec.open(PATH, extended)),
      'INTEGRITY',
    );
  });

  it('fails when an object is moved to another path of the same user', async () => {
    const { provider } = await newVault();
    const codec = await provider.forUser('alice');
    const sealed = codec.seal(PATH, encode(PLAINTEXT));
    for (const other of ['/memories/notes/other.md', '/memories/secret.md', '/memories/notes/secret.md/x']) {
      expectCode(
        caughtSync(() => codec.open(other, sealed)),
        'INTEGRITY',
      );
    }
  });

  it('fails when an object is moved to another user, at the same path', async () => {
    const { provider } = await newVault();
    const alice = await provider.forUser('alice');
    const bob = await provider.forUser('bob');
    expect(alice.uid).not.toBe(bob.uid);
    const sealed = alice.seal(PATH, encode(PLAINTEXT));
    expectCode(
      caughtSync(() => bob.open(PATH, sealed)),
      'INTEGRITY',
    );
  });

  it("fails when a user key record is swapped with another user's (the wrap binds the uid)", async () => {
    const { provider, store, keyProvider } = await newVault();
    const alice = await provider.forUser('alice');
    const bob = await provider.forUser('bob');
    const aliceRecord = await store.get(`k/${alice.uid}`);
    await store.put(`k/${bob.uid}`, aliceRecord!.body);
    // A fresh process (empty cache) opening bob's key.
    const fresh = await createEncryptedCodecProvider({ store, keyProvider });
    expectCode(await caught(() => fresh.forUser('bob')), 'INTEGRITY');
  });

  it('fails under a different data key, checked by the key commitment before decryption', () => {
    const uid = 'A'.repeat(32);
    const right = deriveUserKeys(newMasterKey(), 1);
    const wrong = deriveUserKeys(newMasterKey(), 1);
    const sealed = sealContentWithNonce(right, 'D'.repeat(22), uid, PATH, encode(PLAINTEXT), new Uint8Array(24));
    expectCode(
      caughtSync(() => openContent(wrong, 'D'.repeat(22), uid, PATH, sealed)),
      'INTEGRITY',
    );
    // Even with the header's commitment rewritten to the wrong key's, the AEAD still refuses.
    const forged = sealed.slice();
    forged.set(wrong.commitment, 5);
    expectCode(
      caughtSync(() => openContent(wrong, 'D'.repeat(22), uid, PATH, forged)),
      'INTEGRITY',
    );
    // A key version the reader does not hold is refused too.
    expectCode(
      caughtSync(() => openContent({ ...right, keyVersion: 2 }, 'D'.repeat(22), uid, PATH, sealed)),
      'INTEGRITY',
    );
  });

  it('fails for another deployment (other deployment secret and keys) at the same user id and path', async () => {
    const one = await newVault();
    const two = await newVault({ store: new MemoryStore() });
    const sealed = (await one.provider.forUser('alice')).seal(PATH, encode(PLAINTEXT));
    const other = await two.provider.forUser('alice');
    expectCode(
      caughtSync(() => other.open(PATH, sealed)),
      'INTEGRITY',
    );
  });
});
