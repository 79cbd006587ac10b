/**
 * Every documented MEMVAULT_* setting works through the real CLI, alone and in
 * the combinations the docs show, and each one is seen to take effect (not merely to not fail).
 * MEMVAULT_TTL_DAYS=1 once made every command fail (the touch interval was a day), and
 * `audit export --user --data-store` failed with the key in MEMVAULT_MASTER_KEY (the first open of
 * the data store deleted the variable). The S3 variables have their own suites
 * (test/cli/s3-settings.test.ts, test/s3/cli-settings.test.ts); MEMVAULT_SWEEP_STOP_MARGIN_SECONDS is
 * the Lambda's (test/lambda/).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ONE_LINE, runCli, type CliResult } from './helpers.js';

// Each case spawns one to four CLI processes (tsx, about 2 s each on a loaded 2-core machine).
vi.setConfig({ testTimeout: 180_000 });

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'memvault-cli-env-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

let dirs = 0;
/** A fresh working directory per case (the default store ./.memvault and its key land there). */
function freshDir(): string {
  const dir = join(root, `case-${++dirs}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

const key = () => randomBytes(32).toString('base64');
const create = (path: string, text: string) => JSON.stringify({ command: 'create', path, file_text: text });
const view = (path: string) => JSON.stringify({ command: 'view', path });
const answers = (r: CliResult) =>
  r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { content: string; is_error: boolean });

/** `memvault exec --user ann` with one command per line; every answer must be a success. */
async function execOk(
  cwd: string,
  env: Record<string, string>,
  lines: string[],
  args: string[] = [],
): Promise<CliResult> {
  const r = await runCli(['exec', '--user', 'ann', ...args], { cwd, env, input: lines.join('\n') });
  expect(r.code, r.stderr).toBe(0);
  for (const answer of answers(r)) expect(answer.is_error, answer.content).toBe(false);
  return r;
}

describe('the store and key settings', () => {
  it('MEMVAULT_STORE alone: the store (and its default key file beside it) is where it says', async () => {
    const cwd = freshDir();
    await execOk(cwd, { MEMVAULT_STORE: `file://${join(cwd, 'data')}` }, [create('/memories/a.md', 'a')]);
    expect(existsSync(join(cwd, 'data'))).toBe(true);
    expect(existsSync(join(cwd, 'data.key'))).toBe(true);
    expect(existsSync(join(cwd, '.memvault'))).toBe(false);
    expect(existsSync(join(cwd, '.memvault.db'))).toBe(false);
  });

  it('MEMVAULT_MASTER_KEY alone and with MEMVAULT_STORE: no key file is made, and another key is refused', async () => {
    const cwd = freshDir();
    const env = { MEMVAULT_MASTER_KEY: key() };
    await execOk(cwd, env, [create('/memories/a.md', 'a')]);
    expect(readdirSync(cwd).filter((name) => !/^\.memvault\.db-(wal|shm)$/.test(name))).toEqual(['.memvault.db']);
    const withStore = { ...env, MEMVAULT_STORE: `file://${join(cwd, 'other')}` };
    const r = await execOk(cwd, withStore, [create('/memories/b.md', 'b'), view('/memories/b.md')]);
    expect(answers(r)[1]!.content).toContain('b');
    expect(existsSync(join(cwd, 'other.key'))).toBe(false);
    const wrong = await runCli(['exec', '--user', 'ann', view('/memories')], {
      cwd,
      env: { MEMVAULT_MASTER_KEY: key() },
    });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/master key does not match this deployment/);
  });

  it('MEMVAULT_MASTER_KEY_FILE (with MEMVAULT_STORE): the key is read from the file', async () => {
    const cwd = freshDir();
    const made = await runCli(['keys', 'create', '--out', join(cwd, 'master.key')], { cwd });
    expect(made.code, made.stderr).toBe(0);
    const env = { MEMVAULT_MASTER_KEY_FILE: join(cwd, 'master.key'), MEMVAULT_STORE: `file://${join(cwd, 'data')}` };
    await execOk(cwd, env, [create('/memories/a.md', 'a')]);
    expect(existsSync(join(cwd, 'data.key'))).toBe(false);
    // The same store with no key configured would read the default file beside it, which does not exist.
    const without = await runCli(['user', 'export', '--user', 'ann', '--out', join(cwd, 'a.tar')], {
      cwd,
      env: { MEMVAULT_STORE: env.MEMVAULT_STORE },
    });
    expect(without.code).toBe(2);
    expect(without.stderr).toMatch(ONE_LINE);
  });

  it('MEMVAULT_KMS_KEY_ID is read: beside MEMVAULT_MASTER_KEY it is refused as a second key source', async () => {
    const cwd = freshDir();
    const r = await runCli(['exec', '--user', 'ann', view('/memories')], {
      cwd,
      env: { MEMVAULT_MASTER_KEY: key(), MEMVAULT_KMS_KEY_ID: 'alias/memvault' },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'memvault: Set only one of MEMVAULT_MASTER_KEY, MEMVAULT_MASTER_KEY_FILE and MEMVAULT_KMS_KEY_ID.\n',
    );
  });

  it('a rotation as docs/encryption.md shows it: keys rotate, then the new key with MEMVAULT_PREVIOUS_MASTER_KEY, then keys verify with the new key alone', async () => {
    const cwd = freshDir();
    const old = key();
    await execOk(cwd, { MEMVAULT_MASTER_KEY: old }, [create('/memories/a.md', 'kept through the rotation')]);
    const newKey = join(cwd, 'new.key');
    const rotated = await runCli(['keys', 'rotate', '--to-master-key-file', newKey], {
      cwd,
      env: { MEMVAULT_MASTER_KEY: old },
    });
    expect(rotated.code, rotated.stderr).toBe(0);
    const during = await execOk(cwd, { MEMVAULT_MASTER_KEY_FILE: newKey, MEMVAULT_PREVIOUS_MASTER_KEY: old }, [
      view('/memories/a.md'),
    ]);
    expect(answers(during)[0]!.content).toContain('kept through the rotation');
    const verified = await runCli(['keys', 'verify'], { cwd, env: { MEMVAULT_MASTER_KEY_FILE: newKey } });
    expect(verified.code, verified.stderr).toBe(0);
  });

  it('MEMVAULT_DEPLOYMENT_FINGERPRINT: the deployment pinned is opened, any other fingerprint is refused', async () => {
    const cwd = freshDir();
    const env = { MEMVAULT_MASTER_KEY: key() };
    const first = await execOk(cwd, env, [create('/memories/a.md', 'a')]);
    const fingerprint = /fingerprint (\S+):/.exec(first.stderr)?.[1];
    expect(fingerprint).toMatch(/^[\w-]+\.[\w-]+$/);
    await execOk(cwd, { ...env, MEMVAULT_DEPLOYMENT_FINGERPRINT: fingerprint! }, [view('/memories/a.md')]);
    // Another fingerprint: its first character changed (never to itself: one run in 64 began with 'x').
    const changed = `${fingerprint!.startsWith('x') ? 'y' : 'x'}${fingerprint!.slice(1)}`;
    const other = await runCli(['exec', '--user', 'ann', view('/memories')], {
      cwd,
      env: { ...env, MEMVAULT_DEPLOYMENT_FINGERPRINT: changed },
    });
    expect(other.code).not.toBe(0);
    expect(other.stderr).toMatch(ONE_LINE);
    expect(other.stdout).toBe('');
  });
});

