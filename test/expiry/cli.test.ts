/**
 * `memvault expire` and `memvault doctor` as commands (commander), on a real file store. The files
 * are written with a clock set 40 and 10 days back; the command then runs on the real clock.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerDoctor } from '../../src/cli/commands/doctor.js';
import { parseAsOf, registerExpire } from '../../src/cli/commands/expire.js';
import { DAY_MS } from '../../src/expiry/config.js';
import { FileStore } from '../../src/store/file.js';
import { listAll } from '../../src/store/port.js';
import { expiryFor, filesOf, type ManualClock } from './helpers.js';
import { encode } from '../kit/text.js';
import { ONE_LINE, runCli } from '../cli/helpers.js';

let dir: string;
let url: string;

async function seed(): Promise<void> {
  let t = Date.now() - 40 * DAY_MS;
  const clock = { now: () => new Date(t) } as unknown as ManualClock;
  const store = await FileStore.open(join(dir, 'store'), { now: () => new Date(t), durable: false });
  const expiry = expiryFor(store, clock);
  const files = await filesOf(store, expiry, 'alice');
  await files.write('/memories/old-1.md', encode('a'));
  await files.write('/memories/old-2.md', encode('b'));
  t = Date.now() - 10 * DAY_MS;
  await files.write('/memories/recent.md', encode('c'));
  await store.close();
}

async function fileCount(): Promise<number> {
  const store = await FileStore.open(join(dir, 'store'));
  let n = 0;
  for await (const o of listAll(store, 'u/')) if (o.key.includes('/f/')) n++;
  await store.close();
  return n;
}

async function run(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ out: string; err: string; code: number | undefined }> {
  let out = '';
  let err = '';
  let code: number | undefined;
  const deps = {
    env,
    stdout: (s: string) => void (out += s),
    stderr: (s: string) => void (err += s),
    setExitCode: (c: number) => void (code = c),
    progress: false,
  };
  const program = new Command().exitOverride().configureOutput({ writeErr: (s) => void (err += s) });
  registerExpire(program, deps);
  registerDoctor(program, deps);
  await program.parseAsync(['node', 'memvault', ...args]);
  return { out, err, code };
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'memvault-expire-cli-'));
  url = pathToFileURL(join(dir, 'store')).href;
  await seed();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('memvault expire', () => {
  it('dry run lists what would go, changes nothing; the real run deletes exactly that and audits it', async () => {
    const dry = await run(['expire', '--store', url, '--dry-run'], { MEMVAULT_TTL_DAYS: '30' });
    expect(dry.code).toBe(0);
    const lines = dry.out.split('\n').filter((l) => l.startsWith('would delete'));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^would delete uid=\S+ object=sha256:[0-9a-f]{32} idle=40d$/);
    expect(dry.out).toContain('dry run as of');
    expect(await fileCount()).toBe(3);

    const auditFile = join(dir, 'audit.jsonl');
    const real = await run(['expire', '--store', url, '--json', '--audit-file', auditFile], {
      MEMVAULT_TTL_DAYS: '30',
    });
    expect(real.code).toBe(0);
    const summary = JSON.parse(real.out) as Record<string, unknown>;
    expect(summary).toMatchObject({
      dryRun: false,
      scanned: 3,
      expired: 2,
      kept: 1,
      errors: 0,
      ttlDays: 30,
      mode: 'store',
    });
    expect(summary['requests']).toMatchObject({ LIST: 1, DELETE: 2 });
    expect(real.out.trim().split('\n')).toHaveLength(1); // one JSON object
    expect(await fileCount()).toBe(1);
    const records = readFileSync(auditFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const expires = records.filter((r) => r['type'] === 'expire');
    expect(expires).toHaveLength(3); // two deletions and the summary
    const deletedHashes = lines.map((l) => /object=(sha256:[0-9a-f]+)/.exec(l)![1]).sort();
    expect(
      expires
        .filter((r) => r['path'] !== undefined)
        .map((r) => r['path'])
        .sort(),
    ).toEqual(deletedHashes);
    expect(readFileSync(auditFile, 'utf8')).not.toContain('old-1');
  });

  it('--ttl-days overrides MEMVAULT_TTL_DAYS', async () => {
    const r = await run(['expire', '--store', url, '--json', '--ttl-days', '5'], { MEMVAULT_TTL_DAYS: '30' });
    expect(JSON.parse(r.out)).toMatchObject({ ttlDays: 5, expired: 3 });
  });

  it('--as-of judges another date: nothing was idle 30 days 20 days ago', async () => {
    const asOf = new Date(Date.now() - 20 * DAY_MS).toISOString();
    const r = await run(['expire', '--store', url, '--json', '--as-of', asOf], { MEMVAULT_TTL_DAYS: '30' });
    // The old files were 20 days idle then; recent.md was written after that date: all kept.
    expect(JSON.parse(r.out)).toMatchObject({ expired: 0, kept: 3, scanned: 3 });
  });

  it('configuration errors exit 2 with one line: no TTL, a future --as-of on a real run, a bad mode', async () => {
    const none = await run(['expire', '--store', url]);
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/^memvault: expire: no TTL configured/);
    const future = await run(['expire', '--store', url, '--as-of', '2999-01-01'], { MEMVAULT_TTL_DAYS: '30' });
    expect(future.code).toBe(2);
    expect(future.err).toContain('future');
    const mode = await run(['expire', '--store', url], {
      MEMVAULT_TTL_DAYS: '30',
      MEMVAULT_CONDITIONAL_DELETE: 'maybe',
    });
    expect(mode.code).toBe(2);
    expect(await fileCount()).toBe(3);
  });

  it('--as-of is a date or a strict RFC 3339 date-time: what `new Date` guesses ("1" is 2001) is no date', async () => {
    expect(parseAsOf('2026-03-07').toISOString()).toBe('2026-03-07T23:59:59.999Z');
    expect(parseAsOf('2026-03-07T12:00:00Z').toISOString()).toBe('2026-03-07T12:00:00.000Z');
    expect(parseAsOf('2026-03-07T12:00:00.5+01:00').toISOString()).toBe('2026-03-07T11:00:00.500Z');
    for (const loose of ['1', '2026-02-31', '2026-03-07T12:00:00', 'March 7, 2026', '2026-3-7', ' 2026-03-07', ''])
      expect(() => parseAsOf(loose), loose).toThrow(/RFC 3339 date-time with a timezone/);
    // Refused before anything opens the store: nothing swept, not "now" as a default.
    await expect(
      run(['expire', '--store', url, '--dry-run', '--as-of', '1'], { MEMVAULT_TTL_DAYS: '30' }),
    ).rejects.toMatchObject({ code: 'commander.invalidArgument' });
    // The built CLI: exit 2, one line that names the flag.
    const r = await runCli(['expire', '--store', url, '--as-of', '1'], {
      cwd: dir,
      env: { MEMVAULT_TTL_DAYS: '30' },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(ONE_LINE);
    expect(r.stderr).toMatch(/--as-of.*'1' is invalid.*RFC 3339/);
    expect(await fileCount()).toBe(3);
  });

  it('MEMVAULT_TTL_CLASSES supplies the default class when MEMVAULT_TTL_DAYS is unset', async () => {
    const r = await run(['expire', '--store', url, '--json'], {
      MEMVAULT_TTL_CLASSES: JSON.stringify({ default: 35, pro: 365 }),
    });
    expect(JSON.parse(r.out)).toMatchObject({ ttlDays: 35, classes: { default: 35, pro: 365 }, expired: 2 });
  });
});

describe('memvault doctor', () => {
  it('checks a file store too, and fails closed: this one holds user data but no deployment record', async () => {
    const r = await run(['doctor', '--store', url]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/\[MISSING\] Deployment record \(k\/_deployment\): /);
    expect(r.out).toMatch(/memvault doctor: FAILED/);
  });
});
