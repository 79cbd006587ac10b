import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// Each test spawns several CLI processes (tsx); on a loaded 2-core machine that takes a while.
vi.setConfig({ testTimeout: 180_000 });
import { startFakeApi } from '../e2e/fake-messages-api.js';
import { runCli, type CliResult } from './helpers.js';

let cwd: string;
beforeAll(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'memvault-cli-'));
});
afterAll(async () => {
  await rm(cwd, { recursive: true, force: true });
});

/** `memvault ARGS` in the test's working directory (test/cli/helpers.ts runs it). */
const cli = (args: string[], options: { input?: string; env?: Record<string, string> } = {}): Promise<CliResult> =>
  runCli(args, { cwd, ...options });

const lines = (s: string) =>
  s
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { content: unknown; is_error: boolean });

describe('memvault exec', () => {
  it('runs one JSON command on the embedded default store (./.memvault.db, encrypted with a key file created beside it)', async () => {
    const r = await cli([
      'exec',
      '--user',
      'ann',
      '{"command":"create","path":"/memories/a.md","file_text":"hello\\n"}',
    ]);
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([{ content: 'File created successfully at: /memories/a.md', is_error: false }]);
    expect((await stat(join(cwd, '.memvault.db'))).isFile()).toBe(true);
    expect(existsSync(join(cwd, '.memvault'))).toBe(false);
    expect((await stat(join(cwd, '.memvault.key'))).mode & 0o077).toBe(0);
    expect(r.stderr).toMatch(/created a new master key file/);
  });

  it('runs one command per line of standard input, answering bad lines with is_error and exit code 0', async () => {
    const input = [
      '{"command":"view","path":"/memories/a.md"}',
      'not json',
      '{"command":"nope"}',
      '{"command":"view","path":"/memories/../x"}',
      '',
    ].join('\n');
    const r = await cli(['exec', '--user', 'ann'], { input });
    expect(r.code).toBe(0);
    const out = lines(r.stdout);
    expect(out).toHaveLength(4);
    expect(out[0]).toEqual({
      content: "Here's the content of /memories/a.md with line numbers:\n     1\thello",
      is_error: false,
    });
    expect(out.slice(1).every((o) => o.is_error)).toBe(true);
  });

  it('fails (exit 2, one line, no stack) when the CLI itself cannot work', async () => {
    const empty = await cli(['exec', '--user', '', '{}']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/^memvault: the user id must be a non-empty string\n$/);
    const badStore = await cli(['exec', '--user', 'ann', '--store', 'ftp://x', '{}']);
    expect(badStore.code).toBe(2);
    expect(badStore.stderr).not.toMatch(/\n\s+at /);
    const wrongKey = await cli(['exec', '--user', 'ann', '{"command":"view","path":"/memories"}'], {
      env: { MEMVAULT_MASTER_KEY: Buffer.alloc(32, 7).toString('base64') },
    });
    expect(wrongKey.code).toBe(2);
    expect(wrongKey.stderr).toMatch(/master key does not match this deployment/);
    expect(wrongKey.stdout).toBe('');
  });
});

describe('memvault exec --audit-file and memvault audit', () => {
  it('writes one hash-chained record per command, with no file names or contents, and verifies', async () => {
    const audit = join(cwd, 'audit', 'records.jsonl');
    const store = ['--store', `file://${join(cwd, 'audited')}`];
    const input = [
      '{"command":"create","path":"/memories/diagnosis-secret.md","file_text":"PLANTED-CONTENT-123"}',
      '{"command":"view","path":"/memories/../escape"}',
      '{"command":"view","path":"/memories/diagnosis-secret.md"}',
    ].join('\n');
    const r = await cli(['exec', '--user', 'patient@example.com', '--audit-file', audit, ...store], { input });
    expect(r.code, r.stderr).toBe(0);
    const text = await readFile(audit, 'utf8');
    const records = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((x) => x['type'] === 'command');
    expect(records.map((x) => [x['command'], x['outcome']])).toEqual([
      ['create', 'ok'],
      ['view', 'error'],
      ['view', 'ok'],
    ]);
    for (const planted of ['diagnosis-secret', 'PLANTED-CONTENT', 'patient@example.com', 'escape'])
      expect(text).not.toContain(planted);
    // The records carry MACs: verify needs this deployment's audit key. Without --data-store it
    // takes the default store (./.memvault, another deployment here): its key does not match.
    const otherKey = await cli(['audit', 'verify', audit]);
    expect(otherKey.code).toBe(1);
    expect(otherKey.stderr).toMatch(/MAC does not match|cannot check the records' MACs/);
    const verified = await cli(['audit', 'verify', '--data-store', store[1]!, audit]);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/authenticated seq 1-/);
    // Editing one field breaks the chain, and verify says where.
    const { writeFile } = await import('node:fs/promises');
    await writeFile(audit, text.replace('"outcome":"error"', '"outcome":"ok"'));
    const broken = await cli(['audit', 'verify', '--data-store', store[1]!, audit]);
    expect(broken.code).toBe(1);
  }, 120_000);
});