describe('idle expiry settings', () => {
  it('MEMVAULT_TTL_DAYS=1 alone: exec, user history and keys verify all work', async () => {
    const cwd = freshDir();
    const env = { MEMVAULT_TTL_DAYS: '1', MEMVAULT_MASTER_KEY: key() };
    const r = await execOk(cwd, env, [create('/memories/a.md', 'one day'), view('/memories/a.md')]);
    expect(answers(r)[1]!.content).toContain('one day');
    const history = await runCli(['user', 'history', '--user', 'ann', '--json'], { cwd, env });
    expect(history.code, history.stderr).toBe(0);
    expect((JSON.parse(history.stdout) as { versions: unknown[] }).versions).toHaveLength(1);
    const verify = await runCli(['keys', 'verify'], { cwd, env });
    expect(verify.code, verify.stderr).toBe(0);
  });

  it('MEMVAULT_TOUCH_INTERVAL_HOURS beside MEMVAULT_TTL_DAYS: a shorter interval works, one as long as the TTL is refused naming it', async () => {
    const cwd = freshDir();
    const env = { MEMVAULT_TTL_DAYS: '1', MEMVAULT_MASTER_KEY: key() };
    await execOk(cwd, { ...env, MEMVAULT_TOUCH_INTERVAL_HOURS: '6' }, [create('/memories/a.md', 'a')]);
    for (const hours of ['24', 'soon']) {
      const r = await runCli(['exec', '--user', 'ann', view('/memories')], {
        cwd,
        env: { ...env, MEMVAULT_TOUCH_INTERVAL_HOURS: hours },
      });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(ONE_LINE);
      expect(r.stderr).toContain('MEMVAULT_TOUCH_INTERVAL_HOURS');
    }
  });

  it('the sweeper as docs/expiry.md runs it: MEMVAULT_TTL_DAYS, MEMVAULT_TTL_CLASSES, MEMVAULT_TTL_DEFAULT_CLASS, MEMVAULT_EXPIRE_GRACE_MINUTES, MEMVAULT_CONDITIONAL_DELETE', async () => {
    const cwd = freshDir();
    const env = { MEMVAULT_MASTER_KEY: key(), MEMVAULT_TTL_DAYS: '30', MEMVAULT_TTL_CLASSES: '{"pro":365}' };
    await execOk(cwd, env, [create('/memories/a.md', 'a')]);
    const r = await runCli(['expire', '--dry-run', '--json'], {
      cwd,
      env: {
        ...env,
        MEMVAULT_TTL_DEFAULT_CLASS: 'basic',
        MEMVAULT_EXPIRE_GRACE_MINUTES: '5',
        MEMVAULT_CONDITIONAL_DELETE: 'recheck',
      },
    });
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as { classes: Record<string, number>; graceMinutes: number; scanned: number };
    expect(summary.classes).toEqual({ basic: 30, pro: 365 });
    expect(summary.graceMinutes).toBe(5);
    expect(summary.scanned).toBe(1);
    const bad = await runCli(['expire', '--dry-run'], {
      cwd,
      env: { ...env, MEMVAULT_CONDITIONAL_DELETE: 'sometimes' },
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(ONE_LINE);
  });

  it('MEMVAULT_AUDIT_STORE: a real sweep ships its audit records there', async () => {
    const cwd = freshDir();
    const env = { MEMVAULT_MASTER_KEY: key(), MEMVAULT_TTL_DAYS: '30' };
    await execOk(cwd, env, [create('/memories/a.md', 'a')]);
    const auditStore = join(cwd, 'audit-store');
    const r = await runCli(['expire', '--json'], {
      cwd,
      env: { ...env, MEMVAULT_AUDIT_STORE: `file://${auditStore}` },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(auditStore, { recursive: true }).some((f) => String(f).includes('audit'))).toBe(true);
  });
});

describe('history, audit and log settings', () => {
  it('MEMVAULT_HISTORY=0 keeps no versions; MEMVAULT_HISTORY_VERSIONS=1 (with MEMVAULT_HISTORY_DAYS) makes the sweep drop all but the newest', async () => {
    const cwd = freshDir();
    const env = { MEMVAULT_MASTER_KEY: key() };
    await execOk(cwd, { ...env, MEMVAULT_HISTORY: '0' }, [
      create('/memories/off.md', '1'),
      create('/memories/off.md', '2'),
    ]);
    await execOk(cwd, env, [
      create('/memories/on.md', '1'),
      create('/memories/on.md', '2'),
      create('/memories/on.md', '3'),
    ]);
    const listed = await runCli(['user', 'history', '--user', 'ann', '--json'], { cwd, env });
    const paths = (JSON.parse(listed.stdout) as { versions: Array<{ path: string }> }).versions.map((v) => v.path);
    expect(paths.filter((p) => p === '/memories/off.md')).toEqual([]);
    expect(paths.filter((p) => p === '/memories/on.md')).toHaveLength(3);
    const swept = await runCli(['expire', '--json', '--ttl-days', '30'], {
      cwd,
      env: { ...env, MEMVAULT_HISTORY_VERSIONS: '1', MEMVAULT_HISTORY_DAYS: '30' },
    });
    expect(swept.code, swept.stderr).toBe(0);
    expect((JSON.parse(swept.stdout) as { versionsDropped: number }).versionsDropped).toBe(2);
    const bad = await runCli(['exec', '--user', 'ann', view('/memories')], {
      cwd,
      env: { ...env, MEMVAULT_HISTORY_DAYS: 'a month' },
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('MEMVAULT_HISTORY_DAYS');
  });

  it('MEMVAULT_AUDIT_FILE with MEMVAULT_AUDIT_CHECKPOINT_FILE: records and a checkpoint are written, and audit verify passes with both', async () => {
    const cwd = freshDir();
    const auditFile = join(cwd, 'audit.jsonl');
    const checkpoints = join(cwd, 'checkpoints.jsonl');
    const env = {
      MEMVAULT_MASTER_KEY: key(),
      MEMVAULT_AUDIT_FILE: auditFile,
      MEMVAULT_AUDIT_CHECKPOINT_FILE: checkpoints,
    };
    await execOk(cwd, env, [create('/memories/a.md', 'a'), view('/memories/a.md')]);
    const records = readFileSync(auditFile, 'utf8').trim().split('\n');
    expect(records.filter((l) => l.includes('"type":"command"'))).toHaveLength(2);
    expect(readFileSync(checkpoints, 'utf8')).toContain('"type":"checkpoint"');
    const verified = await runCli(['audit', 'verify', auditFile, '--checkpoints', checkpoints], { cwd, env });
    expect(verified.code, verified.stderr + verified.stdout).toBe(0);
  });

  it('audit export --user --data-store with the key in MEMVAULT_MASTER_KEY (the data store is opened twice in one process)', async () => {
    const cwd = freshDir();
    const auditFile = join(cwd, 'audit.jsonl');
    const data = `file://${join(cwd, 'data')}`;
    const env = { MEMVAULT_MASTER_KEY: key() };
    await execOk(cwd, { ...env, MEMVAULT_AUDIT_FILE: auditFile }, [create('/memories/a.md', 'a')], ['--store', data]);
    const out = join(cwd, 'ann.jsonl');
    const day = new Date().toISOString().slice(0, 10);
    const r = await runCli(
      ['audit', 'export', auditFile, '--user', 'ann', '--data-store', data, '--from', day, '--to', day, '--out', out],
      { cwd, env },
    );
    expect(r.code, r.stderr).toBe(0);
    const exported = readFileSync(out, 'utf8').trim().split('\n');
    expect(exported.some((l) => l.includes('"type":"command"'))).toBe(true);
  });

  it('MEMVAULT_LOG_LEVEL=info logs the vault opening on stderr; an unknown level is a one-line CONFIG error', async () => {
    const cwd = freshDir();
    const env = { MEMVAULT_MASTER_KEY: key() };
    const info = await execOk(cwd, { ...env, MEMVAULT_LOG_LEVEL: 'info' }, [view('/memories')]);
    expect(info.stderr).toContain('memvault vault opened');
    const quiet = await execOk(cwd, env, [view('/memories')]);
    expect(quiet.stderr).not.toContain('memvault vault opened');
    const bad = await runCli(['exec', '--user', 'ann', view('/memories')], {
      cwd,
      env: { ...env, MEMVAULT_LOG_LEVEL: 'chatty' },
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(ONE_LINE);
    expect(bad.stderr).toContain('MEMVAULT_LOG_LEVEL');
  });

  it('MEMVAULT_DEBUG=1 adds the stack trace to a failure; without it the failure is one line', async () => {
    const cwd = freshDir();
    const args = ['user', 'forget', '--user', 'ann', '--store', `file://${join(cwd, 'missing')}`];
    const plain = await runCli(args, { cwd });
    expect(plain.code).toBe(2);
    expect(plain.stderr).toMatch(ONE_LINE);
    const debug = await runCli(args, { cwd, env: { MEMVAULT_DEBUG: '1' } });
    expect(debug.code).toBe(2);
    expect(debug.stderr).toMatch(/\n\s+at /);
  });
});
