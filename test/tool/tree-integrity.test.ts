import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createVault } from '../../src/index.js';
import { FileStore } from '../../src/store/file.js';
import { MemoryStore } from '../../src/store/memory.js';
import { journalPath, RENAME_JOURNAL_TTL_MS } from '../../src/tool/commands/tree.js';
import { snapshot } from '../helpers.js';
import { HookedStore } from '../kit/stores.js';
import { runTreeIntegritySuite } from './tree-integrity.js';

runTreeIntegritySuite('memory store, plain names', async () => new MemoryStore());
const masterKey = randomBytes(32).toString('base64');
runTreeIntegritySuite(
  'encrypted file store',
  async () => FileStore.open(await mkdtemp(join(tmpdir(), 'memvault-tree-'))),
  { encryption: { masterKey } },
);

describe('rename journals expire', () => {
  it('a journal older than its TTL is not resumed: its half-copied destination is an existing one, and nothing is overwritten', async () => {
    const hooked = new HookedStore(new MemoryStore());
    const vault = await createVault({ store: hooked, encryption: { masterKey } });
    const U = 'expiring-user';
    for (const name of ['a.md', 'b.md', 'c.md', 'd.md']) {
      expect(
        (await vault.run(U, { command: 'create', path: `/memories/src/${name}`, file_text: `${name}\n` })).isError,
      ).toBe(false);
    }
    hooked.arm('put', 3); // journal, a copy, then a store error
    expect(
      (await vault.run(U, { command: 'rename', old_path: '/memories/src', new_path: '/memories/dst' })).isError,
    ).toBe(true);
    hooked.disarm();
    // A whole TTL later (the journal's age is its store timestamp against this process's clock).
    const files = await vault.files(U);
    const journal = journalPath('/memories/src');
    expect(await files.read(journal)).not.toBeNull();
    const realNow = Date.now;
    Date.now = () => realNow() + RENAME_JOURNAL_TTL_MS + 120_000;
    try {
      const before = await snapshot(hooked);
      const again = await vault.run(U, { command: 'rename', old_path: '/memories/src', new_path: '/memories/dst' });
      expect(again).toMatchObject({ isError: true, content: 'Error: The destination /memories/dst already exists' });
      expect(await snapshot(hooked)).toEqual(before);
      // Once the user removes the stale copies, the rename runs afresh (and replaces the stale journal).
      expect((await vault.run(U, { command: 'delete', path: '/memories/dst' })).isError).toBe(false);
      expect(
        await vault.run(U, { command: 'rename', old_path: '/memories/src', new_path: '/memories/dst' }),
      ).toMatchObject({ isError: false });
      expect(await files.read(journal)).toBeNull();
      for (const name of ['a.md', 'b.md', 'c.md', 'd.md'])
        expect(Buffer.from((await files.read(`/memories/dst/${name}`))!.data).toString()).toBe(`${name}\n`);
    } finally {
      Date.now = realNow;
    }
    await vault.close();
  });
});
