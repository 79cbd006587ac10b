import { PassThrough } from 'node:stream';
import tar from 'tar-stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEncryptedCodecProvider, type EncryptedCodecProvider } from '../../src/crypto/codec.js';
import { decodeKeyRecord } from '../../src/crypto/key-provider.js';
import { DEPLOYMENT_RECORD_KEY, KEYS_PREFIX, listUsers, userFilesPrefix, userKeyKey } from '../../src/crypto/layout.js';
import { forgetUser, rotateKeys, type RotationProgress } from '../../src/crypto/operations.js';
import { exportUser } from '../../src/lifecycle/export-archive.js';
import { loadSodium } from '../../src/crypto/sodium.js';
import type { ObjectStore } from '../../src/store/port.js';
import { MemoryStore } from '../../src/store/memory.js';
import { caught, expectCode, HookedStore, localProvider } from './helpers.js';
import { decode, encode } from '../kit/text.js';

beforeAll(async () => {
  await loadSodium();
});

/** Write files the way the vault does: key from keyFor, body from seal. */
async function writeFiles(
  store: ObjectStore,
  provider: EncryptedCodecProvider,
  userId: string,
  files: Record<string, string>,
): Promise<void> {
  const codec = await provider.forUser(userId);
  for (const [path, content] of Object.entries(files))
    await store.put(codec.keyFor(path), codec.seal(path, encode(content)));
}

/** Read every file of a user back through a codec (what the vault's listing + read would do). */
async function readAll(
  store: ObjectStore,
  provider: EncryptedCodecProvider,
  userId: string,
): Promise<Record<string, string>> {
  const codec = await provider.forUser(userId);
  const out: Record<string, string> = {};
  for (const object of (await store.list(codec.filesPrefix)).objects) {
    const path = codec.pathFor(object.key);
    out[path] = decode(codec.open(path, (await store.get(object.key))!.body));
  }
  return out;
}

const USERS: Record<string, Record<string, string>> = {
  'u1@example.com': { '/memories/a.md': 'alpha', '/memories/dir/b.md': 'bravo' },
  'u2@example.com': { '/memories/c.md': 'charlie' },
  'u3@example.com': { '/memories/deep/er/d.md': 'delta' },
  'u4@example.com': { '/memories/e.md': 'echo' },
};

async function populated() {
  const store = new HookedStore();
  const oldKey = await localProvider();
  const provider = await createEncryptedCodecProvider({ store, keyProvider: oldKey });
  for (const [user, files] of Object.entries(USERS)) await writeFiles(store, provider, user, files);
  return { store, oldKey, provider };
}

