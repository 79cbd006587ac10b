/**
 * Verify and export fail closed, with one clear line and the documented exit
 * codes (1 check failed, 2 usage, 3 runtime), never a stack trace.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// CLI processes (tsx) are slow to start on a loaded machine.
vi.setConfig({ testTimeout: 180_000 });
import { createAuditLogger } from '../../src/pipeline/audit-logger.js';
import { listSealedSegments } from '../../src/audit/segments.js';
import { registerAuditCommands, type AuditCommandDeps } from '../../src/cli/commands/audit.js';
import { CliError, EXIT } from '../../src/cli/errors.js';
import { ONE_LINE, runCli } from './helpers.js';

let dir: string;
let log: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'memvault-failclosed-'));
  log = join(dir, 'logs', 'audit.jsonl');
  let t = Date.parse('2026-03-01T10:00:00Z');
  const logger = await createAuditLogger({
    file: log,
    instanceId: 'node-a',
    maxSegmentBytes: 2000,
    now: () => (t += 1000),
  });
  for (let i = 0; i < 30; i++)
    logger.append({ type: 'command', command: 'view', uid: i % 2 ? 'u_odd' : 'u_even', outcome: 'ok' });
  await logger.close();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function audit(
  args: string[],
  deps: AuditCommandDeps = {},
): Promise<{ out: string; err: string; exitCode: number }> {
  const out: string[] = [];
  const err: string[] = [];
  let exitCode = 0;
  const program = new Command().exitOverride();
  registerAuditCommands(program, {
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    setExitCode: (c) => (exitCode = c),
    progress: false,
    ...deps,
  });
  try {
    await program.parseAsync(['audit', ...args], { from: 'user' });
  } catch (e) {
    if (e instanceof CliError) return { out: out.join(''), err: `${err.join('')}${e.message}\n`, exitCode: e.exitCode };
    throw e;
  }
  return { out: out.join(''), err: err.join(''), exitCode };
}

const range = ['--from', '2026-03-01', '--to', '2026-03-01'];

describe('audit verify fails closed', () => {
  it('a missing input is a usage error (2), not "verified: 0 records"', async () => {
    const r = await audit(['verify', join(dir, 'nonexist.jsonl')]);
    expect(r.exitCode).toBe(EXIT.usage);
    expect(r.err).toMatch(/no such audit file or directory: .*nonexist\.jsonl/);
    expect(r.out).toBe('');
  });

  it('an input that holds no records (empty directory, empty file) is a failed check (1)', async () => {
    const empty = join(dir, 'empty-dir');
    mkdirSync(empty, { recursive: true });
    writeFileSync(join(dir, 'empty.jsonl'), '');
    for (const input of [empty, join(dir, 'empty.jsonl')]) {
      const r = await audit(['verify', input]);
      expect(r.exitCode, input).toBe(EXIT.checkFailed);
      expect(r.err).toMatch(/no audit records found in/);
    }
  });

  it('an identical copy of a segment is read once and reported; the chain still verifies', async () => {
    const copies = join(dir, 'copies');
    mkdirSync(copies, { recursive: true });
    const sealed = listSealedSegments(log);
    expect(sealed.length).toBeGreaterThan(2);
    copyFileSync(sealed[1]!.file, join(copies, 'again.000002.sealed.jsonl'));
    const r = await audit(['verify', log, join(copies, 'again.000002.sealed.jsonl')]);
    expect(r.exitCode, r.err).toBe(0);
    expect(r.err).toMatch(
      /(again|audit\.jsonl)\.000002\.sealed\.jsonl is an identical copy of .*(again|audit\.jsonl)\.000002\.sealed\.jsonl; read once/,
    );
    expect(r.out).toMatch(/, 31 record\(s\)|, 3\d record\(s\)/);
    expect(r.out).toMatch(/1 duplicate segment\(s\) ignored/);
    // A copy that differs is not a duplicate: it is reported as a broken chain.
    const altered = readFileSync(sealed[1]!.file, 'utf8').replace('"u_odd"', '"u_evn"');
    writeFileSync(join(copies, 'again.000002.sealed.jsonl'), altered);
    expect((await audit(['verify', log, join(copies, 'again.000002.sealed.jsonl')])).exitCode).toBe(EXIT.checkFailed);
  });
});

describe('audit export fails closed', () => {
  it('refuses a missing input, --from after --to, a missing output directory, --user with --uid: exit 2, no file', async () => {
    const outFile = join(dir, 'x.jsonl');
    const cases: Array<[string[], RegExp]> = [
      [['export', ...range, '--out', outFile, join(dir, 'nope.jsonl')], /no such audit file/],
      [['export', '--from', '2026-03-02', '--to', '2026-03-01', '--out', outFile, log], /--from must be before --to/],
      [
        ['export', ...range, '--out', join(dir, 'no-dir', 'x.jsonl'), log],
        /the output directory .*no-dir does not exist/,
      ],
      [['export', ...range, '--user', 'a', '--uid', 'b', '--out', outFile, log], /either --user or --uid/],
      [['export', ...range, '--out', outFile], /give the audit FILES/],
    ];
    for (const [args, message] of cases) {
      const r = await audit(args, { uidOf: () => 'u_odd' });
      expect(r.exitCode, args.join(' ')).toBe(EXIT.usage);
      expect(r.err).toMatch(message);
    }
    expect(existsSync(outFile)).toBe(false);
  });

  it('exports nothing, and writes no file, when no record matches (exit 1)', async () => {
    const outFile = join(dir, 'none.jsonl');
    const r = await audit(['export', '--from', '2025-01-01', '--to', '2025-01-02', '--out', outFile, log]);
    expect(r.exitCode).toBe(EXIT.checkFailed);
    expect(r.err).toMatch(/no records matched the time range/);
    expect(existsSync(outFile)).toBe(false);
    expect(readdirSync(dir).some((n) => n.includes('.partial'))).toBe(false);
  });

  it('refuses a chain that does not verify, unless --allow-unverified, which marks the export', async () => {
    const tampered = join(dir, 'tampered');
    mkdirSync(tampered, { recursive: true });
    const file = join(tampered, 'audit.jsonl');
    const lines = readFileSync(log, 'utf8').trimEnd().split('\n');
    writeFileSync(file, `${lines.slice(0, 1).join('\n')}\n${lines.slice(2).join('\n')}\n`);
    const outFile = join(tampered, 'out.jsonl');
    const refused = await audit(['export', ...range, '--out', outFile, file]);
    expect(refused.exitCode).toBe(EXIT.checkFailed);
    expect(refused.err).toMatch(/audit chain broken: .*record\(s\) missing/);
    expect(refused.err).toMatch(/audit export refused: the audit chain does not verify/);
    expect(existsSync(outFile)).toBe(false);

    const allowed = await audit(['export', ...range, '--allow-unverified', '--out', outFile, file]);
    expect(allowed.exitCode).toBe(0);
    expect(allowed.out).toMatch(/marked UNVERIFIED/);
    const first = JSON.parse(readFileSync(outFile, 'utf8').split('\n')[0]!) as {
      memvaultExport: string;
      failures: unknown[];
    };
    expect(first.memvaultExport).toBe('UNVERIFIED');
    expect(first.failures).toHaveLength(1);
    const csvFile = join(tampered, 'out.csv');
    await audit(['export', ...range, '--allow-unverified', '--format', 'csv', '--bom', '--out', csvFile, file]);
    expect(readFileSync(csvFile, 'utf8')).toMatch(/^\ufeff"UNVERIFIED EXPORT: the audit chain does not verify/);
  });

  it('--out - writes the records to standard output and the summary to stderr', async () => {
    const stream = new PassThrough();
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    const r = await audit(['export', ...range, '--uid', 'u_odd', '--out', '-', log], { stdoutStream: stream });
    expect(r.exitCode).toBe(0);
    const records = Buffer.concat(chunks)
      .toString('utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { uid: string });
    expect(records).toHaveLength(15);
    expect(records.every((x) => x.uid === 'u_odd')).toBe(true);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/exported 15 record\(s\) from 1 instance\(s\).* to standard output/);
    expect(existsSync(join(process.cwd(), '-'))).toBe(false);
  });
});

describe('the whole CLI: exit codes, --version, help, no stack traces', () => {
  it('no arguments prints the help on stderr and exits 2; --version prints the package version', async () => {
    const none = await runCli([], { cwd: dir });
    expect(none.code).toBe(EXIT.usage);
    expect(none.stderr).toMatch(/Usage: memvault/);
    expect(none.stderr.replace(/\s+/g, ' ')).toMatch(
      /Exit codes: 0 done, 1 a check failed, 2 usage or configuration error, 3 runtime error/,
    );
    const version = await runCli(['--version'], { cwd: dir });
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toBe(
      (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version,
    );
  }, 60_000);

  it('usage errors are one line with exit 2; required options are marked in help', async () => {
    for (const args of [
      ['audit', 'verify'],
      ['audit', 'export', '--from', '2026-03-02', '--to', '2026-03-01', '--out', 'x', log],
      ['user', 'forget'],
      ['nonsense'],
      ['audit', 'export', '--from', 'yesterday', '--to', '2026-01-01', '--out', 'x', log],
    ]) {
      const r = await runCli(args, { cwd: dir });
      expect(r.code, args.join(' ')).toBe(EXIT.usage);
      expect(r.stderr, args.join(' ')).toMatch(ONE_LINE);
    }
    const help = await runCli(['user', 'export', '--help'], { cwd: dir });
    expect(help.stdout).toMatch(/--user <id>\s+the user id as the host application knows it \(required\)/);
    expect(help.stdout).toMatch(/--out <file>[\s\S]*\(required\)/);
  }, 120_000);

  it('after a key rotation, a command with the old key fails in one line: no stack, no key record', async () => {
    const cwd = await mkdtemp(join(dir, 'rot-'));
    const store = `file://${join(cwd, 'data')}`;
    const oldKey = { MEMVAULT_MASTER_KEY: Buffer.alloc(32, 1).toString('base64') };
    await runCli(
      ['exec', '--user', 'u', '--store', store, '{"command":"create","path":"/memories/a.md","file_text":"x"}'],
      { cwd, env: oldKey },
    );
    const rotated = await runCli(['keys', 'rotate', '--store', store, '--to-master-key-file', join(cwd, 'new.key')], {
      cwd,
      env: oldKey,
    });
    expect(rotated.code, rotated.stderr).toBe(0);
    for (const args of [
      ['audit', 'export', ...range, '--user', 'u', '--data-store', store, '--out', join(cwd, 'a.jsonl'), log],
      ['user', 'export', '--user', 'u', '--store', store, '--out', join(cwd, 'u.tar')],
      ['exec', '--user', 'u', '--store', store, '{"command":"view","path":"/memories"}'],
    ]) {
      const r = await runCli(args, { cwd, env: oldKey });
      expect(r.code, args.join(' ')).toBe(EXIT.usage);
      expect(r.stderr).toMatch(ONE_LINE);
      expect(r.stderr).toMatch(/master key does not match this deployment/);
      expect(r.stderr).not.toMatch(/wrapped:|Uint8Array|\n\s+at /);
    }
    expect(existsSync(join(cwd, 'u.tar'))).toBe(false);
  }, 180_000);
});
