import { mkdtemp, readFile, rm, stat, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createEncryptedCodecProvider } from '../../src/crypto/codec.js';
import { createEncryptionFromConfig, keyProviderFromConfig } from '../../src/crypto/config.js';
import { deriveKeyring } from '../../src/crypto/format.js';
import { KeyCache } from '../../src/crypto/key-cache.js';
import { decodeKeyRecord } from '../../src/crypto/key-provider.js';
import { DEPLOYMENT_RECORD_KEY, listUsers, userKeyKey } from '../../src/crypto/layout.js';
import { loadOrCreateLocalMasterKey, readMasterKeyFile } from '../../src/crypto/local-key.js';
import { loadSodium } from '../../src/crypto/sodium.js';
import { MemoryStore } from '../../src/store/memory.js';
import {
  barrier,
  caught,
  caughtSync,
  expectCode,
  HookedStore,
  localProvider,
  newMasterKey,
  newVault,
} from './helpers.js';
import { decode, encode } from '../kit/text.js';

beforeAll(async () => {
  await loadSodium();
});

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'memvault-keys-'));
});
afterEach(async () => {
  vi.useRealTimers();
  await rm(dir, { recursive: true, force: true });
});

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

describe('master key configuration', () => {
  it('a missing key gives a clear CONFIG message naming the settings', async () => {
    const error = await caught(() => createEncryptionFromConfig({ store: new MemoryStore(), config: {}, env: {} }));
    expectCode(error, 'CONFIG');
    expect(error.message).toContain('MEMVAULT_MASTER_KEY');
    expect(error.message).toContain('MEMVAULT_KMS_KEY_ID');
  });

  it('a malformed MEMVAULT_MASTER_KEY gives CONFIG and never echoes the value', async () => {
    const short = b64(newMasterKey().subarray(0, 16));
    for (const value of [short, 'not base64 at all!', `${b64(newMasterKey())}AAAA`]) {
      const error = await caught(() => keyProviderFromConfig({}, { env: { MEMVAULT_MASTER_KEY: value } }));
      expectCode(error, 'CONFIG');
      expect(error.message).toContain('exactly 32 bytes');
      expect(error.message).not.toContain(value);
    }
  });

  it('two key sources at one level are refused', async () => {
    const error = await caught(() =>
      keyProviderFromConfig({ masterKey: b64(newMasterKey()), kms: { keyId: 'alias/x' } }),
    );
    expectCode(error, 'CONFIG');
  });

  it('the same master key from env, option and file gives the same key id', async () => {
    const key = newMasterKey();
    const file = path.join(dir, 'master.key');
    await writeFile(file, `${b64(key)}\n`, { mode: 0o600 });
    const fromEnv = await keyProviderFromConfig({}, { env: { MEMVAULT_MASTER_KEY: b64(key) } });
    const fromOption = await keyProviderFromConfig({ masterKey: key });
    const fromFile = await keyProviderFromConfig({}, { env: { MEMVAULT_MASTER_KEY_FILE: file } });
    expect(fromEnv.keyProvider.keyId).toMatch(/^local-[A-Za-z0-9_-]{16}$/);
    expect(fromOption.keyProvider.keyId).toBe(fromEnv.keyProvider.keyId);
    expect(fromFile.keyProvider.keyId).toBe(fromEnv.keyProvider.keyId);
    expect((await localProvider()).keyId).not.toBe(fromEnv.keyProvider.keyId);
  });

  it('refuses a key file that other users can read, with the chmod to run', async () => {
    const file = path.join(dir, 'master.key');
    await writeFile(file, b64(newMasterKey()), { mode: 0o600 });
    await chmod(file, 0o644);
    const error = await caught(() => readMasterKeyFile(file));
    expectCode(error, 'CONFIG');
    expect(error.message).toContain('0644');
    expect(error.message).toContain('chmod 600');
    await chmod(file, 0o600);
    expect((await readMasterKeyFile(file)).byteLength).toBe(32);
  });

  it('a missing key file named explicitly is a CONFIG error, not a new key', async () => {
    const file = path.join(dir, 'absent.key');
    expectCode(await caught(() => keyProviderFromConfig({ masterKeyFile: file })), 'CONFIG');
    await expect(stat(file)).rejects.toThrow();
  });

  it('the embedded default creates one key file (0600) on first run, and concurrent starts agree', async () => {
    const file = path.join(dir, 'nested', 'master.key');
    const results = await Promise.all(Array.from({ length: 6 }, () => loadOrCreateLocalMasterKey(file)));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    const keys = new Set(results.map((r) => b64(r.masterKey)));
    expect(keys.size).toBe(1);
    expect(((await stat(file)).mode & 0o777).toString(8)).toBe('600');
    expect((await readFile(file, 'utf8')).trim()).toBe([...keys][0]);
    const again = await loadOrCreateLocalMasterKey(file);
    expect(again.created).toBe(false);
  });
});

