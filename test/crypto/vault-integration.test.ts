/**
 * The encrypted codec plugged into the vault: the six memory commands behave as with the plain
 * codec, and raw storage holds none of the planted user ids, names or texts.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import { createEncryptedCodecProvider } from '../../src/crypto/codec.js';
import { exportUser } from '../../src/lifecycle/export-archive.js';
import { createVault } from '../../src/memvault.js';
import { MemoryStore } from '../../src/store/memory.js';
import { localProvider } from './helpers.js';
import { storedText } from '../kit/stores.js';
import { PassThrough } from 'node:stream';

describe('vault with the encrypted codec', () => {
  it('runs the memory commands and leaves nothing readable in the store', async () => {
    const store = new MemoryStore();
    const codec = await createEncryptedCodecProvider({ store, keyProvider: await localProvider() });
    const vault = await createVault({ store, codec });
    const user = 'PLANTUSER-7f3@example.com';
    const run = async (input: Record<string, unknown>) => {
      const result = await vault.run(user, input);
      return { isError: result.isError, text: JSON.stringify(result.content) };
    };

    expect(
      (
        await run({
          command: 'create',
          path: '/memories/PLANTDIR/PLANTFILE.md',
          file_text: 'line PLANTTEXT one\nline two\n',
        })
      ).isError,
    ).toBe(false);
    expect(
      (
        await run({
          command: 'str_replace',
          path: '/memories/PLANTDIR/PLANTFILE.md',
          old_str: 'line two',
          new_str: 'line PLANTEDIT',
        })
      ).isError,
    ).toBe(false);
    expect(
      (
        await run({
          command: 'insert',
          path: '/memories/PLANTDIR/PLANTFILE.md',
          insert_line: 0,
          insert_text: 'PLANTINSERT',
        })
      ).isError,
    ).toBe(false);
    expect((await run({ command: 'create', path: '/memories/PLANTDIR/second.md', file_text: 'x' })).isError).toBe(
      false,
    );
    expect(
      (await run({ command: 'rename', old_path: '/memories/PLANTDIR', new_path: '/memories/PLANTMOVED' })).isError,
    ).toBe(false);
    const view = await run({ command: 'view', path: '/memories/PLANTMOVED/PLANTFILE.md' });
    expect(view.isError).toBe(false);
    expect(view.text).toContain('PLANTTEXT');
    expect(view.text).toContain('PLANTEDIT');
    const listing = await run({ command: 'view', path: '/memories' });
    expect(listing.text).toContain('PLANTMOVED/PLANTFILE.md');
    expect((await run({ command: 'delete', path: '/memories/PLANTMOVED/second.md' })).isError).toBe(false);

    const haystack = await storedText(store);
    for (const needle of [
      'PLANTUSER',
      'PLANTDIR',
      'PLANTFILE',
      'PLANTTEXT',
      'PLANTEDIT',
      'PLANTINSERT',
      'PLANTMOVED',
      'second',
    ]) {
      expect(haystack).not.toContain(needle);
    }

    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    const exported = await exportUser({ store, codecProvider: codec, userId: user, out });
    expect(exported.files).toBe(1);
    expect(Buffer.concat(chunks).toString('latin1')).toContain('memories/PLANTMOVED/PLANTFILE.md');
    await vault.close();
  });

  it('through the file store: no planted string in any file name or byte under the data directory', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'memvault-crypto-file-'));
    try {
      const store = await openStore(`file://${dir}`);
      const codec = await createEncryptedCodecProvider({ store, keyProvider: await localProvider() });
      const vault = await createVault({ store, codec });
      const user = 'FPLANTUSER@example.com';
      for (let i = 0; i < 3; i++) {
        const result = await vault.run(user, {
          command: 'create',
          path: `/memories/FPLANTDIR/FPLANTFILE${i}.md`,
          file_text: `FPLANTTEXT ${i}\n`,
        });
        expect(result.isError).toBe(false);
      }
      const seen = await vault.run(user, { command: 'view', path: '/memories/FPLANTDIR/FPLANTFILE2.md' });
      expect(JSON.stringify(seen.content)).toContain('FPLANTTEXT 2');
      await vault.close();

      const haystack: string[] = [];
      const walk = async (at: string): Promise<void> => {
        for (const entry of await readdir(at, { withFileTypes: true })) {
          const full = path.join(at, entry.name);
          haystack.push(entry.name);
          if (entry.isDirectory()) await walk(full);
          else if (entry.isFile()) haystack.push((await readFile(full)).toString('latin1'));
        }
      };
      await walk(dir);
      expect(haystack.length).toBeGreaterThan(3);
      const all = haystack.join('\n');
      for (const needle of ['FPLANTUSER', 'FPLANTDIR', 'FPLANTFILE', 'FPLANTTEXT']) expect(all).not.toContain(needle);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
