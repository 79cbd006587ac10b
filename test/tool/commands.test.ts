import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore } from '../../src/store/file.js';
import { MemoryStore } from '../../src/store/memory.js';
import { runToolSuite } from './suite.js';

runToolSuite('memory store', async () => new MemoryStore());
// The file store runs encrypted, as it does by default in production.
const masterKey = randomBytes(32).toString('base64');
runToolSuite('encrypted file store', async () => FileStore.open(await mkdtemp(join(tmpdir(), 'memvault-suite-'))), {
  encryption: { masterKey },
});
