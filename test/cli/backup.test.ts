/**
 * `memvault backup --out FILE` never replaces a file it did not write: the look before the copy is
 * not enough (VACUUM INTO takes long), so the finished copy is published with link(2), which fails
 * when a file appeared at FILE meanwhile. That file is left as it was, the copy removed, and the
 * command answers a usage error saying so. And backup only reads: a store that would need a write
 * first (an older schema) is refused, never upgraded. (The end-to-end backup is in migrate.test.ts.)
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { registerBackup } from '../../src/cli/commands/backup.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { tempDir } from '../kit/temp.js';
import { writeVersion1Database } from '../kit/sqlite-v1.js';

let cleanup: (() => void) | undefined;
afterEach(() => {
  vi.restoreAllMocks();
  cleanup?.();
  cleanup = undefined;
});

async function runBackup(args: string[]): Promise<{ code: number | undefined; stderr: string }> {
  let stderr = '';
  let code: number | undefined;
  vi.spyOn(process, 'exit').mockImplementation(((exitCode?: number) => {
    code = exitCode;
    throw new Error(`exit ${exitCode}`);
  }) as never);
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  vi.spyOn(process.stderr, 'write').mockImplementation((text) => {
    stderr += String(text);
    return true;
  });
  const program = new Command();
  program.exitOverride();
  registerBackup(program);
  await program.parseAsync(['node', 'memvault', 'backup', ...args]).catch(() => undefined);
  return { code, stderr };
}

describe('memvault backup: the copy is published without replacing anything', () => {
  it('leaves a file that appeared at --out while the copy ran as it was, removes the copy and says so', async () => {
    const t = tempDir('memvault-backup');
    cleanup = t.cleanup;
    const db = join(t.dir, 'store.db');
    const seed = await SqliteStore.open(db);
    await seed.put('a', new Uint8Array([1, 2, 3]));
    await seed.close();
    const out = join(t.dir, 'copy.db');
    const original = SqliteStore.prototype.backupTo;
    vi.spyOn(SqliteStore.prototype, 'backupTo').mockImplementation(async function (this: SqliteStore, path: string) {
      // While the VACUUM INTO runs, someone (another backup, an operator) writes a file at --out.
      await writeFile(out, 'precious, not ours');
      return original.call(this, path);
    });
    const { code, stderr } = await runBackup(['--store', `sqlite:${db}`, '--out', out]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/copy\.db appeared while the copy was made: it was left as it is and the copy removed/);
    expect(await readFile(out, 'utf8')).toBe('precious, not ours');
    expect((await readdir(t.dir)).filter((name) => name.endsWith('.partial'))).toEqual([]);
  });

  it('publishes the copy when the name stays free, with no temporary left beside it', async () => {
    const t = tempDir('memvault-backup');
    cleanup = t.cleanup;
    const db = join(t.dir, 'store.db');
    const seed = await SqliteStore.open(db);
    await seed.put('a', new Uint8Array([1, 2, 3]));
    await seed.close();
    const out = join(t.dir, 'copy.db');
    const { code } = await runBackup(['--store', `sqlite:${db}`, '--out', out]);
    expect(code).toBeUndefined();
    expect((await readdir(t.dir)).filter((name) => name.startsWith('copy.db')).sort()).toEqual(['copy.db']);
    const copy = await SqliteStore.open(out, { create: false });
    expect(Array.from((await copy.get('a'))!.body)).toEqual([1, 2, 3]);
    await copy.close();
  });

  it('refuses a version 1 store (CONFIG, exit 2), leaving it at version 1 and writing no copy', async () => {
    const t = tempDir('memvault-backup');
    cleanup = t.cleanup;
    const db = join(t.dir, 'v1.db');
    await writeVersion1Database(db);
    const before = await readFile(db);
    const out = join(t.dir, 'copy.db');
    const { code, stderr } = await runBackup(['--store', `sqlite:${db}`, '--out', out]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/schema version 1, and this command only reads/);
    expect((await readFile(db)).equals(before)).toBe(true);
    expect(existsSync(out)).toBe(false);
  });
});
