/**
 * On radosgw through the real CLI: an S3 deployment configured only by the
 * environment (MEMVAULT_STORE, MEMVAULT_S3_*, MEMVAULT_HOME, MEMVAULT_CREATE_KEY_FILE, and the
 * idle-expiry variables with MEMVAULT_TTL_DAYS=1). MEMVAULT_CREATE_KEY_FILE took only '1': 'true'
 * was a silent "no"; now 1/true/yes and 0/false/no are read and any other word is refused.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ONE_LINE, runCli } from '../cli/helpers.js';
import {
  emptyStore,
  makeS3Store,
  recordS3SuiteRun,
  s3Available,
  s3Connection,
  s3SkipReason,
  s3Url,
} from './helpers.js';

recordS3SuiteRun(import.meta.url);
vi.setConfig({ testTimeout: 180_000 });

describe.skipIf(!s3Available())(`CLI settings on S3${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`, () => {
  const prefix = `cli-create-key-${randomBytes(3).toString('hex')}`;
  const cwd = mkdtempSync(join(tmpdir(), 'memvault-s3-env-'));
  afterAll(async () => {
    rmSync(cwd, { recursive: true, force: true });
    const store = makeS3Store(prefix);
    await emptyStore(store);
    await store.close();
  });

  const envOf = (home: string, createKeyFile: string): Record<string, string> => {
    const c = s3Connection()!;
    return {
      MEMVAULT_STORE: s3Url(prefix),
      MEMVAULT_S3_ENDPOINT: c.endpoint,
      MEMVAULT_S3_REGION: c.region,
      MEMVAULT_S3_FORCE_PATH_STYLE: 'true',
      MEMVAULT_S3_ACCESS_KEY_ID: c.accessKeyId,
      MEMVAULT_S3_SECRET_ACCESS_KEY: c.secretAccessKey,
      MEMVAULT_HOME: home,
      MEMVAULT_CREATE_KEY_FILE: createKeyFile,
      MEMVAULT_TTL_DAYS: '1',
      MEMVAULT_TOUCH_INTERVAL_HOURS: '2',
    };
  };
  const create = '{"command":"create","path":"/memories/a.md","file_text":"on S3"}';

  it("MEMVAULT_CREATE_KEY_FILE='maybe' is refused and creates nothing; 'true' creates the key under MEMVAULT_HOME and the command works", async () => {
    const home = join(cwd, 'home');
    const refused = await runCli(['exec', '--user', 'ann', create], { cwd, env: envOf(home, 'maybe') });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(ONE_LINE);
    expect(refused.stderr).toContain('MEMVAULT_CREATE_KEY_FILE');
    expect(existsSync(join(home, 'master.key'))).toBe(false);

    const r = await runCli(['exec', '--user', 'ann', create], { cwd, env: envOf(home, 'true') });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ content: 'File created successfully at: /memories/a.md', is_error: false });
    expect(existsSync(join(home, 'master.key'))).toBe(true);

    // The same environment with the opt-in off reads the existing key: the file is there.
    const again = await runCli(['exec', '--user', 'ann', '{"command":"view","path":"/memories/a.md"}'], {
      cwd,
      env: envOf(home, '0'),
    });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('on S3');
  });
});
