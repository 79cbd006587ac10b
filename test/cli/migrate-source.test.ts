/**
 * `memvault migrate` and `memvault user export` only read their source: a version 1 SQLite source
 * is refused (CONFIG, exit 2, the file left byte for byte at version 1) instead of being moved to
 * version 2, and a source that is not there is an error, never created; either way nothing is
 * written at the destination or the output.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { writeVersion1Database } from '../kit/sqlite-v1.js';
import { ONE_LINE, runCli } from './helpers.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function workspace(): Promise<{ dir: string; env: Record<string, string>; v1: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'memvault-migrate-source-'));
  dirs.push(dir);
  const keyFile = join(dir, 'master.key');
  await writeFile(keyFile, randomBytes(32).toString('base64'), { mode: 0o600 });
  const v1 = join(dir, 'v1.db');
  await writeVersion1Database(v1, [['d/deployment', Buffer.from('a record')]]);
  return { dir, env: { MEMVAULT_MASTER_KEY_FILE: keyFile }, v1 };
}

const ONLY_READS =
  /schema version 1, and this command only reads, never moving it to version 2: start the service on it once/;

describe('a version 1 SQLite source is refused, left as it is', () => {
  for (const scope of [[], ['--user', 'alice@example.com']]) {
    it(`migrate ${scope.join(' ') || '(the whole deployment)'}`, async () => {
      const { dir, env, v1 } = await workspace();
      const before = await readFile(v1);
      const to = join(dir, 'to.db');
      const { code, stderr } = await runCli(['migrate', '--from', `sqlite:${v1}`, '--to', `sqlite:${to}`, ...scope], {
        cwd: dir,
        env,
      });
      expect(code).toBe(2);
      expect(stderr).toMatch(ONE_LINE);
      expect(stderr).toMatch(ONLY_READS);
      expect((await readFile(v1)).equals(before)).toBe(true);
      expect(existsSync(to)).toBe(false);
    });
  }

  it('user export', async () => {
    const { dir, env, v1 } = await workspace();
    const before = await readFile(v1);
    const out = join(dir, 'alice.tar');
    const args = ['user', 'export', '--store', `sqlite:${v1}`, '--user', 'alice@example.com', '--out', out];
    const { code, stderr } = await runCli(args, { cwd: dir, env });
    expect(code).toBe(2);
    expect(stderr).toMatch(ONE_LINE);
    expect(stderr).toMatch(ONLY_READS);
    expect((await readFile(v1)).equals(before)).toBe(true);
    expect(existsSync(out)).toBe(false);
  });
});

describe('a source that is not there is an error, never created', () => {
  it('migrate from a missing directory creates neither it nor the destination', async () => {
    const { dir, env } = await workspace();
    const from = join(dir, 'typo');
    const to = join(dir, 'to');
    const { code, stderr } = await runCli(
      ['migrate', '--from', pathToFileURL(from).href, '--to', pathToFileURL(to).href],
      { cwd: dir, env },
    );
    expect(code).toBe(2);
    expect(stderr).toMatch(/there is no store at .*typo: check the store URL\. Nothing was created\./);
    expect(existsSync(from)).toBe(false);
    expect(existsSync(to)).toBe(false);
  });

  it('user export from a missing SQLite file creates no file', async () => {
    const { dir, env } = await workspace();
    const from = join(dir, 'typo.db');
    const out = join(dir, 'alice.tar');
    const args = ['user', 'export', '--store', `sqlite:${from}`, '--user', 'alice@example.com', '--out', out];
    const { code, stderr } = await runCli(args, { cwd: dir, env });
    expect(code).toBe(2);
    expect(stderr).toMatch(/there is no store at/);
    expect(existsSync(from)).toBe(false);
    expect(existsSync(out)).toBe(false);
  });
});
