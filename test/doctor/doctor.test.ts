/**
 * Doctor fails closed (a required check that could not be made is a failure,
 * with its real cause) and checks the file store too.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerDoctor } from '../../src/cli/commands/doctor.js';
import { createVault } from '../../src/index.js';
import { FileStore } from '../../src/store/file.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'memvault-doctor-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function doctor(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ out: string; err: string; code: number | undefined }> {
  let out = '';
  let err = '';
  let code: number | undefined;
  const program = new Command().exitOverride();
  registerDoctor(program, {
    env,
    stdout: (s) => void (out += s),
    stderr: (s) => void (err += s),
    setExitCode: (c) => void (code = c),
  });
  await program.parseAsync(['node', 'memvault', 'doctor', ...args]);
  return { out, err, code };
}

describe('doctor against an S3 endpoint that does not answer', () => {
  it('exits 1 naming the cause (connection refused) for every required check, never "nothing is missing"', async () => {
    const env = {
      MEMVAULT_S3_ENDPOINT: 'http://127.0.0.1:9',
      MEMVAULT_S3_REGION: 'us-east-1',
      MEMVAULT_S3_ACCESS_KEY_ID: 'x',
      MEMVAULT_S3_SECRET_ACCESS_KEY: 'y',
    };
    const r = await doctor(['--store', 's3://nobucket/p', '--json'], env);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.out) as {
      ok: boolean;
      checks: Array<{ id: string; status: string; required: boolean; detail: string }>;
    };
    expect(report.ok).toBe(false);
    const required = report.checks.filter((c) => c.required);
    expect(required.length).toBeGreaterThan(3);
    for (const check of required) {
      expect(check.status, check.id).toBe('unknown');
      expect(check.detail, check.id).toMatch(/connection refused \(ECONNREFUSED\)/);
    }
    const human = await doctor(['--store', 's3://nobucket/p', '--no-probes'], env);
    expect(human.code).toBe(1);
    expect(human.out).toMatch(
      /memvault doctor: FAILED: \d+ required check\(s\) could not be made \(.*connection refused \(ECONNREFUSED\)/,
    );
    expect(human.out).not.toMatch(/failed: Error|nothing required is missing/);
  }, 60_000);
});

describe('doctor on a file store', () => {
  const KEY = Buffer.alloc(32, 3).toString('base64');

  async function deployment(): Promise<{ store: string; url: string; keyFile: string }> {
    const store = join(dir, 'data');
    const url = pathToFileURL(store).href;
    const keyFile = `${store}.key`;
    const saved = { key: process.env['MEMVAULT_MASTER_KEY'], file: process.env['MEMVAULT_MASTER_KEY_FILE'] };
    delete process.env['MEMVAULT_MASTER_KEY'];
    delete process.env['MEMVAULT_MASTER_KEY_FILE'];
    try {
      const vault = await createVault({ store: url }); // creates <dir>.key, the embedded default
      await vault.run('ann', { command: 'create', path: '/memories/a.md', file_text: 'x' });
      await vault.close();
    } finally {
      if (saved.key !== undefined) process.env['MEMVAULT_MASTER_KEY'] = saved.key;
      if (saved.file !== undefined) process.env['MEMVAULT_MASTER_KEY_FILE'] = saved.file;
    }
    return { store, url, keyFile };
  }

  it('a healthy deployment passes every required check', async () => {
    const { url } = await deployment();
    const r = await doctor(['--store', url], {});
    expect(r.out).toMatch(/\[ok {5}\] Store directory/);
    expect(r.out).toMatch(/\[ok {5}\] Master key file: .*data\.key, mode 0600/);
    expect(r.out).toMatch(/\[ok {5}\] Deployment record \(k\/_deployment\): opens with the configured key/);
    expect(r.out).toMatch(/every required check passed/);
    expect(r.code).toBe(0);
  });

  it('reports a readable key file, an open store directory, a wrong key, stale locks: exit 1', async () => {
    const { store, url, keyFile } = await deployment();
    chmodSync(keyFile, 0o644);
    chmodSync(store, 0o755);
    const lock = join(store, 'k', 'stale~lock');
    mkdirSync(join(store, 'k'), { recursive: true });
    writeFileSync(lock, '{}');
    utimesSync(lock, new Date(Date.now() - 3600_000), new Date(Date.now() - 3600_000));
    const r = await doctor(['--store', url], {});
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/\[MISSING\] Master key file: .* has mode 0644: other users can read it/);
    expect(r.out).toMatch(/fix: chmod 600 /);
    expect(r.out).toMatch(/\[MISSING\] Store directory: .* has mode 0755/);
    expect(r.out).toMatch(/\[warn {3}\] Stale locks and temp files: 1 lock file\(s\)/);
    chmodSync(keyFile, 0o600);
    const wrong = await doctor(['--store', url], { MEMVAULT_MASTER_KEY: KEY });
    expect(wrong.out).toMatch(
      /\[MISSING\] Deployment record \(k\/_deployment\): The configured master key does not match this deployment/,
    );
    expect(wrong.code).toBe(1);
  });

  it('a missing key file, a lost deployment record, a mistyped store: failures, and nothing is created', async () => {
    const { store, url, keyFile } = await deployment();
    rmSync(keyFile);
    const noKey = await doctor(['--store', url], {});
    expect(noKey.code).toBe(1);
    expect(noKey.out).toMatch(/\[MISSING\] Master key file: .* does not exist/);
    expect(() => rmSync(keyFile)).toThrow(); // doctor did not create a key
    const raw = await FileStore.open(store);
    await raw.delete('k/_deployment');
    await raw.close();
    const lost = await doctor(['--store', url], { MEMVAULT_MASTER_KEY: KEY });
    expect(lost.out).toMatch(/holds user data but no deployment record/);
    const typo = await doctor(['--store', pathToFileURL(join(dir, 'typo')).href], { MEMVAULT_MASTER_KEY: KEY });
    expect(typo.code).toBe(1);
    expect(typo.out).toMatch(/typo does not exist/);
    expect(() => rmSync(join(dir, 'typo'))).toThrow();
  });
});
