import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recordHash } from '../../src/audit/chain.js';
import { createAuditLogger } from '../../src/pipeline/audit-logger.js';
import type { AuditRecord } from '../../src/audit/record.js';
import { listSealedSegments } from '../../src/audit/segments.js';
import { collectFileChains, collectStoreChains } from '../../src/audit/sources.js';
import { verifyChains, type VerifyFailure } from '../../src/audit/verify.js';
import { registerAuditCommands } from '../../src/cli/commands/audit.js';
import { MemoryStore } from '../../src/store/memory.js';
import { tempDir } from './helpers.js';

let file: string;
let cleanup: () => void;
let segments: string[];

beforeEach(async () => {
  const temp = tempDir();
  cleanup = temp.cleanup;
  file = join(temp.dir, 'audit.jsonl');
  const logger = await createAuditLogger({ file, instanceId: 'node-a', maxSegmentBytes: 1500 });
  for (let i = 0; i < 40; i++)
    logger.append({ type: 'command', command: 'view', uid: 'u_1', outcome: 'ok', bytesRead: i });
  await logger.close();
  segments = listSealedSegments(file).map((s) => s.file);
  expect(segments.length).toBeGreaterThanOrEqual(4);
  expect((await verifyChains(await collectFileChains([file]))).ok).toBe(true);
});
afterEach(() => cleanup());

const linesOf = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0);
const writeLines = (path: string, lines: string[]) => writeFileSync(path, lines.map((l) => `${l}\n`).join(''));
const recordAt = (path: string, line: number) => JSON.parse(linesOf(path)[line - 1]!) as AuditRecord;

async function firstFailure(): Promise<VerifyFailure> {
  const report = await verifyChains(await collectFileChains([file]));
  expect(report.ok).toBe(false);
  expect(report.failures).toHaveLength(1);
  return report.failures[0]!;
}

describe('verify detects tampering and reports where', () => {
  it('an edited field', async () => {
    const target = segments[1]!;
    const lines = linesOf(target);
    const record = JSON.parse(lines[2]!) as AuditRecord;
    lines[2] = JSON.stringify({ ...record, bytesRead: 999_999 });
    writeLines(target, lines);
    expect(await firstFailure()).toMatchObject({
      instance: 'node-a',
      source: target,
      line: 3,
      seq: record.seq,
      reason: expect.stringMatching(/edited/),
    });
  });

  it('an edited field with its hash recomputed (detected at the next record)', async () => {
    const target = segments[1]!;
    const lines = linesOf(target);
    const record = JSON.parse(lines[2]!) as AuditRecord;
    const forged = { ...record, outcome: 'error' };
    lines[2] = JSON.stringify({ ...forged, hash: recordHash(forged as unknown as Record<string, unknown>) });
    writeLines(target, lines);
    expect(await firstFailure()).toMatchObject({
      source: target,
      line: 4,
      seq: record.seq + 1,
      reason: expect.stringMatching(/prevHash/),
    });
  });

  it('a deleted record', async () => {
    const target = segments[2]!;
    const lines = linesOf(target);
    const deleted = JSON.parse(lines[1]!) as AuditRecord;
    lines.splice(1, 1);
    writeLines(target, lines);
    expect(await firstFailure()).toMatchObject({
      source: target,
      line: 2,
      seq: deleted.seq + 1,
      expectedSeq: deleted.seq,
      reason: expect.stringMatching(/missing/),
    });
  });

  it('two records swapped', async () => {
    const target = segments[0]!;
    const lines = linesOf(target);
    [lines[2], lines[3]] = [lines[3]!, lines[2]!];
    writeLines(target, lines);
    const failure = await firstFailure();
    expect(failure).toMatchObject({
      source: target,
      line: 3,
      seq: recordAt(target, 3).seq,
      reason: expect.stringMatching(/seq/),
    });
  });

  it('a truncated sealed segment', async () => {
    const target = segments[1]!;
    const lines = linesOf(target);
    writeLines(target, lines.slice(0, lines.length - 2));
    expect(await firstFailure()).toMatchObject({
      source: target,
      line: lines.length - 1,
      reason: expect.stringMatching(/truncated/),
    });
  });

  it('a segment cut mid-line', async () => {
    const target = segments[1]!;
    const text = readFileSync(target, 'utf8');
    writeFileSync(target, text.slice(0, text.length - 40));
    const failure = await firstFailure();
    expect(failure).toMatchObject({
      source: target,
      line: linesOf(target).length,
      reason: expect.stringMatching(/unreadable/),
    });
  });

  it('a whole segment deleted from the middle', async () => {
    const removedFirstSeq = recordAt(segments[1]!, 1).seq;
    const nextFirstSeq = recordAt(segments[2]!, 1).seq;
    rmSync(segments[1]!);
    expect(await firstFailure()).toMatchObject({
      source: segments[2],
      line: 1,
      seq: nextFirstSeq,
      expectedSeq: removedFirstSeq,
    });
  });

  it('the first segment deleted', async () => {
    rmSync(segments[0]!);
    expect(await firstFailure()).toMatchObject({ source: segments[1], line: 1, expectedSeq: 1 });
  });

  it('a forged record inserted with a valid hash and link', async () => {
    const target = segments[2]!;
    const lines = linesOf(target);
    const previous = JSON.parse(lines[0]!) as AuditRecord;
    const body = {
      ...previous,
      seq: previous.seq + 1,
      prevHash: previous.hash,
      type: 'command',
      command: 'delete',
      path: '/memories/evidence.md',
    };
    const forged = { ...body, hash: recordHash(body as unknown as Record<string, unknown>) };
    lines.splice(1, 0, JSON.stringify(forged));
    writeLines(target, lines);
    // The forgery itself is consistent; the original record after it no longer is.
    expect(await firstFailure()).toMatchObject({
      source: target,
      line: 3,
      seq: previous.seq + 1,
      expectedSeq: previous.seq + 2,
    });
  });

  it('a segment renamed to another number', async () => {
    const [a, b] = [segments[1]!, segments[2]!];
    const textA = readFileSync(a, 'utf8');
    writeFileSync(a, readFileSync(b, 'utf8'));
    writeFileSync(b, textA);
    const failure = await firstFailure();
    expect(failure.reason).toMatch(/seal record is for segment/);
  });

  it('a segment removed from the store copy', async () => {
    const store = new MemoryStore();
    const logger = await createAuditLogger({ file, maxSegmentBytes: 1500, upload: { store } });
    for (let i = 0; i < 30; i++) logger.append({ type: 'expire' });
    await logger.close();
    const keys = (await store.list('audit/')).objects.map((o) => o.key);
    expect((await verifyChains(await collectStoreChains(store))).ok).toBe(true);
    await store.delete(keys[2]!);
    const report = await verifyChains(await collectStoreChains(store));
    expect(report.failures[0]).toMatchObject({ source: keys[3], line: 1, reason: expect.stringMatching(/missing/) });
  });
});

