/**
 * `memvault keys rekey`: --user and --all, --json, progress on stderr, fail-closed exit codes (1
 * while an old key version remains, 2 for usage and unknown users), an audit record.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli, type CliResult } from './helpers.js';

vi.setConfig({ testTimeout: 240_000 });

let cwd: string;
beforeAll(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'memvault-cli-rekey-'));
});
afterAll(async () => {
  await rm(cwd, { recursive: true, force: true });
});

const cli = (args: string[], options: { input?: string; env?: Record<string, string> } = {}): Promise<CliResult> =>
  runCli(args, { cwd, ...options });
const view = (user: string, path: string) => cli(['exec', '--user', user, JSON.stringify({ command: 'view', path })]);

describe('memvault keys rekey', () => {
  it('re-keys one user, then all; exits 1 while an old version remains (--no-wait) and 0 once dropped; audited', async () => {
    for (const user of ['rae', 'sam']) {
      const created = await cli([
        'exec',
        '--user',
        user,
        JSON.stringify({ command: 'create', path: `/memories/${user}.md`, file_text: `${user} data\n` }),
      ]);
      expect(created.code, created.stderr).toBe(0);
    }
    const audit = join(cwd, 'audit.jsonl');

    // Without waiting out the settle time the old version stays: exit 1, saying when to run again.
    const early = await cli([
      'keys',
      'rekey',
      '--user',
      'rae',
      '--no-wait',
      '--json',
      '--audit-file',
      audit,
      '--actor',
      'ticket-42',
    ]);
    expect(early.code, early.stderr).toBe(1);
    const pending = JSON.parse(early.stdout) as Record<string, unknown>;
    // The file and its kept version (history is on by default).
    expect(pending).toMatchObject({ keyVersion: 2, startedVersion: true, resealed: 2, oldVersionsDropped: false });
    expect(typeof pending['settlesAt']).toBe('string');
    expect(early.stderr).toMatch(/key version 2 written/);
    expect(early.stderr).toMatch(/can be dropped after/);
    expect(early.stderr).not.toMatch(/\n\s+at /);
    expect((await view('rae', '/memories/rae.md')).stdout).toContain('rae data');

    // Continuing with a settle time of 0 (no other instance runs) drops it: exit 0, same version.
    const done = await cli(['keys', 'rekey', '--user', 'rae', '--settle-seconds', '0', '--audit-file', audit]);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toMatch(/at key version 2, 0 objects re-sealed, old key versions dropped/);
    expect((await view('rae', '/memories/rae.md')).stdout).toContain('rae data');

    const all = await cli(['keys', 'rekey', '--all', '--settle-seconds', '0', '--json']);
    expect(all.code, all.stderr).toBe(0);
    expect(JSON.parse(all.stdout)).toMatchObject({ users: 2, completed: 2, resealed: 4, failed: 0 });
    for (const user of ['rae', 'sam'])
      expect((await view(user, `/memories/${user}.md`)).stdout).toContain(`${user} data`);
    // --continue after a complete run starts nothing.
    const cont = await cli(['keys', 'rekey', '--all', '--continue', '--settle-seconds', '0', '--json']);
    expect(JSON.parse(cont.stdout)).toMatchObject({ users: 2, completed: 2, resealed: 0 });

    const records = (await readFile(audit, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((r) => r['type'] === 'rekey');
    expect(records).toHaveLength(2);
    expect(records[0]).toMatchObject({
      outcome: 'ok',
      actor: 'ticket-42',
      counts: { keyVersion: 2, resealed: 2, dropped: 0 },
    });
    expect(records[1]).toMatchObject({ outcome: 'ok', counts: { dropped: 1 } });
    expect(JSON.stringify(records)).not.toContain('rae');
  });

  it('usage errors and unknown users exit 2 with one line; nothing is created', async () => {
    const neither = await cli(['keys', 'rekey']);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toMatch(/exactly one of --user <id> and --all/);
    const both = await cli(['keys', 'rekey', '--user', 'rae', '--all']);
    expect(both.code).toBe(2);
    const badSettle = await cli(['keys', 'rekey', '--all', '--settle-seconds', '-1']);
    expect(badSettle.code).toBe(2);
    const unknown = await cli(['keys', 'rekey', '--user', 'nobody-here', '--settle-seconds', '0']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no key record for this user/);
    expect(unknown.stderr).not.toMatch(/\n\s+at /);
    const missing = await cli(['keys', 'rekey', '--all', '--store', `file://${join(cwd, 'no-such-store')}`]);
    expect(missing.code).toBe(2);
  });
});
