/**
 * Fence markers (src/store/fence.ts) as the vault sees them, on a store like S3 that does not offer
 * `deleteExactly` (the memory store behind the tests' wrapper), plain and encrypted: a marker is
 * never a file (reads, views, listings, directory checks, edits), a create replaces it, and a plain
 * store's empty file (also 0 bytes) is still a file. On a store that offers it (the memory and file
 * stores themselves) the fence is the conditional delete: the last describe block.
 */
import { describe, expect, it } from 'vitest';
import { createVault, type VaultOptions } from '../../src/index.js';
import { isKeptVersionKey, StoreWrapper } from '../kit/stores.js';
import { MemoryStore } from '../../src/store/memory.js';
import { PreconditionFailedError } from '../../src/store/port.js';

const U = 'marker-user';

/** The memory store as S3 is to the vault (no `deleteExactly`), whose DELETEs fail: every marker stays. */
class MarkersStay extends StoreWrapper {
  protected override step(op: string): void {
    if (op === 'delete') throw new Error('the DELETE is refused (a marker clean-up that never ran)');
  }
}
const variants: Array<[string, VaultOptions]> = [
  ['plain', {}],
  ['encrypted', { encryption: { masterKey: Buffer.alloc(32, 7).toString('base64') } }],
];

describe.each(variants)('fence markers (%s)', (_name, options) => {
  async function setup(extra: VaultOptions = {}) {
    const vault = await createVault({ store: new MarkersStay(new MemoryStore()), ...options, ...extra });
    await vault.run(U, { command: 'create', path: '/memories/d/a.md', file_text: 'alpha\n' });
    await vault.run(U, { command: 'create', path: '/memories/d/empty.md', file_text: '' });
    const files = await vault.files(U);
    const a = await files.read('/memories/d/a.md');
    // Settled: the tombstone and the marker's clean-up (refused here), which a command waits for.
    await (
      await files.fence('/memories/d/a.md', a!.etag, 'moved', 'op-1')
    ).settled;
    return { vault, files, a: a! };
  }

  it('a fenced file is gone for reads, views, listings and edits; the inspect call names the marker', async () => {
    const { vault, files } = await setup();
    expect(await files.read('/memories/d/a.md')).toBeNull();
    expect(await files.stat('/memories/d/a.md')).toBeNull();
    expect(await files.inspect('/memories/d/a.md')).toEqual({
      marker: { reason: 'moved', op: 'op-1', etag: expect.any(String) },
    });
    expect((await vault.run(U, { command: 'view', path: '/memories/d/a.md' })).isError).toBe(true);
    expect(
      await vault.run(U, { command: 'str_replace', path: '/memories/d/a.md', old_str: 'alpha', new_str: 'beta' }),
    ).toMatchObject({
      isError: true,
      code: 'NOT_FOUND',
    });
    expect(
      await vault.run(U, { command: 'insert', path: '/memories/d/a.md', insert_line: 0, insert_text: 'x' }),
    ).toMatchObject({
      isError: true,
      code: 'NOT_FOUND',
    });
    const listing = (await vault.run(U, { command: 'view', path: '/memories' })).content as string;
    expect(listing).not.toContain('a.md');
    // The empty file is a file, though it is as long as a marker on a plain store.
    expect(listing).toContain('/memories/d/empty.md');
    const listed: string[] = [];
    for await (const f of files.listFiles('/memories')) listed.push(f.path);
    expect(listed).toEqual(['/memories/d/empty.md']);
    await vault.close();
  });

  it('a directory holding only markers does not exist; the fence loses against a newer version', async () => {
    const { vault, files, a } = await setup();
    const empty = await files.read('/memories/d/empty.md');
    await (
      await files.fence('/memories/d/empty.md', empty!.etag, 'deleted', 'op-2')
    ).settled;
    expect(await files.isDirectory('/memories/d')).toBe(false);
    expect((await vault.run(U, { command: 'view', path: '/memories/d' })).isError).toBe(true);
    // A second fence with the version before the first one is refused by the store.
    await expect(files.fence('/memories/d/a.md', a.etag, 'deleted', 'op-3')).rejects.toBeInstanceOf(
      PreconditionFailedError,
    );
    await vault.close();
  });

  it('a create replaces a marker, also create-only (createMode fail): the path is free', async () => {
    const { vault } = await setup({ createMode: 'fail' });
    expect(await vault.run(U, { command: 'create', path: '/memories/d/a.md', file_text: 'again\n' })).toMatchObject({
      isError: false,
    });
    const view = (await vault.run(U, { command: 'view', path: '/memories/d/a.md' })).content as string;
    expect(view).toContain('again');
    // ... but a live file is still "already exists".
    expect(await vault.run(U, { command: 'create', path: '/memories/d/a.md', file_text: 'third\n' })).toMatchObject({
      isError: true,
      code: 'ALREADY_EXISTS',
    });
    await vault.close();
  });

  it('delete and rename leave no marker behind and no file at the old place', async () => {
    const store = new MemoryStore();
    const vault = await createVault({ store: new StoreWrapper(store), ...options });
    for (const n of ['x', 'y'])
      await vault.run(U, { command: 'create', path: `/memories/s/${n}.md`, file_text: `${n}\n` });
    expect((await vault.run(U, { command: 'rename', old_path: '/memories/s', new_path: '/memories/t' })).isError).toBe(
      false,
    );
    expect((await vault.run(U, { command: 'delete', path: '/memories/t/x.md' })).isError).toBe(false);
    const objects = (await store.list('')).objects;
    // The user's key record (encrypted), t/y.md and the kept versions: no empty marker objects left.
    expect(objects.filter((o) => o.size === 0 && !isKeptVersionKey(o.key)).map((o) => o.key)).toEqual([]);
    // The history's own empty objects are the tombstones (history is on by default): the two files
    // moved away from s/ and the one deleted from t/, each under its own path's versions.
    expect(objects.filter((o) => o.size === 0 && isKeptVersionKey(o.key))).toHaveLength(3);
    const files = await vault.files(U);
    const listed: string[] = [];
    for await (const f of files.listFiles('/memories')) listed.push(f.path);
    expect(listed).toEqual(['/memories/t/y.md']);
    await vault.close();
  });
});