describe('memvault audit verify', () => {
  async function run(args: string[], deps: Parameters<typeof registerAuditCommands>[1] = {}) {
    const out: string[] = [];
    const err: string[] = [];
    let exitCode = 0;
    const program = new Command().exitOverride();
    registerAuditCommands(program, {
      stdout: (t) => out.push(t),
      stderr: (t) => err.push(t),
      setExitCode: (c) => (exitCode = c),
      ...deps,
    });
    await program.parseAsync(['audit', 'verify', ...args], { from: 'user' });
    return { out: out.join(''), err: err.join(''), exitCode };
  }

  it('prints a summary and exits 0 for an intact log', async () => {
    const result = await run([file]);
    expect(result.exitCode).toBe(0);
    // The sealed segments plus the active file.
    expect(result.out).toMatch(
      new RegExp(`1 instance\\(s\\), ${segments.length + 1} segment\\(s\\), 4\\d record\\(s\\), 20\\d\\d-`),
    );
    expect(result.out).toContain('node-a');
  });

  it('prints the first broken record with file, line and seq, and exits 1', async () => {
    const target = segments[1]!;
    const lines = linesOf(target);
    lines.splice(1, 1);
    writeLines(target, lines);
    const result = await run([file]);
    expect(result.exitCode).toBe(1);
    expect(result.err).toMatch(
      new RegExp(
        `instance node-a, ${target.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, line 2, seq \\d+: seq \\d+ where \\d+ was expected`,
      ),
    );
  });

  it('reads the store copy with --store', async () => {
    const store = new MemoryStore();
    const logger = await createAuditLogger({ file, upload: { store } });
    await logger.close();
    const result = await run(['--store', 'memory://x'], { openStore: async () => store });
    expect(result.exitCode).toBe(0);
    expect(result.out).toMatch(/1 instance\(s\), \d+ segment\(s\)/);
  });
});
