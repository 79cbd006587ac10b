import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createVault } from '../../src/index.js';

const run = promisify(execFile);
const worker = fileURLToPath(new URL('./fixtures/insert-worker.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

describe('several processes on one file store', () => {
  it('4 processes x 100 inserts on one file: all 400 lines present', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'memvault-mp-'));
    try {
      const url = pathToFileURL(dir).href;
      const setup = await createVault({ store: url });
      expect(
        (await setup.run('shared-user', { command: 'create', path: '/memories/log.md', file_text: '' })).isError,
      ).toBe(false);
      await setup.close();
      const outputs = await Promise.all(
        ['p0', 'p1', 'p2', 'p3'].map((tag) => run(tsx, [worker, url, tag, '100'], { timeout: 120_000 })),
      );
      for (const o of outputs) expect(JSON.parse(o.stdout), o.stderr).toEqual({ failures: 0 });
      const check = await createVault({ store: url });
      const file = await (await check.files('shared-user')).read('/memories/log.md');
      const lines = Buffer.from(file!.data).toString('utf8').split('\n').filter(Boolean);
      expect(lines).toHaveLength(400);
      for (const tag of ['p0', 'p1', 'p2', 'p3']) for (let i = 0; i < 100; i++) expect(lines).toContain(`${tag}-${i}`);
      await check.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
