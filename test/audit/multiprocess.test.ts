import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../src/audit/record.js';
import { listSealedSegments } from '../../src/audit/segments.js';
import { collectFileChains } from '../../src/audit/sources.js';
import { verifyChains } from '../../src/audit/verify.js';
import { registerAuditCommands } from '../../src/cli/commands/audit.js';
import { tempDir } from './helpers.js';

const script = join(import.meta.dirname, 'fixtures', 'audit-process.ts');

function runProcess(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`exit ${code}: ${stderr}`))));
  });
}

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

describe('audit across processes', () => {
  it('two instances, each restarted, export in time order and verify', async () => {
    const temp = tempDir();
    cleanup = temp.cleanup;
    const fileA = join(temp.dir, 'node-a.jsonl');
    const fileB = join(temp.dir, 'node-b.jsonl');
    const perRun = 25;
    // Two processes at once, then both restarted (the second run continues each chain).
    await Promise.all([
      runProcess([fileA, 'node-a', String(perRun), 'sync']),
      runProcess([fileB, 'node-b', String(perRun), 'async']),
    ]);
    await Promise.all([
      runProcess([fileA, 'node-a', String(perRun), 'async']),
      runProcess([fileB, 'node-b', String(perRun), 'sync']),
    ]);

    const report = await verifyChains(await collectFileChains([fileA, fileB]));
    expect(report.failures).toEqual([]);
    expect(report.chains.map((c) => c.instance)).toEqual(['node-a', 'node-b']);
    expect(report.chains.every((c) => c.segments > 1)).toBe(true);

    const out = join(temp.dir, 'export.jsonl');
    const program = new Command().exitOverride();
    registerAuditCommands(program, { stdout: () => {}, stderr: () => {}, progress: false });
    await program.parseAsync(
      ['audit', 'export', '--from', '2000-01-01', '--to', '2100-01-01', '--out', out, temp.dir],
      { from: 'user' },
    );
    const records = readFileSync(out, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as AuditRecord);
    // Per instance: two runs of (start + perRun commands).
    expect(records).toHaveLength(2 * 2 * (perRun + 1));
    const times = records.map((r) => Date.parse(r.time));
    expect(times).toEqual([...times].sort((x, y) => x - y));
    for (const instance of ['node-a', 'node-b']) {
      const own = records.filter((r) => r.instance === instance);
      expect(own.filter((r) => r.type === 'start')).toHaveLength(2);
      const seqs = own.map((r) => r.seq);
      expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    }
    // Where the two instances' runs overlapped in time, the merge interleaves them (how much they
    // overlap depends on process start-up under load, so the check follows what happened).
    const span = (instance: string) => {
      const own = records.filter((r) => r.instance === instance).map((r) => Date.parse(r.time));
      return [Math.min(...own), Math.max(...own)] as const;
    };
    const [aFrom, aTo] = span('node-a');
    const [bFrom, bTo] = span('node-b');
    const switches = records.slice(1).filter((r, i) => r.instance !== records[i]!.instance).length;
    if (aFrom < bTo && bFrom < aTo) expect(switches).toBeGreaterThan(1);
    else expect(switches).toBeGreaterThanOrEqual(1);
  }, 120_000);

  // pino registers an exit handler for async destinations that flushes synchronously; this pins it.
  it('async mode flushes buffered records when the process exits without close()', async () => {
    const temp = tempDir();
    cleanup = temp.cleanup;
    const file = join(temp.dir, 'exit.jsonl');
    await runProcess([file, 'node-x', '30', 'async', 'no-close']);
    const report = await verifyChains(await collectFileChains([file]));
    expect(report.failures).toEqual([]);
    // start + 30 commands + one seal per sealed segment: nothing buffered was lost.
    expect(report.totals.records).toBe(31 + listSealedSegments(file).length);
  }, 60_000);

  it('the stdout sink writes a verifiable chain per process run', async () => {
    const temp = tempDir();
    cleanup = temp.cleanup;
    const stdout = await runProcess(['-', 'stdout-node', '7', 'stdout']);
    const file = join(temp.dir, 'captured.jsonl');
    writeFileSync(file, stdout);
    const report = await verifyChains(await collectFileChains([file]));
    expect(report.failures).toEqual([]);
    expect(report.totals).toMatchObject({ instances: 1, records: 8 });
  }, 60_000);
});
