/**
 * Key records and the deployment record hold against someone who can write the
 * bucket and call kms:Encrypt (not Decrypt), relabelled records are never counted as rotated, and
 * two deployments sharing a master key refuse each other's objects.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createEncryptedCodecProvider } from '../../src/crypto/codec.js';
import {
  computeRecordMac,
  deriveRecordMacKey,
  deriveUserKeys,
  localUnwrap,
  localWrapWithNonce,
  openContent,
  sealContentWithNonce,
} from '../../src/crypto/format.js';
import { decodeKeyRecord, encodeKeyRecord, recordMacFields, type KeyRecord } from '../../src/crypto/key-provider.js';
import { createKmsKeyProvider } from '../../src/crypto/kms-key.js';
import { DEPLOYMENT_CONTEXT_UID, DEPLOYMENT_RECORD_KEY, userKeyKey } from '../../src/crypto/layout.js';
import { rotateKeys, verifyKeys } from '../../src/crypto/operations.js';
import { loadSodium } from '../../src/crypto/sodium.js';
import { KEY_RECORD_INTEGRITY_MESSAGE } from '../../src/crypto/wrapped-secret.js';
import { createVault } from '../../src/memvault.js';
import { MemoryStore } from '../../src/store/memory.js';
import { runCli } from '../cli/helpers.js';
import { caught, caughtSync, expectCode, HookedStore, localProvider, newMasterKey } from './helpers.js';
import { decode, encode } from '../kit/text.js';
import { KmsStandIn, STAND_IN_KEY_ID } from './kms-stand-in.js';

beforeAll(async () => {
  await loadSodium();
});

const PATH = '/memories/notes.md';

async function kmsDeployment() {
  const kms = new KmsStandIn();
  const store = new MemoryStore();
  const host = () => createKmsKeyProvider({ keyId: STAND_IN_KEY_ID, client: kms.host() });
  const provider = await createEncryptedCodecProvider({ store, keyProvider: host() });
  return { kms, store, host, provider };
}

const readRecord = async (store: MemoryStore | HookedStore, key: string): Promise<KeyRecord> =>
  decodeKeyRecord((await store.get(key))!.body);

/**
 * What the Encrypt-only attacker writes: their own 32-byte key, wrapped by real kms:Encrypt with
 * exactly the context memvault would use, in a record that is right in every field it can know.
 * The MAC it cannot compute: it keeps the old one (or makes one up).
 */
async function substitute(
  store: MemoryStore,
  kms: KmsStandIn,
  key: string,
  uid: string,
  mac: 'keep' | 'random',
): Promise<Uint8Array> {
  const attacker = createKmsKeyProvider({ keyId: STAND_IN_KEY_ID, client: kms.encryptOnly() });
  const original = await readRecord(store, key);
  const ownKey = new Uint8Array(randomBytes(32));
  const wrapped = await attacker.wrap(ownKey, { deploymentId: original.deployment, uid, keyVersion: 1 });
  const forged: KeyRecord = {
    ...original,
    wrapped,
    mac: mac === 'keep' ? original.mac : new Uint8Array(randomBytes(32)),
  };
  await store.put(key, encodeKeyRecord(forged));
  return ownKey;
}

