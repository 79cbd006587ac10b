/**
 * Mixed settings (docs/versions.md, "Mixed settings and upgrades"): instances with history on and
 * off share a store (an application with `history: false` beside the CLI's default, history turned
 * off and on again). Every write carries its version record either way, so an instance with history
 * on reads what one with it off wrote as a current version newer than the history, and still
 * refuses an older ciphertext put back. A write with no record at all (a release before this one)
 * over a file that has kept versions is refused like a put-back stripped of its record.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import { FileStore } from '../../src/store/file.js';
import { MemoryStore } from '../../src/store/memory.js';
import { listAll, type ObjectStore } from '../../src/store/port.js';
import { isKeptVersionKey } from '../kit/stores.js';

const U = 'mixed-user';
const masterKey = Buffer.alloc(32, 5).toString('base64');
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const stores: Array<[string, () => Promise<ObjectStore>]> = [
  ['memory store', async () => new MemoryStore()],
  [
    'file store',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'memvault-mixed-'));
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
      return FileStore.open(dir);
    },
  ],
];

async function open(store: ObjectStore, history: boolean): Promise<Vault> {
  const vault = await createVault({ store, history, encryption: { masterKey } });
  cleanups.unshift(() => vault.close());
  return vault;
}

async function ok(vault: Vault, input: Record<string, unknown>): Promise<string> {
  const result = await vault.run(U, input);
  expect(result.isError, JSON.stringify(result.content)).toBe(false);
  return JSON.stringify(result.content);
}

async function keys(store: ObjectStore): Promise<string[]> {
  const out: string[] = [];
  for await (const o of listAll(store, 'u/')) out.push(o.key);
  return out;
}

describe.each(stores)('history on and off over one store (%s)', (_name, makeStore) => {
  it('an edit made with history off is read as current by an instance with it on, and numbered below the next kept version', async () => {
    const store = await makeStore();
    const on = await open(store, true);
    const off = await open(store, false);
    await ok(on, { command: 'create', path: '/memories/a.md', file_text: 'one\n' });
    await ok(on, { command: 'str_replace', path: '/memories/a.md', old_str: 'one', new_str: 'two' });
    await ok(off, { command: 'str_replace', path: '/memories/a.md', old_str: 'two', new_str: 'three' });
    expect(await ok(on, { command: 'view', path: '/memories/a.md' })).toContain('three');
    // The history kept nothing of the edit made with it off, and goes on above it.
    expect((await on.history(U, '/memories/a.md')).versions).toHaveLength(2);
    await ok(on, { command: 'str_replace', path: '/memories/a.md', old_str: 'three', new_str: 'four' });
    const { versions } = await on.history(U, '/memories/a.md');
    expect(versions).toHaveLength(3);
    expect(versions[0]!.seq).toBeGreaterThan(versions[1]!.seq + 1); // one past the unkept edit's number
    // A file created with history off, and the other instance's view of both.
    await ok(off, { command: 'create', path: '/memories/b.md', file_text: 'bee\n' });
    expect(await ok(on, { command: 'view', path: '/memories/b.md' })).toContain('bee');
    expect(await ok(off, { command: 'view', path: '/memories/a.md' })).toContain('four');
  });

  it('an older ciphertext put back after an edit made with history off is still refused', async () => {
    const store = await makeStore();
    const on = await open(store, true);
    const off = await open(store, false);
    await ok(on, { command: 'create', path: '/memories/a.md', file_text: 'first\n' });
    const [versionKey] = (await keys(store)).filter(isKeptVersionKey);
    const fileKey = (await keys(store)).find((k) => k.includes('/f/'))!;
    const first = (await store.get(versionKey!))!;
    await ok(off, { command: 'str_replace', path: '/memories/a.md', old_str: 'first', new_str: 'second' });
    await ok(on, { command: 'str_replace', path: '/memories/a.md', old_str: 'second', new_str: 'third' });
    await store.put(fileKey, first.body, { metadata: first.metadata });
    expect(await on.run(U, { command: 'view', path: '/memories/a.md' })).toMatchObject({
      isError: true,
      code: 'INTEGRITY',
    });
  });

  it('a write with no record at all over a file with kept versions (an older release) is refused until restored', async () => {
    const store = await makeStore();
    const on = await open(store, true);
    await ok(on, { command: 'create', path: '/memories/a.md', file_text: 'kept\n' });
    const fileKey = (await keys(store)).find((k) => k.includes('/f/'))!;
    const current = (await store.get(fileKey))!;
    // What a release that wrote no records leaves: the same sealed bytes, no version metadata.
    await store.put(fileKey, current.body);
    expect(await on.run(U, { command: 'view', path: '/memories/a.md' })).toMatchObject({
      isError: true,
      code: 'INTEGRITY',
    });
    const restored = await on.restore(U, { path: '/memories/a.md', asOf: new Date() });
    expect(restored.files.map((f) => f.action)).toEqual(['restored']);
    expect(await ok(on, { command: 'view', path: '/memories/a.md' })).toContain('kept');
  });
});
