/**
 * `memvault keys create --out FILE`: the key an S3 deployment is told to make (no key is created
 * silently under the home directory for S3 stores). A new 0600 file of 32 random bytes; an
 * existing file is never replaced; no --out is a usage error.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ONE_LINE, runCli } from './helpers.js';

vi.setConfig({ testTimeout: 180_000 });

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'memvault-keys-create-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('memvault keys create', () => {
  it('writes a new 0600 key of 32 random bytes, and never replaces an existing file', async () => {
    const file = join(dir, 'sub', 'master.key');
    const made = await runCli(['keys', 'create', '--out', file], { cwd: dir });
    expect(made.code).toBe(0);
    expect(made.stdout).toContain('MEMVAULT_MASTER_KEY_FILE');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const key = readFileSync(file, 'utf8').trim();
    expect(Buffer.from(key, 'base64')).toHaveLength(32);

    const again = await runCli(['keys', 'create', '--out', file], { cwd: dir });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(ONE_LINE);
    expect(again.stderr).toContain('already exists');
    expect(readFileSync(file, 'utf8').trim()).toBe(key);

    const other = join(dir, 'other.key');
    writeFileSync(other, 'not a key\n');
    expect((await runCli(['keys', 'create', '--out', other], { cwd: dir })).code).toBe(2);
    expect(readFileSync(other, 'utf8')).toBe('not a key\n');
  });

  it('without --out is a usage error', async () => {
    const result = await runCli(['keys', 'create'], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--out');
  });
});
