/**
 * The library never changes process.env. createVault with fromEnv(), the CLI's store opening
 * (cli/store.ts, twice in one process as `audit export --user --data-store` does) and the CLI's vault
 * read every setting from the environment and leave it exactly as it was. (This file sets
 * process.env; vitest runs each test file in a process of its own.)
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStoreWithEncryption } from '../../src/cli/store.js';
import { openCliVault } from '../../src/cli/vault.js';
import { fromEnv } from '../../src/config/from-env.js';
import { createVault } from '../../src/memvault.js';

let dir: string;
const saved = { ...process.env };
const settings = {
  MEMVAULT_MASTER_KEY: randomBytes(32).toString('base64'),
  MEMVAULT_PREVIOUS_MASTER_KEY: randomBytes(32).toString('base64'),
  MEMVAULT_TTL_DAYS: '1',
  MEMVAULT_TOUCH_INTERVAL_HOURS: '6',
  MEMVAULT_HISTORY_VERSIONS: '5',
  MEMVAULT_LOG_LEVEL: 'silent',
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'memvault-env-'));
  for (const k of Object.keys(process.env)) if (k.startsWith('MEMVAULT_')) delete process.env[k];
  Object.assign(process.env, settings);
});
afterAll(() => {
  process.env = saved;
  rmSync(dir, { recursive: true, force: true });
});

describe('process.env is read, never changed', () => {
  it('createVault (keys from the environment), then the CLI opening the same store twice and its vault', async () => {
    const before = { ...process.env };
    const url = `file://${join(dir, 'store')}`;
    const vault = await createVault({ store: url, ...fromEnv() });
    expect((await vault.run('ann', { command: 'create', path: '/memories/a.md', file_text: 'a' })).isError).toBe(false);
    await vault.close();
    expect(process.env).toEqual(before);

    // audit export --user --data-store: the audit key, then the user's pseudonym, each a fresh open.
    for (let i = 0; i < 2; i++) {
      const opened = await openStoreWithEncryption(url);
      expect(opened.encryption.keyProvider.keyId).toMatch(/\S/);
      await opened.close();
    }
    expect(process.env).toEqual(before);

    const cliVault = await openCliVault({ store: url });
    const read = await cliVault.run('ann', { command: 'view', path: '/memories/a.md' });
    expect(read.isError, JSON.stringify(read.content)).toBe(false);
    await cliVault.close();
    expect(process.env).toEqual(before);
    expect(process.env['MEMVAULT_MASTER_KEY']).toBe(settings.MEMVAULT_MASTER_KEY);
  });
});
