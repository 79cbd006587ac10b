/**
 * The name race across processes: two processes on one file store create /memories/rN and
 * /memories/rN/y.md at the same moment, round after round. On the old code both won every time;
 * now at most one does, and the store holds exactly what was acknowledged.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { createVault } from '../../src/index.js';

const run = promisify(execFile);
const worker = fileURLToPath(new URL('./fixtures/name-race-worker.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));
const ROUNDS = 12;

it('two processes creating a file and a file below it at once: never both', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'memvault-name-race-'));
  try {
    const url = pathToFileURL(dir).href;
    // The store, its key and the user exist before the processes race.
    const setup = await createVault({ store: url });
    await setup.run('race-user', { command: 'view', path: '/memories' });
    await setup.close();
    // Both processes start up (a few seconds under load) before the first round begins.
    const start = Date.now() + 6_000;
    const [file, child] = await Promise.all(
      ['file', 'dir'].map(
        async (role) =>
          JSON.parse(
            (await run(tsx, [worker, url, role, String(ROUNDS), String(start), '150'], { timeout: 120_000 })).stdout,
          ) as boolean[],
      ),
    );
    const check = await createVault({ store: url });
    const files = await check.files('race-user');
    for (let i = 0; i < ROUNDS; i++) {
      expect(file![i] && child![i], `round ${i}: both acknowledged`).toBe(false);
      const isFile = (await files.stat(`/memories/r${i}`)) !== null;
      const isDirectory = await files.isDirectory(`/memories/r${i}`);
      expect(isFile, `round ${i}`).toBe(file![i]);
      expect(isDirectory, `round ${i}`).toBe(child![i]);
    }
    await check.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
    await rm(`${dir}.key`, { force: true });
  }
}, 180_000);
