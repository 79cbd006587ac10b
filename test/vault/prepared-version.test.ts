/**
 * On the file store a write's version is prepared (its temp file written and fsync'd) beside the
 * write itself, and published only once the write has landed (ObjectStore.prepareCreate): the
 * history is never ahead of the file. A write that fails drops its prepared version; one whose
 * preparation failed keeps its version by a plain PUT. A fence's tombstone is prepared beside the
 * fence the same way, and published only once the file is gone.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault } from '../../src/index.js';
import { FileStore } from '../../src/store/file.js';
import { listAll, type PreparedCreate, type PutOptions } from '../../src/store/port.js';
import { isKeptVersionKey } from '../kit/stores.js';

const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});
const encryption = { masterKey: Buffer.alloc(32, 11).toString('base64') };
const settle = async (): Promise<void> => {
  for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** A file store whose PUTs of a user's file (not of a kept version) and fences can be held, and whose preparations are counted or failed. */
class GatedFileStore extends FileStore {
  gate: Promise<void> | undefined;
  fenceGate: Promise<void> | undefined;
  override async deleteExactly(key: string, ifMatch: string): Promise<void> {
    if (this.fenceGate) await this.fenceGate;
    return super.deleteExactly(key, ifMatch);
  }
  prepares = 0;
  failPrepare = false;
  override async put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ etag: string }> {
    if (this.gate && !isKeptVersionKey(key)) await this.gate;
    return super.put(key, body, options);
  }
  override async prepareCreate(
    key: string,
    body: Uint8Array,
    options?: Parameters<FileStore['prepareCreate']>[2],
  ): Promise<PreparedCreate> {
    this.prepares += 1;
    if (this.failPrepare) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
    return super.prepareCreate(key, body, options);
  }
}

async function open() {
  const root = await mkdtemp(join(tmpdir(), 'memvault-prepared-'));
  roots.push(root);
  const store = new GatedFileStore(root);
  const vault = await createVault({ store, encryption });
  return { root, store, vault };
}

async function versionKeys(store: FileStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const o of listAll(store, 'u/')) if (isKeptVersionKey(o.key)) keys.push(o.key);
  return keys;
}

async function tempFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true }))
    if (entry.name.includes('~tmp')) out.push(entry.name);
  return out;
}

/** The file's history, newest first: 'content' for a version with content, else how the file ended. */
async function endsOf(vault: Awaited<ReturnType<typeof open>>['vault']): Promise<string[]> {
  return (await vault.history('u', '/memories/a.md')).versions.map((v) => v.end ?? 'content');
}

/** The file created, read, then edited by another writer: whatever uses the version read (`stale`) loses its condition. */
async function editedUnderneath({ store, vault }: Awaited<ReturnType<typeof open>>) {
  expect((await vault.run('u', { command: 'create', path: '/memories/a.md', file_text: 'one\n' })).isError).toBe(false);
  const files = await vault.files('u');
  const current = await files.read('/memories/a.md');
  await files.write('/memories/a.md', new TextEncoder().encode('edited elsewhere\n'), { ifMatch: current!.etag });
  return { files, stale: current!.etag, before: await versionKeys(store), prepares: store.prepares };
}

/** Once the work a failed call left running is done: no version was added and no temp file is left. */
async function expectNothingLeft({ root, store }: Awaited<ReturnType<typeof open>>, before: string[]): Promise<void> {
  await settle();
  await store.idle();
  expect(await versionKeys(store)).toEqual(before);
  expect(await tempFiles(root)).toEqual([]);
}