describe('a bucket writer with kms:Encrypt only', () => {
  it('cannot substitute a user key record: a fresh instance refuses it with the integrity error, before any Decrypt', async () => {
    const { kms, store, host, provider } = await kmsDeployment();
    const alice = await provider.forUser('alice');
    await store.put(alice.keyFor(PATH), alice.seal(PATH, encode('old memory')));
    for (const mac of ['keep', 'random'] as const) {
      const ownKey = await substitute(store, kms, userKeyKey(alice.uid), alice.uid, mac);
      // The forged record is well formed and its wrap opens under KMS with the right context:
      expect(
        await host().unwrap((await readRecord(store, userKeyKey(alice.uid))).wrapped, {
          deploymentId: provider.deploymentId,
          uid: alice.uid,
          keyVersion: 1,
        }),
      ).toEqual(ownKey);
      const decryptsBefore = kms.decryptsFor(alice.uid);
      const restarted = await createEncryptedCodecProvider({ store, keyProvider: host() });
      const refused = await caught(() => restarted.forUser('alice'));
      expectCode(refused, 'INTEGRITY');
      expect(refused.message).toBe(KEY_RECORD_INTEGRITY_MESSAGE);
      // Authenticated before it is unwrapped: the forged blob never reached Decrypt.
      expect(kms.decryptsFor(alice.uid)).toBe(decryptsBefore);
      // Through the vault, the model sees the integrity error, and nothing is written under the attacker's key.
      const vault = await createVault({ store, encryption: { kms: { keyId: STAND_IN_KEY_ID, client: kms.host() } } });
      const result = await vault.run('alice', { command: 'create', path: '/memories/new.md', file_text: 'secret' });
      expect(result.isError).toBe(true);
      expect(String(result.content)).toContain('integrity check');
      expect(store.keys().filter((k) => k.startsWith(alice.filesPrefix))).toHaveLength(1);
      await vault.close();
    }
  });

  it('cannot substitute the deployment record of a pinned host, and a running instance stops on it within the cache age', async () => {
    const kms = new KmsStandIn();
    const store = new MemoryStore();
    let now = 1_000_000;
    const host = () => createKmsKeyProvider({ keyId: STAND_IN_KEY_ID, client: kms.host() });
    const running = await createEncryptedCodecProvider({
      store,
      keyProvider: host(),
      cache: { now: () => now, maxAgeMs: 60_000 },
    });
    const pin = running.deploymentFingerprint;
    expect(pin).toMatch(/^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{22}$/);
    await running.forUser('alice');

    // The attacker's own deployment secret, wrapped by kms:Encrypt, MACed under that secret
    // (they know it), in a record that is valid in every respect but its origin.
    const attacker = createKmsKeyProvider({ keyId: STAND_IN_KEY_ID, client: kms.encryptOnly() });
    const original = await readRecord(store, DEPLOYMENT_RECORD_KEY);
    const secret = new Uint8Array(randomBytes(32));
    const wrapped = await attacker.wrap(secret, {
      deploymentId: original.deployment,
      uid: DEPLOYMENT_CONTEXT_UID,
      keyVersion: 1,
    });
    const forged = { ...original, wrapped };
    forged.mac = computeRecordMac(deriveRecordMacKey(secret), recordMacFields(forged, DEPLOYMENT_CONTEXT_UID));
    await store.put(DEPLOYMENT_RECORD_KEY, encodeKeyRecord(forged));

    const refused = await caught(() =>
      createEncryptedCodecProvider({ store, keyProvider: host(), deploymentFingerprint: pin }),
    );
    expectCode(refused, 'KEY_UNAVAILABLE');
    expect(refused.message).toContain('is not the pinned deployment');
    // The running instance keeps its cached deployment until the cache age, then refuses.
    expect((await running.forUser('alice')).uid).toBe(running.uidOf('alice'));
    now += 60_000;
    const stopped = await caught(() => running.forUser('alice'));
    expectCode(stopped, 'STORE_INCONSISTENT');
    expect(stopped.message).toContain('disappeared or changed while this service was running');
  });

  it('the pin is read from MEMVAULT_DEPLOYMENT_FINGERPRINT and a matching pin starts', async () => {
    const { kms, store, provider } = await kmsDeployment();
    const encryption = { kms: { keyId: STAND_IN_KEY_ID, client: kms.host() } };
    const wrongPin = `${provider.deploymentId}.${'A'.repeat(22)}`;
    const { createEncryptionFromConfig } = await import('../../src/crypto/config.js');
    const refused = await caught(() =>
      createEncryptionFromConfig({ store, config: encryption, env: { MEMVAULT_DEPLOYMENT_FINGERPRINT: wrongPin } }),
    );
    expectCode(refused, 'KEY_UNAVAILABLE');
    const ok = await createEncryptionFromConfig({
      store,
      config: encryption,
      env: { MEMVAULT_DEPLOYMENT_FINGERPRINT: provider.deploymentFingerprint },
    });
    expect(ok.codecProvider.deploymentFingerprint).toBe(provider.deploymentFingerprint);
    // Unpinned in KMS mode, start-up says how to pin.
    const unpinned = await createEncryptionFromConfig({ store, config: encryption, env: {} });
    expect(unpinned.notices.join('\n')).toContain(`MEMVAULT_DEPLOYMENT_FINGERPRINT to it`);
    await Promise.all([ok.close(), unpinned.close()]);
  });

  it('a field edit of any record (kind, key id, version, deployment, uid moved) fails the MAC', async () => {
    const { store, provider } = await kmsDeployment();
    const bob = await provider.forUser('bob');
    const carol = await provider.forUser('carol');
    const record = await readRecord(store, userKeyKey(bob.uid));
    const edits: Array<Partial<KeyRecord>> = [
      { keyId: 'alias/other' },
      { keyVersion: 2 },
      { kind: 'local' },
      { deployment: 'B'.repeat(22) },
    ];
    for (const edit of edits) {
      await store.put(userKeyKey(bob.uid), encodeKeyRecord({ ...record, ...edit }));
      provider.evict(bob.uid);
      expectCode(await caught(() => provider.forUser('bob')), 'INTEGRITY');
    }
    // Bob's whole (valid) record copied to carol's place: the uid is under the MAC.
    await store.put(userKeyKey(carol.uid), encodeKeyRecord(record));
    provider.evict(carol.uid);
    expectCode(await caught(() => provider.forUser('carol')), 'INTEGRITY');
  });
});

