import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore } from '../../src/store/file.js';
import { MemoryStore } from '../../src/store/memory.js';
import { runIntegrityRaceSuite } from './integrity-races.js';

const masterKey = randomBytes(32).toString('base64');

runIntegrityRaceSuite('memory store, plain names', async () => new MemoryStore());
runIntegrityRaceSuite(
  'encrypted file store',
  async () => FileStore.open(await mkdtemp(join(tmpdir(), 'memvault-integrity-races-'))),
  {
    encryption: { masterKey },
  },
);