describe('memvault keys / user', () => {
  it('rotates the master key, exports a user as tar, then forgets the user', async () => {
    await cli(['exec', '--user', 'zoe'], {
      input: '{"command":"create","path":"/memories/z/one.md","file_text":"one"}\n',
    });
    const rotated = await cli(['keys', 'rotate', '--to-master-key-file', join(cwd, 'new.key'), '--json']);
    expect(rotated.code, rotated.stderr).toBe(0);
    const summary = JSON.parse(rotated.stdout) as { total: number; rewrapped: number };
    expect(summary.rewrapped).toBe(summary.total);
    // The old key no longer opens the deployment; the new one does.
    const withOld = await cli(['exec', '--user', 'zoe', '{"command":"view","path":"/memories/z/one.md"}']);
    expect(withOld.code).toBe(2);
    const newKey = { MEMVAULT_MASTER_KEY_FILE: join(cwd, 'new.key') };
    const withNew = await cli(['exec', '--user', 'zoe', '{"command":"view","path":"/memories/z/one.md"}'], {
      env: newKey,
    });
    expect(lines(withNew.stdout)[0]!.content).toMatch(/1\tone$/);
    const again = await cli(['keys', 'rotate', '--to-master-key-file', join(cwd, 'new.key'), '--json'], {
      env: newKey,
    });
    expect(JSON.parse(again.stdout)).toMatchObject({ rewrapped: 0 });

    const exported = await cli(['user', 'export', '--user', 'zoe', '--out', join(cwd, 'zoe.tar'), '--json'], {
      env: newKey,
    });
    expect(exported.code, exported.stderr).toBe(0);
    const tar = await readFile(join(cwd, 'zoe.tar'));
    expect(tar.toString('latin1')).toContain('memories/z/one.md');
    expect(tar.toString('latin1')).toContain('one');

    const forgot = await cli(['user', 'forget', '--user', 'zoe', '--json'], { env: newKey });
    // The file and the version it keeps (history is on by default).
    expect(JSON.parse(forgot.stdout)).toMatchObject({ keyDeleted: true, objectsDeleted: 2 });
    const after = await cli(['exec', '--user', 'zoe', '{"command":"view","path":"/memories/z/one.md"}'], {
      env: newKey,
    });
    expect(lines(after.stdout)[0]!.is_error).toBe(true);
  }, 180_000);
});

describe('memvault chat', () => {
  it('says clearly that it needs ANTHROPIC_API_KEY', async () => {
    const r = await cli(['chat', '--user', 'ann']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/ANTHROPIC_API_KEY/);
  });

  it('talks through the toolRunner with memory in the vault', async () => {
    const api = await startFakeApi([
      {
        stop_reason: 'tool_use',
        content: [
          {
            type: 'tool_use',
            id: 't1',
            name: 'memory',
            input: { command: 'create', path: '/memories/chat.md', file_text: 'user likes tea' },
          },
        ],
      },
      { stop_reason: 'end_turn', content: [{ type: 'text', text: 'Noted: you like tea.' }] },
    ]);
    try {
      const store = ['--store', `file://${join(cwd, 'chat-store')}`];
      const r = await cli(
        ['chat', '--user', 'chatter', '--base-url', api.baseURL, '--model', 'claude-test', ...store],
        {
          input: 'I like tea\n\n',
          env: { ANTHROPIC_API_KEY: 'test' },
        },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('claude> Noted: you like tea.');
      expect(api.requests).toHaveLength(2);
      const view = await cli(['exec', '--user', 'chatter', '{"command":"view","path":"/memories/chat.md"}', ...store]);
      expect(lines(view.stdout)[0]!.content).toMatch(/user likes tea/);
    } finally {
      await api.close();
    }
  });
});
