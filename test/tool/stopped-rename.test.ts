import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll } from 'vitest';
import { openStore } from '../../src/store/open.js';
import { runStoppedRenameSuite } from './stopped-rename.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

runStoppedRenameSuite('file store', {
  deleteExactly: true,
  open: async () => {
    const dir = await mkdtemp(join(tmpdir(), 'memvault-stopped-'));
    dirs.push(dir);
    const url = pathToFileURL(dir).href;
    return { store: await openStore(url), url };
  },
});