describe('deployment record and start-up', () => {
  it('a wrong master key at start-up is KEY_UNAVAILABLE with a message naming both key ids, not garbage', async () => {
    const store = new MemoryStore();
    const right = await localProvider();
    await createEncryptedCodecProvider({ store, keyProvider: right });
    const wrong = await localProvider();
    const error = await caught(() => createEncryptedCodecProvider({ store, keyProvider: wrong }));
    expectCode(error, 'KEY_UNAVAILABLE');
    expect(error.message).toContain('does not match this deployment');
    expect(error.message).toContain(right.keyId);
    expect(error.message).toContain(wrong.keyId);
  });

  it('through config: a default key file created against an existing deployment is removed again and explained', async () => {
    const store = new MemoryStore();
    await createEncryptionFromConfig({ store, config: {}, env: { MEMVAULT_MASTER_KEY: b64(newMasterKey()) } });
    const file = path.join(dir, 'master.key');
    const error = await caught(() =>
      createEncryptionFromConfig({ store, config: {}, env: {}, defaultMasterKeyFile: file }),
    );
    expectCode(error, 'KEY_UNAVAILABLE');
    expect(error.message).toContain('restore the original key file');
    await expect(stat(file)).rejects.toThrow();
  });

  it('the embedded default says it created the key file and the deployment', async () => {
    const file = path.join(dir, 'master.key');
    const first = await createEncryptionFromConfig({
      store: new MemoryStore(),
      config: {},
      env: {},
      defaultMasterKeyFile: file,
    });
    expect(first.createdMasterKeyFile).toBe(file);
    expect(first.notices.join('\n')).toContain('created a new master key file');
    expect(first.notices.join('\n')).toContain('created a new deployment record');
    expect(first.notices.join('\n')).not.toContain((await readFile(file, 'utf8')).trim());
  });

  it('Encryption.close() wipes the codec provider and the key providers', async () => {
    const encryption = await createEncryptionFromConfig({
      store: new MemoryStore(),
      config: { masterKey: newMasterKey() },
      env: {},
    });
    const codec = await encryption.codecProvider.forUser('kim');
    await encryption.close();
    expectCode(
      caughtSync(() => codec.seal('/memories/x.md', encode('x'))),
      'KEY_UNAVAILABLE',
    );
    expectCode(
      await caught(() => encryption.keyProvider.wrap(newMasterKey(), { deploymentId: 'd', uid: 'x', keyVersion: 1 })),
      'KEY_UNAVAILABLE',
    );
  });

  it('a damaged deployment record is reported as damaged', async () => {
    const { store, keyProvider } = await newVault();
    const stored = await store.get(DEPLOYMENT_RECORD_KEY);
    const record = JSON.parse(decode(stored!.body)) as { wrapped: string };
    const wrapped = Buffer.from(record.wrapped, 'base64');
    wrapped[30] = wrapped[30]! ^ 1;
    record.wrapped = wrapped.toString('base64');
    await store.put(DEPLOYMENT_RECORD_KEY, encode(JSON.stringify(record)));
    const error = await caught(() => createEncryptedCodecProvider({ store, keyProvider }));
    expectCode(error, 'KEY_UNAVAILABLE');
    expect(error.message).toContain('damaged');
  });

  it('uids are stable across processes, differ per user and per deployment, and are not the user id', async () => {
    const { store, keyProvider, provider } = await newVault();
    const again = await createEncryptedCodecProvider({ store, keyProvider });
    expect(again.uidOf('alice@example.com')).toBe(provider.uidOf('alice@example.com'));
    expect(provider.uidOf('alice@example.com')).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(provider.uidOf('bob@example.com')).not.toBe(provider.uidOf('alice@example.com'));
    expect((await newVault()).provider.uidOf('alice@example.com')).not.toBe(provider.uidOf('alice@example.com'));
    expectCode(
      caughtSync(() => provider.uidOf('')),
      'INVALID_USER',
    );
  });
});

