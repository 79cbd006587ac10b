import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite.js';
import { runStoreContract } from './contract.js';

const sandboxes: string[] = [];
async function sandbox(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'memvault-sqlite-store-'));
  sandboxes.push(dir);
  return dir;
}
afterAll(async () => {
  for (const dir of sandboxes) await rm(dir, { recursive: true, force: true });
});

runStoreContract('sqlite', async () => {
  const dir = await sandbox();
  return {
    store: await SqliteStore.open(join(dir, 'store.db')),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});