describe('a version prepared beside its write', () => {
  it('is published only once the write has landed', async () => {
    const { store, vault } = await open();
    expect((await vault.run('u', { command: 'create', path: '/memories/a.md', file_text: 'one\n' })).isError).toBe(
      false,
    );
    const before = await versionKeys(store);
    expect(before).toHaveLength(1);
    let release!: () => void;
    store.gate = new Promise<void>((resolve) => (release = resolve));
    const prepares = store.prepares;
    const edited = vault.run('u', { command: 'str_replace', path: '/memories/a.md', old_str: 'one', new_str: 'two' });
    // Prepared while the write is held (the edit reads first: wait for it), and not published.
    for (let i = 0; i < 5000 && store.prepares === prepares; i++)
      await new Promise((resolve) => setTimeout(resolve, 1));
    await settle();
    expect(store.prepares).toBe(prepares + 1);
    expect(await versionKeys(store)).toEqual(before);
    release();
    store.gate = undefined;
    expect((await edited).isError).toBe(false);
    expect(await versionKeys(store)).toHaveLength(2);
    expect(await endsOf(vault)).toEqual(['content', 'content']);
    await vault.close();
  });

  it('is dropped, with its temp file, when the write fails', async () => {
    const opened = await open();
    const { files, stale, before, prepares } = await editedUnderneath(opened);
    // A write against the version read before: it loses its condition.
    await expect(
      files.write('/memories/a.md', new TextEncoder().encode('stale\n'), { ifMatch: stale }),
    ).rejects.toMatchObject({
      name: 'PreconditionFailedError',
    });
    expect(opened.store.prepares).toBe(prepares + 1);
    await expectNothingLeft(opened, before);
    await opened.vault.close();
  });

  it('whose preparation failed is kept by a plain PUT', async () => {
    const { store, vault } = await open();
    store.failPrepare = true;
    expect((await vault.run('u', { command: 'create', path: '/memories/a.md', file_text: 'one\n' })).isError).toBe(
      false,
    );
    expect(
      (await vault.run('u', { command: 'insert', path: '/memories/a.md', insert_line: 1, insert_text: 'two' })).isError,
    ).toBe(false);
    expect(store.prepares).toBe(2);
    expect(await versionKeys(store)).toHaveLength(2);
    await vault.close();
  });
});

describe('a tombstone prepared beside its fence', () => {
  const ends = [
    { end: 'deleted', input: { command: 'delete', path: '/memories/a.md' } },
    { end: 'moved', input: { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md' } },
  ];
  for (const { end, input } of ends) {
    it(`is published only once the file is gone (${input.command})`, async () => {
      const { store, vault } = await open();
      expect((await vault.run('u', { command: 'create', path: '/memories/a.md', file_text: 'one\n' })).isError).toBe(
        false,
      );
      let release!: () => void;
      store.fenceGate = new Promise<void>((resolve) => (release = resolve));
      const prepares = store.prepares;
      const ended = vault.run('u', input);
      // A rename prepares its copy's version first: wait for the tombstone's preparation too.
      const expected = prepares + (input.command === 'rename' ? 2 : 1);
      for (let i = 0; i < 5000 && store.prepares < expected; i++)
        await new Promise((resolve) => setTimeout(resolve, 1));
      await settle();
      expect(store.prepares).toBe(expected);
      // The fence is held: the file is still there, and no tombstone is in its history yet.
      expect(await endsOf(vault)).toEqual(['content']);
      expect((await vault.run('u', { command: 'view', path: '/memories/a.md' })).isError).toBe(false);
      release();
      store.fenceGate = undefined;
      expect((await ended).isError).toBe(false);
      expect(await endsOf(vault)).toEqual([end, 'content']);
      await vault.close();
    });
  }

  it('is dropped, with its temp file, when the fence fails', async () => {
    const opened = await open();
    const { files, stale, before, prepares } = await editedUnderneath(opened);
    // A fence of the version read before: the edit took it away, so the fence loses its condition.
    await expect(files.fence('/memories/a.md', stale, 'deleted', 'delete')).rejects.toMatchObject({
      name: 'PreconditionFailedError',
    });
    expect(opened.store.prepares).toBe(prepares + 1);
    await expectNothingLeft(opened, before);
    expect(await endsOf(opened.vault)).toEqual(['content', 'content']);
    await opened.vault.close();
  });

  it('whose preparation failed is kept by a plain PUT', async () => {
    const { store, vault } = await open();
    expect((await vault.run('u', { command: 'create', path: '/memories/a.md', file_text: 'one\n' })).isError).toBe(
      false,
    );
    store.failPrepare = true;
    const prepares = store.prepares;
    expect((await vault.run('u', { command: 'delete', path: '/memories/a.md' })).isError).toBe(false);
    expect(store.prepares).toBe(prepares + 1);
    expect(await endsOf(vault)).toEqual(['deleted', 'content']);
    await vault.close();
  });
});