describe('per-user data keys', () => {
  it('concurrent first use of one user from two processes on one store creates exactly one key', async () => {
    const store = new HookedStore();
    const keyProvider = await localProvider();
    // Both processes race on the deployment record too.
    const deploymentGate = barrier(2);
    store.beforeGet = (key) => (key === DEPLOYMENT_RECORD_KEY ? deploymentGate() : undefined);
    const [p1, p2] = await Promise.all([
      createEncryptedCodecProvider({ store, keyProvider }),
      createEncryptedCodecProvider({ store, keyProvider }),
    ]);
    expect(p1.uidOf('carol')).toBe(p2.uidOf('carol'));
    expect([p1.createdDeployment, p2.createdDeployment].sort()).toEqual([false, true]);

    const uid = p1.uidOf('carol');
    const keyGate = barrier(2);
    store.beforeGet = (key) => (key === userKeyKey(uid) ? keyGate() : undefined);
    const [c1, c2] = await Promise.all([p1.forUser('carol'), p2.forUser('carol')]);
    // Both created a key and tried to store it create-only; one put lost.
    expect(store.puts.filter((p) => p.key === userKeyKey(uid) && p.options?.ifNoneMatch === '*')).toHaveLength(2);
    expect(store.failedPuts.filter((k) => k === userKeyKey(uid))).toHaveLength(1);
    expect(store.failedPuts.filter((k) => k === DEPLOYMENT_RECORD_KEY)).toHaveLength(1);
    expect(await listUsers(store)).toEqual([uid]);
    // Both processes hold the same key: each opens what the other sealed, and names agree.
    expect(decode(c2.open('/memories/a.md', c1.seal('/memories/a.md', encode('one'))))).toBe('one');
    expect(decode(c1.open('/memories/a.md', c2.seal('/memories/a.md', encode('two'))))).toBe('two');
    expect(c1.keyFor('/memories/a.md')).toBe(c2.keyFor('/memories/a.md'));
  });

  it('concurrent first use within one process reads and unwraps once', async () => {
    const store = new HookedStore();
    const { provider } = await newVault({ store });
    const before = store.puts.length;
    const codecs = await Promise.all(Array.from({ length: 10 }, () => provider.forUser('dave')));
    expect(store.puts.length - before).toBe(1);
    expect(store.failedPuts).toEqual([]);
    expect(new Set(codecs.map((c) => c.uid)).size).toBe(1);
  });

  it('the key record names its provider, key id and version, and holds no plaintext key', async () => {
    const { store, provider, keyProvider } = await newVault();
    const codec = await provider.forUser('erin');
    const record = decodeKeyRecord((await store.get(userKeyKey(codec.uid)))!.body);
    expect(record).toMatchObject({
      format: 2,
      deployment: provider.deploymentId,
      kind: 'local',
      keyId: keyProvider.keyId,
      keyVersion: 1,
    });
    expect(record.wrapped.byteLength).toBe(73);
  });

  it('forUid opens existing users only', async () => {
    const { provider } = await newVault();
    const uid = provider.uidOf('frank');
    expectCode(await caught(() => provider.forUid(uid)), 'NOT_FOUND');
    await provider.forUser('frank');
    expect((await provider.forUid(uid)).uid).toBe(uid);
    expectCode(await caught(() => provider.forUid('../etc')), 'INVALID_USER');
  });

  it('a store failure while creating a key is reported, and the next use retries', async () => {
    const store = new HookedStore();
    const { provider } = await newVault({ store });
    store.beforePut = () => {
      throw new Error('store down');
    };
    await expect(provider.forUser('gina')).rejects.toThrow('store down');
    store.beforePut = undefined;
    expect((await provider.forUser('gina')).uid).toBe(provider.uidOf('gina'));
  });
});