describe('rotation and verification', () => {
  it('a record relabelled with the new key id is not counted as rotated, and keys verify lists it', async () => {
    const store = new MemoryStore();
    const oldKey = await localProvider();
    const provider = await createEncryptedCodecProvider({ store, keyProvider: oldKey });
    const uids: string[] = [];
    for (const user of ['u1', 'u2', 'u3']) uids.push((await provider.forUser(user)).uid);
    const newKey = await localProvider();
    // Relabel u2's record: it claims the new key but is still wrapped with the old one.
    const relabelled = await readRecord(store, userKeyKey(uids[1]!));
    await store.put(userKeyKey(uids[1]!), encodeKeyRecord({ ...relabelled, keyId: newKey.keyId }));

    const failure = await caught(() => rotateKeys({ store, from: oldKey, to: newKey }));
    expectCode(failure, 'INTEGRITY');
    expect(failure.message).toContain(userKeyKey(uids[1]!));
    expect(failure.message).toContain('not counted as rotated');

    // keys verify with the new key alone: fails closed, naming the record.
    const verified = await verifyKeys({ store, providers: newKey });
    expect(verified.failed.map((f) => f.key)).toContain(userKeyKey(uids[1]!));
    expect(verified.failed.find((f) => f.key === userKeyKey(uids[1]!))!.reason).toContain('integrity check');

    // Restored from a backup (the original record), rotation finishes and verify passes.
    await store.put(userKeyKey(uids[1]!), encodeKeyRecord(relabelled));
    const done = await rotateKeys({ store, from: oldKey, to: newKey });
    expect(done.total).toBe(4);
    const again = await rotateKeys({ store, from: oldKey, to: newKey });
    expect(again).toEqual({ total: 4, rewrapped: 0, skipped: 4 });
    const clean = await verifyKeys({ store, providers: newKey });
    expect(clean).toMatchObject({ total: 4, opened: 4, failed: [] });
    expect(clean.deploymentFingerprint).toBe(provider.deploymentFingerprint);
  });

  it('a record that names the new key but was wrapped by someone else (right MAC impossible) is refused, never skipped', async () => {
    const { kms, store, provider, host } = await kmsDeployment();
    const dave = await provider.forUser('dave');
    await substitute(store, kms, userKeyKey(dave.uid), dave.uid, 'keep');
    const error = await caught(() => rotateKeys({ store, from: host(), to: host() }));
    expectCode(error, 'INTEGRITY');
    expect(error.message).toContain(userKeyKey(dave.uid));
  });

  it('verify in the middle of a rotation lists the records still wrapped with the old key; after it, none', async () => {
    const store = new HookedStore();
    const oldKey = await localProvider();
    const provider = await createEncryptedCodecProvider({ store, keyProvider: oldKey });
    const eve = (await provider.forUser('eve')).uid;
    const newKey = await localProvider();
    // The rotation stops after the deployment record (a store failure on the first user record).
    store.beforePut = (key) => {
      if (key === userKeyKey(eve)) throw new Error('injected store failure');
    };
    await expect(rotateKeys({ store, from: oldKey, to: newKey })).rejects.toThrow('injected');
    store.beforePut = undefined;
    const midway = await verifyKeys({ store, providers: newKey });
    expect(midway.failed).toEqual([
      { key: userKeyKey(eve), reason: expect.stringContaining('rotation not finished') as string },
    ]);
    expect(midway.opened).toBe(1);
    await rotateKeys({ store, from: oldKey, to: newKey });
    expect((await verifyKeys({ store, providers: newKey })).failed).toEqual([]);
    // The deployment record does not open with an unrelated key: verify throws (nothing can be checked).
    const unrelated = await localProvider();
    expectCode(await caught(() => verifyKeys({ store, providers: unrelated })), 'KEY_UNAVAILABLE');
  });

  it('memvault keys verify exits 1 and names the failing record; 0 when all open', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'memvault-verify-'));
    try {
      const key = Buffer.from(newMasterKey()).toString('base64');
      const storeUrl = `file://${path.join(dir, 'data')}`;
      const vault = await createVault({ store: storeUrl, encryption: { masterKey: key } });
      expect((await vault.run('zoe', { command: 'create', path: PATH, file_text: 'x' })).isError).toBe(false);
      await vault.close();
      const env = { MEMVAULT_MASTER_KEY: key };
      const ok = await runCli(['keys', 'verify', '--store', storeUrl], { cwd: dir, env });
      expect([ok.code, ok.stdout]).toEqual([
        0,
        expect.stringContaining('all 2 key records open with the configured key'),
      ]);
      // Damage zoe's record on disk through the file store.
      const { FileStore } = await import('../../src/store/file.js');
      const raw = new FileStore(path.join(dir, 'data'));
      const recordKey = (await raw.list('k/')).objects.map((o) => o.key).find((k) => k !== DEPLOYMENT_RECORD_KEY)!;
      const record = decodeKeyRecord((await raw.get(recordKey))!.body);
      await raw.put(recordKey, encodeKeyRecord({ ...record, keyVersion: 7 }));
      await raw.close();
      const bad = await runCli(['keys', 'verify', '--store', storeUrl], { cwd: dir, env });
      expect(bad.code).toBe(1);
      expect(bad.stdout).toContain(`FAILED ${recordKey}`);
      expect(bad.stdout).toContain('do NOT destroy the old key');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('two deployments sharing one master key', () => {
  let store: MemoryStore;
  beforeEach(() => {
    store = new MemoryStore();
  });
  afterEach(() => store.close());

  it("refuse each other's key records and objects", async () => {
    const masterKey = newMasterKey();
    const storeB = new MemoryStore();
    const a = await createEncryptedCodecProvider({ store, keyProvider: await localProvider(masterKey) });
    const b = await createEncryptedCodecProvider({ store: storeB, keyProvider: await localProvider(masterKey) });
    expect(a.deploymentId).not.toBe(b.deploymentId);
    const aliceA = await a.forUser('alice');
    const sealed = aliceA.seal(PATH, encode('from A'));
    const aRecord = await readRecord(store, userKeyKey(aliceA.uid));
    const uidB = b.uidOf('alice');
    // A's record at B's place for the same user: refused (other deployment id, other MAC key).
    await storeB.put(userKeyKey(uidB), encodeKeyRecord(aRecord));
    expectCode(await caught(() => b.forUser('alice')), 'INTEGRITY');
    // Relabelled with B's deployment id: the MAC still fails.
    await storeB.put(userKeyKey(uidB), encodeKeyRecord({ ...aRecord, deployment: b.deploymentId }));
    expectCode(await caught(() => b.forUser('alice')), 'INTEGRITY');
    // The wrap itself is bound to the deployment: B's context does not open A's wrap even with
    // the master key (which both share).
    const provider = await localProvider(masterKey);
    expectCode(
      await caught(() =>
        provider.unwrap(aRecord.wrapped, { deploymentId: b.deploymentId, uid: aliceA.uid, keyVersion: 1 }),
      ),
      'INTEGRITY',
    );
    // And content: the same data key, uid and path under another deployment id does not open.
    const dataKey = newMasterKey();
    const keys = deriveUserKeys(dataKey, 1);
    const object = sealContentWithNonce(keys, a.deploymentId, aliceA.uid, PATH, encode('x'), new Uint8Array(24));
    expect(decode(openContent(keys, a.deploymentId, aliceA.uid, PATH, object))).toBe('x');
    expectCode(
      caughtSync(() => openContent(keys, b.deploymentId, aliceA.uid, PATH, object)),
      'INTEGRITY',
    );
    const { wrapKey } = (await import('../../src/crypto/format.js')).deriveLocalMasterKeys(masterKey);
    const localWrapped = localWrapWithNonce(wrapKey, dataKey, a.deploymentId, aliceA.uid, 1, new Uint8Array(24));
    expect(localUnwrap(wrapKey, localWrapped, a.deploymentId, aliceA.uid, 1)).toEqual(dataKey);
    expect(localUnwrap(wrapKey, localWrapped, b.deploymentId, aliceA.uid, 1)).toBeNull();
    void sealed;
    await storeB.close();
  });
});
