/**
 * The history checker (test/kit/history/run.ts) on the embedded file store: several processes, each
 * its own vault on one data directory (no shared in-process locks: the lock files and link(2)
 * decide), killed with SIGKILL at random points. Here a fence is the store's conditional delete
 * under the key's lock (ObjectStore.deleteExactly), not a marker.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runHistoryChecker } from '../kit/history/run.js';

const roots: string[] = [];

runHistoryChecker({
  name: 'the file store',
  url: () => {
    const root = mkdtempSync(join(tmpdir(), 'memvault-history-file-'));
    roots.push(root);
    return pathToFileURL(root).href;
  },
  vaultOptions: {},
  workerEnv: () => ({ ...process.env }),
  cleanup: async () => {
    for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
  },
});