describe('key cache', () => {
  const ring = () => deriveKeyring(new Map([[1, newMasterKey()]]), 1, [1]);

  it('holds at most maxEntries users, least recently used out first, and wipes evicted keys', () => {
    const cache = new KeyCache({ maxEntries: 2, wipeGraceMs: 0 });
    const a = cache.set('a', ring());
    const b = cache.set('b', ring());
    expect(cache.get('a')).toBe(a); // a is now most recent
    const c = cache.set('c', ring());
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect(b.wiped).toBe(true);
    for (const bytes of [
      b.keys.current.contentKey,
      b.keys.current.nameKey,
      b.keys.current.nameSivKey,
      b.keys.current.commitment,
    ])
      expect(bytes.every((x) => x === 0)).toBe(true);
    expect(a.wiped).toBe(false);
    expect(a.keys.current.contentKey.some((x) => x !== 0)).toBe(true);
    cache.clear();
    expect(a.wiped && c.wiped).toBe(true);
    expect(c.keys.current.contentKey.every((x) => x === 0)).toBe(true);
  });

  it('expires keys after maxAgeMs and wipes them', () => {
    let now = 0;
    const cache = new KeyCache({ maxAgeMs: 1000, wipeGraceMs: 0, now: () => now });
    const entry = cache.set('a', ring());
    now = 999;
    expect(cache.get('a')).toBe(entry);
    now = 1000;
    expect(cache.get('a')).toBeUndefined();
    expect(entry.wiped).toBe(true);
  });

  it('waits out the grace before wiping an evicted key; close() wipes at once', () => {
    vi.useFakeTimers();
    const cache = new KeyCache({ maxEntries: 1, wipeGraceMs: 5000 });
    const a = cache.set('a', ring());
    const b = cache.set('b', ring());
    expect(a.wiped).toBe(false);
    vi.advanceTimersByTime(5000);
    expect(a.wiped).toBe(true);
    const c = cache.set('c', ring());
    expect(b.wiped).toBe(false);
    cache.clear();
    expect(b.wiped && c.wiped).toBe(true);
  });

  it('a codec whose key was evicted refuses to work (never uses zeroed keys); a new forUser works', async () => {
    const { provider } = await newVault({ cache: { maxEntries: 1, wipeGraceMs: 0 } });
    const first = await provider.forUser('hana');
    const sealed = first.seal('/memories/x.md', encode('kept'));
    await provider.forUser('ivan');
    expect(provider.cachedUsers).toBe(1);
    expectCode(
      caughtSync(() => first.seal('/memories/x.md', encode('x'))),
      'KEY_UNAVAILABLE',
    );
    const again = await provider.forUser('hana');
    expect(decode(again.open('/memories/x.md', sealed))).toBe('kept');
  });

  it('close() wipes every cached key and the provider refuses further use', async () => {
    const { provider } = await newVault();
    const codec = await provider.forUser('jo');
    await provider.close();
    expectCode(
      caughtSync(() => codec.seal('/memories/x.md', encode('x'))),
      'KEY_UNAVAILABLE',
    );
    expectCode(await caught(() => provider.forUser('jo')), 'KEY_UNAVAILABLE');
  });
});
