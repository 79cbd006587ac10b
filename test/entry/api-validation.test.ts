import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { FileStore } from '../../src/store/file.js';
import { MemoryStore } from '../../src/store/memory.js';
import { runApiValidationSuite } from './api-validation.js';

runApiValidationSuite('memory store', async () => new MemoryStore());

// The directory store (every class of invalid argument is checked there too): a fresh data directory per store.
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
runApiValidationSuite('file store', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'memvault-api-validation-'));
  dirs.push(dir);
  return FileStore.open(dir, { durable: false });
});
