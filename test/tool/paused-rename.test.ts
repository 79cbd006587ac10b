import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { FileStore } from '../../src/store/file.js';
import { MemoryStore } from '../../src/store/memory.js';
import { runPausedRenameSuite } from './paused-rename.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

runPausedRenameSuite([
  { name: 'memory store fenced by markers (as S3)', make: async () => new MemoryStore(), deleteExactly: false },
  { name: 'memory store fenced by the conditional delete', make: async () => new MemoryStore(), deleteExactly: true },
  {
    name: 'file store',
    make: async () => {
      const dir = await mkdtemp(join(tmpdir(), 'memvault-paused-'));
      dirs.push(dir);
      return new FileStore(dir);
    },
    deleteExactly: true,
  },
]);
