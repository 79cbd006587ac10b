import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll } from 'vitest';
import { MemoryStore } from '../../src/store/memory.js';
import { openStore } from '../../src/store/open.js';
import { historyAllowanceSuite } from './history-allowance-suite.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

historyAllowanceSuite('the memory store', async () => new MemoryStore());
historyAllowanceSuite('the file store', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'memvault-history-allowance-'));
  dirs.push(dir);
  return openStore(pathToFileURL(join(dir, 'data')).href);
});
