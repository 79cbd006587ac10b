/**
 * The path guard's newest refusals (a '%' that starts no escape, read as IIS reads it) through a vault on the directory store: each is the spec's invalid-path error and nothing is
 * written to the data directory; the legitimate names beside them are stored.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault } from '../../src/index.js';
import { FileStore } from '../../src/store/file.js';
import { snapshot } from '../kit/stores.js';

const dir = mkdtempSync(join(tmpdir(), 'memvault-guard-stores-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const refused = [
  '/memories/..%bg%qf../secret.md',
  '/memories/%1u%1u/x.md',
  '/memories/a%1vb.md',
  '/memories/%25bg%25qf.md',
  '/memories/..%c0%af../x.md',
];
const accepted = ['/memories/100%.txt', '/memories/50% off.md', '/memories/%zz.md'];

describe('invalid percent sequences on the directory store', () => {
  it('are refused as invalid paths and write nothing; legitimate names with % are stored', async () => {
    const store = await FileStore.open(dir, { durable: false });
    const vault = await createVault({ store, encryption: { masterKey: Buffer.alloc(32, 5).toString('base64') } });
    try {
      await vault.run('guard', { command: 'create', path: '/memories/keep.md', file_text: 'x' });
      const before = await snapshot(store);
      for (const path of refused) {
        for (const input of [
          { command: 'create', path, file_text: 'x' },
          { command: 'rename', old_path: '/memories/keep.md', new_path: path },
        ]) {
          const result = await vault.run('guard', input);
          expect(result, `${input.command} ${path}`).toMatchObject({ isError: true, code: 'INVALID_PATH' });
          expect(String(result.content)).toMatch(/^Error: Invalid path/);
        }
      }
      expect(await snapshot(store)).toEqual(before);
      for (const path of accepted)
        expect(await vault.run('guard', { command: 'create', path, file_text: 'ok' }), path).toMatchObject({
          isError: false,
        });
    } finally {
      await vault.close();
    }
  });
});