describe('rotateKeys', () => {
  it('re-wraps every key record without touching content; resumes after an interruption; only the new key opens it', async () => {
    const { store, oldKey } = await populated();
    const newKey = await localProvider();
    const contentBefore = new Map<string, string>();
    for (const key of store.inner.keys().filter((k) => k.startsWith('u/')))
      contentBefore.set(key, Buffer.from((await store.inner.get(key))!.body).toString('hex'));

    // Fail the third key-record write.
    let keyPuts = 0;
    store.beforePut = (key) => {
      if (key.startsWith(KEYS_PREFIX) && ++keyPuts === 3) throw new Error('injected store failure');
    };
    const seen: RotationProgress[] = [];
    await expect(rotateKeys({ store, from: oldKey, to: newKey, onProgress: (p) => seen.push(p) })).rejects.toThrow(
      'injected store failure',
    );
    store.beforePut = undefined;
    const kinds = await Promise.all(
      store.inner
        .keys()
        .filter((k) => k.startsWith(KEYS_PREFIX))
        .map(async (k) => decodeKeyRecord((await store.inner.get(k))!.body).keyId),
    );
    expect(kinds.filter((id) => id === newKey.keyId)).toHaveLength(2);
    expect(kinds.filter((id) => id === oldKey.keyId)).toHaveLength(3);
    expect(seen[0]).toEqual({ done: 0, total: 5, rewrapped: 0, skipped: 0 });

    // Mid-rotation, a service configured with the new key and the old one as previous reads every user.
    const live = await createEncryptedCodecProvider({ store, keyProvider: newKey, previousKeyProviders: [oldKey] });
    for (const [user, files] of Object.entries(USERS)) expect(await readAll(store, live, user)).toEqual(files);

    const progress: RotationProgress[] = [];
    const result = await rotateKeys({ store, from: oldKey, to: newKey, onProgress: (p) => progress.push(p) });
    expect(result).toEqual({ total: 5, rewrapped: 3, skipped: 2 });
    expect(progress.at(-1)).toEqual({ done: 5, total: 5, rewrapped: 3, skipped: 2 });
    expect(decodeKeyRecord((await store.inner.get(DEPLOYMENT_RECORD_KEY))!.body).keyId).toBe(newKey.keyId);

    // Content untouched, byte for byte.
    for (const [key, hex] of contentBefore)
      expect(Buffer.from((await store.inner.get(key))!.body).toString('hex')).toBe(hex);
    // The new key alone opens everything, with the same uids; the old key alone no longer starts.
    const after = await createEncryptedCodecProvider({ store, keyProvider: newKey });
    for (const [user, files] of Object.entries(USERS)) expect(await readAll(store, after, user)).toEqual(files);
    expectCode(await caught(() => createEncryptedCodecProvider({ store, keyProvider: oldKey })), 'KEY_UNAVAILABLE');

    // A third run has nothing to do.
    expect(await rotateKeys({ store, from: oldKey, to: newKey })).toEqual({ total: 5, rewrapped: 0, skipped: 5 });
  });

  it('a concurrent rewrite of a record (If-Match conflict) is re-read and rotated, not overwritten blindly', async () => {
    const { store, oldKey, provider } = await populated();
    const newKey = await localProvider();
    const target = userKeyKey(provider.uidOf('u2@example.com'));
    let raced = false;
    store.beforePut = async (key, options) => {
      if (key === target && options?.ifMatch && !raced) {
        raced = true;
        // Another writer replaces the record (same content, new ETag) between our read and our put.
        await store.inner.put(key, (await store.inner.get(key))!.body);
      }
    };
    const result = await rotateKeys({ store, from: oldKey, to: newKey });
    expect(raced).toBe(true);
    expect(store.failedPuts).toContain(target);
    expect(result.rewrapped).toBe(5);
    expect(decodeKeyRecord((await store.inner.get(target))!.body).keyId).toBe(newKey.keyId);
  });

  it('stops before changing anything when the old key is wrong, with a clear message', async () => {
    const { store } = await populated();
    const stranger = await localProvider();
    const newKey = await localProvider();
    const before = store.puts.length;
    const failure = await caught(() => rotateKeys({ store, from: stranger, to: newKey }));
    expectCode(failure, 'KEY_UNAVAILABLE');
    expect(failure.message).toContain('neither the old key nor the new one');
    expect(store.puts.length).toBe(before);
  });
});

describe('forgetUser', () => {
  it('deletes the key first, then every object; old copies of the objects never decrypt again', async () => {
    const { store, provider, oldKey } = await populated();
    const userId = 'u1@example.com';
    const uid = provider.uidOf(userId);
    const copies = new Map<string, Uint8Array>();
    for (const key of store.inner.keys().filter((k) => k.startsWith(`u/${uid}/`)))
      copies.set(key, (await store.inner.get(key))!.body);
    const order: string[] = [];
    const deleting = new Proxy(store, {
      get(target, prop, receiver) {
        if (prop === 'delete') return (key: string) => (order.push(`delete ${key}`), target.delete(key));
        if (prop === 'deleteMany')
          return (keys: string[]) => (order.push(`deleteMany ${keys.length}`), target.deleteMany(keys));
        return Reflect.get(target, prop, receiver);
      },
    });
    const result = await forgetUser({ store: deleting, codecProvider: provider, userId });
    expect(result).toEqual({ uid, keyDeleted: true, objectsDeleted: 2 });
    expect(order).toEqual([`delete ${userKeyKey(uid)}`, 'deleteMany 2']);
    expect(store.inner.keys().filter((k) => k.includes(uid))).toEqual([]);
    expect(await listUsers(store)).not.toContain(uid);
    // Other users are untouched.
    expect(await readAll(store, provider, 'u2@example.com')).toEqual(USERS['u2@example.com']);

    // A backup restores the objects (not the key): no new key is made over them (it would split
    // the user), on this instance or a fresh one; the error names the recovery.
    for (const [key, body] of copies) await store.inner.put(key, body);
    for (const fresh of [provider, await createEncryptedCodecProvider({ store, keyProvider: oldKey })]) {
      const refused = await caught(() => fresh.forUser(userId));
      expectCode(refused, 'STORE_INCONSISTENT');
      expect(refused.message).toContain('restores the key record from a backup');
    }
    expect(await store.inner.get(userKeyKey(uid))).toBeNull();
  });

  it('a run interrupted after the key was deleted is finished by running again', async () => {
    const { store, provider } = await populated();
    const uid = provider.uidOf('u3@example.com');
    const failing = new Proxy(store, {
      get(target, prop, receiver) {
        if (prop === 'deleteMany') return () => Promise.reject(new Error('injected'));
        return Reflect.get(target, prop, receiver);
      },
    });
    await expect(forgetUser({ store: failing, codecProvider: provider, userId: 'u3@example.com' })).rejects.toThrow(
      'injected',
    );
    expect(await store.head(userKeyKey(uid))).toBeNull();
    expect(store.inner.keys().some((k) => k.startsWith(userFilesPrefix(uid)))).toBe(true);
    const result = await forgetUser({ store, codecProvider: provider, userId: 'u3@example.com' });
    expect(result).toEqual({ uid, keyDeleted: false, objectsDeleted: 1 });
    expect(store.inner.keys().some((k) => k.includes(uid))).toBe(false);
  });
});

