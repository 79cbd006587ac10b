import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault } from '../../src/index.js';
import { FileStore } from '../../src/store/file.js';
import { MemoryStore } from '../../src/store/memory.js';
import { listAll, type ObjectStore } from '../../src/store/port.js';
import { messages } from '../../src/tool/messages.js';

/**
 * A create (and a rename's copy) looks at nothing before its PUT: the created name's check after it
 * (src/vault/names.ts) refuses a directory at the path and a file above it, and takes the write
 * back. What the model and the store see must be what the former look-first refusal gave: the same
 * error, and not one object more or changed in the store (a raw scan, markers and all).
 */
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const stores: Array<[string, () => Promise<ObjectStore>]> = [
  ['memory store', async () => new MemoryStore()],
  [
    'file store',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'memvault-create-refused-'));
      dirs.push(dir);
      return new FileStore(dir);
    },
  ],
];

async function rawState(store: ObjectStore): Promise<string[]> {
  const out: string[] = [];
  for await (const o of listAll(store, '')) out.push(`${o.key} ${o.etag} ${o.size}`);
  return out.sort();
}

describe.each(stores)('a refused create changes nothing (%s)', (_name, makeStore) => {
  it('create on a directory, below a file, and a rename onto a directory: the error, and the store as it was', async () => {
    const store = await makeStore();
    const vault = await createVault({ store, encryption: { masterKey: Buffer.alloc(32, 7).toString('base64') } });
    const u = 'refused-user';
    for (const [path, text] of [
      ['/memories/dir/a.md', 'a\n'],
      ['/memories/file.md', 'f\n'],
      ['/memories/src.md', 's\n'],
    ])
      expect((await vault.run(u, { command: 'create', path, file_text: text })).isError).toBe(false);
    const before = await rawState(store);
    expect(await vault.run(u, { command: 'create', path: '/memories/dir', file_text: 'x\n' })).toMatchObject({
      isError: true,
      content: messages.createOnDirectory('/memories/dir'),
    });
    expect(await vault.run(u, { command: 'create', path: '/memories/file.md/b/c.md', file_text: 'x\n' })).toMatchObject(
      {
        isError: true,
        content: messages.ancestorIsFile('/memories/file.md/b/c.md', '/memories/file.md'),
      },
    );
    expect(
      await vault.run(u, { command: 'rename', old_path: '/memories/src.md', new_path: '/memories/dir' }),
    ).toMatchObject({
      isError: true,
      content: messages.destinationExists('/memories/dir'),
    });
    expect(
      await vault.run(u, { command: 'rename', old_path: '/memories/src.md', new_path: '/memories/file.md/s.md' }),
    ).toMatchObject({
      isError: true,
      content: messages.ancestorIsFile('/memories/file.md/s.md', '/memories/file.md'),
    });
    expect(await rawState(store)).toEqual(before);
    expect(await vault.run(u, { command: 'view', path: '/memories/src.md' })).toMatchObject({
      isError: false,
      content: expect.stringContaining('s') as unknown,
    });
    await vault.close();
  });
});
