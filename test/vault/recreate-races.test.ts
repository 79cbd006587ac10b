import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore } from '../../src/store/file.js';
import { MemoryStore } from '../../src/store/memory.js';
import { runRecreateRaceSuite } from './recreate-races.js';

const masterKey = randomBytes(32).toString('base64');
const fileStore = async () => FileStore.open(await mkdtemp(join(tmpdir(), 'memvault-recreate-')));

for (const [kind, deleteExactly] of [
  ['fenced by a marker', false],
  ['fenced by the conditional delete', true],
] as const) {
  runRecreateRaceSuite(`memory store, plain names, ${kind}`, async () => new MemoryStore(), {}, deleteExactly);
  runRecreateRaceSuite(`encrypted file store, ${kind}`, fileStore, { encryption: { masterKey } }, deleteExactly);
}