async function readTar(bytes: Buffer): Promise<Array<{ name: string; content: string; mode: number | undefined }>> {
  const extract = tar.extract();
  const entries: Array<{ name: string; content: string; mode: number | undefined }> = [];
  const done = (async () => {
    for await (const entry of extract) {
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(chunk as Buffer);
      entries.push({
        name: entry.header.name,
        content: Buffer.concat(chunks).toString('utf8'),
        mode: entry.header.mode,
      });
    }
  })();
  extract.end(bytes);
  await done;
  return entries;
}

describe('exportUser', () => {
  it('writes every file of the user, decrypted, at its memory path', async () => {
    const { store, provider } = await populated();
    await writeFiles(store, provider, 'u1@example.com', { '/memories/ünïcode/名前.md': 'text ✓' });
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    const progress: number[] = [];
    const result = await exportUser({
      store,
      codecProvider: provider,
      userId: 'u1@example.com',
      out,
      onProgress: (p) => progress.push(p.files),
    });
    expect(result).toMatchObject({ files: 3, bytes: 'alpha'.length + 'bravo'.length + Buffer.byteLength('text ✓') });
    expect(progress).toEqual([1, 2, 3]);
    const entries = await readTar(Buffer.concat(chunks));
    const files = entries.filter((e) => e.name !== 'manifest.json');
    expect(Object.fromEntries(files.map((e) => [e.name, e.content]))).toEqual({
      'memories/a.md': 'alpha',
      'memories/dir/b.md': 'bravo',
      'memories/ünïcode/名前.md': 'text ✓',
    });
    // The manifest comes last and lists exactly those files with their sizes.
    expect(entries.at(-1)!.name).toBe('manifest.json');
    const manifest = JSON.parse(entries.at(-1)!.content) as {
      format: string;
      files: number;
      entries: Array<{ path: string; size: number }>;
    };
    expect(manifest.format).toBe('memvault-user-export');
    expect(manifest.files).toBe(3);
    expect(manifest.entries.map((e) => [e.path, e.size]).sort()).toEqual([
      ['/memories/a.md', 5],
      ['/memories/dir/b.md', 5],
      ['/memories/ünïcode/名前.md', Buffer.byteLength('text ✓')],
    ]);
    expect(entries.every((e) => e.mode === 0o600)).toBe(true);
  });

  it('refuses an unknown user without creating a key, and stops on an object that does not decrypt', async () => {
    const { store, provider } = await populated();
    const before = store.inner.keys().length;
    expectCode(
      await caught(() => exportUser({ store, codecProvider: provider, userId: 'nobody', out: new PassThrough() })),
      'NOT_FOUND',
    );
    expect(store.inner.keys().length).toBe(before);

    const codec = await provider.forUser('u2@example.com');
    const key = codec.keyFor('/memories/c.md');
    const body = (await store.get(key))!.body;
    body[body.length - 1] = body[body.length - 1]! ^ 1;
    await store.put(key, body);
    const out = new PassThrough();
    out.resume();
    expectCode(
      await caught(() => exportUser({ store, codecProvider: provider, userId: 'u2@example.com', out })),
      'INTEGRITY',
    );
  });
});

describe('raw storage', () => {
  it('holds none of the user ids, file names or contents anywhere in keys, bodies or metadata', async () => {
    const store = new MemoryStore();
    const provider = await createEncryptedCodecProvider({ store, keyProvider: await localProvider() });
    const planted = ['PLANTUSERzq81', 'PLANTDIRxk44', 'PLANTFILEvv07', 'PLANTTEXTmm59'];
    await writeFiles(store, provider, `${planted[0]}@example.com`, {
      [`/memories/${planted[1]}/${planted[2]}.md`]: `secret ${planted[3]} secret`,
    });
    const raw: string[] = [];
    for (const key of store.keys()) {
      const object = (await store.get(key))!;
      raw.push(key, Buffer.from(object.body).toString('latin1'), JSON.stringify(object.metadata));
    }
    const haystack = raw.join('\n');
    expect(haystack.length).toBeGreaterThan(100);
    for (const needle of planted) expect(haystack).not.toContain(needle);
  });
});
