import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll } from 'vitest';
import { MemoryStore } from '../../src/store/memory.js';
import { openStore } from '../../src/store/open.js';
import { historySuite } from './history-suite.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

historySuite('the memory store', { make: async () => new MemoryStore() });
historySuite('the file store', {
  make: async () => {
    const dir = await mkdtemp(join(tmpdir(), 'memvault-history-'));
    dirs.push(dir);
    return openStore(pathToFileURL(join(dir, 'data')).href);
  },
});
