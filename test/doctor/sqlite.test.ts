/**
 * doctor on a SQLite store: a healthy deployment passes (WAL, schema, quick_check, durability,
 * free disk, key file, deployment record); a missing file, another program's database and a damaged
 * one fail (exit 1), and doctor creates nothing it was asked to check. A database of an older
 * schema is reported and left at its version: the deployment check, which would need it moved, is
 * not made (the service moves it when it next opens it).
 */
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync, closeSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerDoctor } from '../../src/cli/commands/doctor.js';
import { createVault } from '../../src/index.js';
import { writeVersion1Database } from '../kit/sqlite-v1.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'memvault-doctor-sqlite-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function doctor(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ out: string; code: number | undefined }> {
  let out = '';
  let code: number | undefined;
  const program = new Command().exitOverride();
  registerDoctor(program, {
    env,
    stdout: (s) => void (out += s),
    stderr: (s) => void (out += s),
    setExitCode: (c) => void (code = c),
  });
  await program.parseAsync(['node', 'memvault', 'doctor', ...args]);
  return { out, code };
}

const KEY = Buffer.alloc(32, 5).toString('base64');

/** A deployment with a few files, its vault closed (the WAL checkpointed into the database). */
async function deployment(files = 3): Promise<{ path: string; url: string }> {
  const path = join(dir, 'm.db');
  const url = `sqlite:${path}`;
  const vault = await createVault({ store: url, encryption: { masterKey: KEY } });
  for (let i = 0; i < files; i++)
    await vault.run('ann', { command: 'create', path: `/memories/f${i}.md`, file_text: `file ${i}\n`.repeat(600) });
  await vault.close();
  return { path, url };
}

describe('doctor on a SQLite store', () => {
  it('a healthy deployment passes every required check; durability=normal is a warning only', async () => {
    const { url } = await deployment();
    const r = await doctor(['--store', url], { MEMVAULT_MASTER_KEY: KEY });
    for (const line of [
      /\[ok {5}\] Database file: .*m\.db, owner only/,
      /\[ok {5}\] Durability: full/,
      /\[ok {5}\] Busy timeout: 15 s/,
      /\[ok {5}\] Schema: version 2/,
      /\[ok {5}\] Journal mode: WAL/,
      /\[ok {5}\] Integrity \(quick_check\): ok/,
      /\[ok {5}\] Free disk: \d+ MiB/,
      /\[ok {5}\] Master key: from MEMVAULT_MASTER_KEY/,
      /\[ok {5}\] Deployment record \(k\/_deployment\): opens with the configured key/,
      /every required check passed/,
    ])
      expect(r.out).toMatch(line);
    expect(r.code).toBe(0);
    const normal = await doctor(['--store', `${url}?durability=normal`, '--json'], { MEMVAULT_MASTER_KEY: KEY });
    const report = JSON.parse(normal.out) as { ok: boolean; checks: Array<{ id: string; status: string }> };
    expect(report.ok).toBe(true);
    expect(report.checks.find((c) => c.id === 'durability')?.status).toBe('warn');
    const wrongKey = await doctor(['--store', url], { MEMVAULT_MASTER_KEY: Buffer.alloc(32, 6).toString('base64') });
    expect(wrongKey.out).toMatch(/\[MISSING\] Deployment record .*does not match/);
    expect(wrongKey.code).toBe(1);
  });

  it('a mistyped path, another program’s database, an open mode: failures, and nothing is created', async () => {
    const typo = join(dir, 'typo.db');
    const missing = await doctor(['--store', `sqlite:${typo}`], { MEMVAULT_MASTER_KEY: KEY });
    expect(missing.code).toBe(1);
    expect(missing.out).toMatch(/\[MISSING\] Database file: .*typo\.db does not exist/);
    expect(missing.out).toMatch(/\[unknown\] Deployment record .*could not check/);
    expect([typo, `${typo}-wal`, `${typo}-shm`].filter((p) => existsSync(p))).toEqual([]);

    const other = join(dir, 'other.db');
    const { DatabaseSync } = await import('node:sqlite');
    const db = new DatabaseSync(other);
    db.exec('CREATE TABLE t (x)');
    db.close();
    chmodSync(other, 0o600);
    const foreign = await doctor(['--store', `sqlite:${other}`], { MEMVAULT_MASTER_KEY: KEY });
    expect(foreign.out).toMatch(/\[MISSING\] Schema: the file is not a memvault store/);
    expect(foreign.code).toBe(1);

    const { path, url } = await deployment(1);
    chmodSync(path, 0o644);
    const open = await doctor(['--store', url], { MEMVAULT_MASTER_KEY: KEY });
    expect(open.out).toMatch(/\[MISSING\] Database file: .* has mode 0644: other users can read it/);
    expect(open.code).toBe(1);
  });

  it('a damaged database fails closed (quick_check, or it cannot be read at all), never passes', async () => {
    const { path, url } = await deployment(40);
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(4096 * 3, 0xa5), 0, 4096 * 3, 4096 * 2); // pages 3 to 5: the tree's pages
    closeSync(fd);
    const r = await doctor(['--store', url, '--json'], { MEMVAULT_MASTER_KEY: KEY });
    const report = JSON.parse(r.out) as { ok: boolean; checks: Array<{ id: string; status: string; detail: string }> };
    expect(report.ok).toBe(false);
    expect(r.code).toBe(1);
    const failed = report.checks.filter((c) => c.status === 'missing' || c.status === 'unknown').map((c) => c.id);
    expect(failed.some((id) => id === 'integrity' || id === 'database')).toBe(true);
    for (const check of report.checks.filter((c) => c.id === 'integrity' || c.id === 'database'))
      expect(check.detail).not.toContain(dir); // counts and codes, never a path or SQLite's text
  });

  it('reports a version 1 database and leaves it at version 1, byte for byte (the deployment is not checked)', async () => {
    const path = join(dir, 'v1.db');
    await writeVersion1Database(path, [['a/1', Buffer.from('one')]]);
    chmodSync(path, 0o600);
    const before = readFileSync(path);
    const r = await doctor(['--store', `sqlite:${path}`, '--json'], { MEMVAULT_MASTER_KEY: KEY });
    const report = JSON.parse(r.out) as {
      checks: Array<{ id: string; status: string; detail: string; fix?: string }>;
    };
    const check = (id: string) => report.checks.find((c) => c.id === id);
    expect(check('schema')).toMatchObject({
      status: 'warn',
      detail: expect.stringMatching(/^version 1: the service moves it to version 2/),
      fix: expect.stringMatching(/memvault serve/),
    });
    expect(check('deployment')).toMatchObject({
      status: 'unknown',
      detail: expect.stringMatching(/doctor never migrates it/),
    });
    expect(r.code).toBe(1);
    const { DatabaseSync } = await import('node:sqlite');
    const probe = new DatabaseSync(path, { readOnly: true });
    expect(probe.prepare('PRAGMA user_version').get()).toEqual({ user_version: 1 });
    probe.close();
    expect(readFileSync(path).equals(before)).toBe(true);
  });
});
