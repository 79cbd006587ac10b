import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll } from 'vitest';
import { MemoryStore } from '../../src/store/memory.js';
import { openStore } from '../../src/store/open.js';
import { verifiedReadSuite } from './verified-read-suite.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

verifiedReadSuite('the memory store', async () => new MemoryStore());
verifiedReadSuite('the file store', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'memvault-verified-read-'));
  dirs.push(dir);
  return openStore(pathToFileURL(join(dir, 'data')).href);
});
