/** memvault user history / restore / drop-version (docs/versions.md): JSON, dry run, audit records, fail-closed exits. */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createVault } from '../../src/index.js';
import { ONE_LINE, runCli } from './helpers.js';

vi.setConfig({ testTimeout: 240_000 });

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'memvault-history-cli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const KEY = randomBytes(32).toString('base64');
const env = { MEMVAULT_MASTER_KEY: KEY, MEMVAULT_HISTORY: '1' };

describe('memvault user history / restore', () => {
  it('lists versions, restores as of a time (dry run first), drops a version; each run is audited; a user without keys is an error, never created', async () => {
    const cwd = await mkdtemp(join(dir, 'cli-'));
    const store = pathToFileURL(join(cwd, 'data')).href;
    const auditFile = join(cwd, 'audit.jsonl');
    const exec = (input: object) =>
      runCli(['exec', '--user', 'ann', '--store', store, JSON.stringify(input)], { cwd, env });
    expect((await exec({ command: 'create', path: '/memories/plan.md', file_text: 'good plan\n' })).code).toBe(0);
    await new Promise((r) => setTimeout(r, 1100));
    const asOf = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 1100));
    expect(
      (await exec({ command: 'str_replace', path: '/memories/plan.md', old_str: 'good', new_str: 'bad' })).code,
    ).toBe(0);

    const listed = await runCli(
      [
        'user',
        'history',
        '--user',
        'ann',
        '--store',
        store,
        '--path',
        '/memories/plan.md',
        '--json',
        '--audit-file',
        auditFile,
      ],
      {
        cwd,
        env,
      },
    );
    expect(listed.code, listed.stderr).toBe(0);
    const { versions } = JSON.parse(listed.stdout) as { versions: Array<{ seq: number; actor: string; size: number }> };
    expect(versions.map((v) => [v.actor, v.size])).toEqual([
      ['model', 9],
      ['model', 10],
    ]);

    const dry = await runCli(
      [
        'user',
        'restore',
        '--user',
        'ann',
        '--store',
        store,
        '--as-of',
        asOf,
        '--dry-run',
        '--json',
        '--audit-file',
        auditFile,
      ],
      {
        cwd,
        env,
      },
    );
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({
      dryRun: true,
      restored: 1,
      files: [{ path: '/memories/plan.md', action: 'restored' }],
    });
    const vault = await createVault({ store, encryption: { masterKey: KEY }, history: true, create: false });
    const now = async () =>
      Buffer.from((await (await vault.files('ann')).read('/memories/plan.md'))!.data).toString('utf8');
    expect(await now()).toBe('bad plan\n');

    const done = await runCli(
      [
        'user',
        'restore',
        '--user',
        'ann',
        '--store',
        store,
        '--as-of',
        asOf,
        '--audit-file',
        auditFile,
        '--actor',
        'ticket-9',
      ],
      {
        cwd,
        env,
      },
    );
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toContain('1 restored');
    expect(await now()).toBe('good plan\n');

    const drop = await runCli(
      [
        'user',
        'drop-version',
        '--user',
        'ann',
        '--store',
        store,
        '--path',
        '/memories/plan.md',
        '--seq',
        String(versions[0]!.seq),
        '--audit-file',
        auditFile,
      ],
      {
        cwd,
        env,
      },
    );
    expect(drop.code, drop.stderr).toBe(0);
    expect((await vault.history('ann', '/memories/plan.md')).versions.map((v) => v.actor)).toEqual([
      'restore',
      'model',
    ]);
    const again = await runCli(
      [
        'user',
        'drop-version',
        '--user',
        'ann',
        '--store',
        store,
        '--path',
        '/memories/plan.md',
        '--seq',
        String(versions[0]!.seq),
      ],
      {
        cwd,
        env,
      },
    );
    expect(again.code).toBe(1); // nothing dropped is not a success
    await vault.close();

    const types = readFileSync(auditFile, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; outcome?: string; actor?: string; counts?: Record<string, number> })
      .filter((r) => r.type === 'history' || r.type === 'restore');
    expect(types.map((r) => [r.type, r.outcome])).toEqual([
      ['history', 'ok'],
      ['restore', 'ok'],
      ['restore', 'ok'],
      ['restore', 'ok'],
    ]);
    expect(types[2]).toMatchObject({ actor: 'ticket-9', counts: { restored: 1, dryRun: 0 } });
    expect(readFileSync(auditFile, 'utf8')).not.toMatch(/plan|ann/);

    // Fail closed: an unknown user, a bad date.
    const ghost = await runCli(['user', 'history', '--user', 'ghost', '--store', store], { cwd, env });
    expect(ghost.code).not.toBe(0);
    expect(ghost.stderr).toMatch(ONE_LINE);
    const badDate = await runCli(['user', 'restore', '--user', 'ann', '--store', store, '--as-of', 'yesterday-ish'], {
      cwd,
      env,
    });
    expect(badDate.code).toBe(2);
    expect(badDate.stderr).toMatch(/not a date/);
    // What `new Date` reads as a date is not one: "1" is 2001, and a restore to then empties the memory.
    for (const loose of ['1', '2026-12-01', 'March 7, 2026', '2026-12-01T09:30:00']) {
      const refused = await runCli(['user', 'restore', '--user', 'ann', '--store', store, '--as-of', loose], {
        cwd,
        env,
      });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/not a date \(use an RFC 3339 date-time/);
    }
  });
});

describe('memvault expire and file history', () => {
  it('enforces history retention by default (the knobs from the environment); MEMVAULT_HISTORY=0 turns it off', async () => {
    const cwd = await mkdtemp(join(dir, 'expire-'));
    const store = pathToFileURL(join(cwd, 'data')).href;
    const base = { MEMVAULT_MASTER_KEY: KEY };
    const exec = (input: object) =>
      runCli(['exec', '--user', 'eve', '--store', store, JSON.stringify(input)], { cwd, env: base });
    expect((await exec({ command: 'create', path: '/memories/v.md', file_text: 'v0\n' })).code).toBe(0);
    for (let i = 1; i <= 3; i++)
      expect(
        (await exec({ command: 'str_replace', path: '/memories/v.md', old_str: `v${i - 1}`, new_str: `v${i}` })).code,
      ).toBe(0);
    const kept = async () => {
      const vault = await createVault({ store, encryption: { masterKey: KEY }, create: false });
      const { versions } = await vault.history('eve', '/memories/v.md');
      await vault.close();
      return versions.length;
    };
    expect(await kept()).toBe(4);
    const expire = (env: Record<string, string>) =>
      runCli(['expire', '--store', store, '--ttl-days', '365', '--json'], { cwd, env });

    const off = await expire({ ...base, MEMVAULT_HISTORY: '0', MEMVAULT_HISTORY_VERSIONS: '2' });
    expect(off.code, off.stderr).toBe(0);
    expect(JSON.parse(off.stdout)).not.toHaveProperty('versionsDropped');
    expect(await kept()).toBe(4);

    const on = await expire({ ...base, MEMVAULT_HISTORY_VERSIONS: '2' });
    expect(on.code, on.stderr).toBe(0);
    expect(JSON.parse(on.stdout)).toMatchObject({ expired: 0, versionsDropped: 2 });
    expect(await kept()).toBe(2);
    const text = await runCli(['expire', '--store', store, '--ttl-days', '365'], { cwd, env: base });
    expect(text.stdout).toMatch(/0 kept versions dropped \(history retention\)/);
  });
});
