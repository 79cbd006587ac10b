/**
 * Several processes on one SQLite database file, with the workers of the file store's multi-process
 * tests (test/tool/fixtures): concurrent inserts into one file lose no edit, and a name raced as a
 * file and as a directory by two processes is never both.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault } from '../../src/index.js';

const run = promisify(execFile);
const fixtures = new URL('../tool/fixtures/', import.meta.url);
const insertWorker = fileURLToPath(new URL('insert-worker.ts', fixtures));
const raceWorker = fileURLToPath(new URL('name-race-worker.ts', fixtures));
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

const dirs: string[] = [];
async function storeUrl(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'memvault-sqlite-mp-'));
  dirs.push(dir);
  return `sqlite:${join(dir, 'store.db')}`;
}
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('several processes on one SQLite store', () => {
  it('4 processes x 50 inserts on one file: all 200 lines present', async () => {
    const url = await storeUrl();
    const setup = await createVault({ store: url });
    expect(
      (await setup.run('shared-user', { command: 'create', path: '/memories/log.md', file_text: '' })).isError,
    ).toBe(false);
    await setup.close();
    const tags = ['p0', 'p1', 'p2', 'p3'];
    const outputs = await Promise.all(
      tags.map((tag) => run(tsx, [insertWorker, url, tag, '50'], { timeout: 120_000 })),
    );
    for (const o of outputs) expect(JSON.parse(o.stdout), o.stderr).toEqual({ failures: 0 });
    const check = await createVault({ store: url });
    const file = await (await check.files('shared-user')).read('/memories/log.md');
    const lines = Buffer.from(file!.data).toString('utf8').split('\n').filter(Boolean);
    expect(lines).toHaveLength(200);
    for (const tag of tags) for (let i = 0; i < 50; i++) expect(lines).toContain(`${tag}-${i}`);
    await check.close();
  }, 180_000);

  it('two processes creating a file and a file below it at once: never both', async () => {
    const rounds = 8;
    const url = await storeUrl();
    const setup = await createVault({ store: url });
    await setup.run('race-user', { command: 'view', path: '/memories' });
    await setup.close();
    // Both processes start up (a few seconds under load) before the first round begins.
    const start = Date.now() + 6_000;
    const [file, child] = await Promise.all(
      ['file', 'dir'].map(
        async (role) =>
          JSON.parse(
            (await run(tsx, [raceWorker, url, role, String(rounds), String(start), '150'], { timeout: 120_000 }))
              .stdout,
          ) as boolean[],
      ),
    );
    const check = await createVault({ store: url });
    const files = await check.files('race-user');
    for (let i = 0; i < rounds; i++) {
      expect(file![i] && child![i], `round ${i}: both acknowledged`).toBe(false);
      expect((await files.stat(`/memories/r${i}`)) !== null, `round ${i}`).toBe(file![i]);
      expect(await files.isDirectory(`/memories/r${i}`), `round ${i}`).toBe(child![i]);
    }
    await check.close();
  }, 180_000);
});
