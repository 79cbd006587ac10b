/**
 * Cost of auditing per command: the audit middleware in front of a trivial terminal handler,
 * against the same chain without it, in one run. Run: npx tsx bench/audit.ts
 *
 * Each mode runs batches of commands; a batch's time divided by its size is one sample, and the
 * table shows the median sample. Async batches end with a flush, so the buffered writes are paid
 * for inside the measurement rather than left for after it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createAuditLogger, type AuditLogger } from '../src/pipeline/audit-logger.js';
import { compose } from '../src/pipeline/compose.js';
import type { CommandContext, CommandResult, Middleware } from '../src/pipeline/context.js';
import type { TreeFiles } from '../src/vault/tree-files.js';
import { median, printTable } from './stats.js';

interface Mode {
  name: string;
  batchSize: number;
  setup(dir: string): Promise<{ chain: Middleware; logger?: AuditLogger }>;
}

const BATCHES = 15;
const terminal = async (): Promise<CommandResult> => ({ content: 'ok', isError: false });

function context(i: number): CommandContext {
  const command = {
    command: 'str_replace' as const,
    path: `/memories/project/notes-${i % 50}.md`,
    old_str: 'a',
    new_str: 'b',
  };
  return {
    requestId: `bench-${i}`,
    uid: 'u_5e1f2a9c0b7d',
    input: command,
    command,
    pathsCanonical: true,
    files: {} as TreeFiles,
    stats: { bytesRead: 812, bytesWritten: 815, requests: { GET: 1, PUT: 1 } },
    decisions: {
      pii: { action: 'redacted', findings: { EMAIL: 1 } },
      quota: { checked: true, rule: 'user_bytes', limit: 10_485_760, used: 40960, delta: 3, allowed: true },
    },
  };
}

const audited =
  (file: string, options: Omit<Parameters<typeof createAuditLogger>[0], 'file'>) => async (dir: string) => {
    const logger = await createAuditLogger({ file: join(dir, file), ...options });
    return { chain: compose([logger.middleware()]), logger };
  };

const modes: Mode[] = [
  { name: 'no auditing', batchSize: 2000, setup: async () => ({ chain: compose([]) }) },
  { name: 'sync file (default)', batchSize: 1000, setup: audited('sync.jsonl', {}) },
  { name: 'async file (sync: false)', batchSize: 1000, setup: audited('async.jsonl', { sync: false }) },
  { name: 'sync file + fsync', batchSize: 40, setup: audited('fsync.jsonl', { fsync: true }) },
  // v2 records (what every encrypted deployment writes): one HMAC more per record.
  {
    name: 'sync file + MAC (v2)',
    batchSize: 1000,
    setup: audited('mac.jsonl', { macKey: new Uint8Array(32).fill(7) }),
  },
  // Several processes on one file (the CLI): lock file, head re-read and one write per record.
  {
    name: 'shared file + MAC (CLI)',
    batchSize: 200,
    setup: audited('shared.jsonl', { macKey: new Uint8Array(32).fill(7), shared: true }),
  },
];

const dir = mkdtempSync(join(tmpdir(), 'memvault-bench-audit-'));
try {
  const prepared = [];
  for (const mode of modes) {
    const { chain, logger } = await mode.setup(dir);
    // Warm-up: JIT and first-write effects out of the samples.
    for (let i = 0; i < Math.min(200, mode.batchSize); i++) await chain(context(i), terminal);
    await logger?.flush();
    prepared.push({ mode, chain, logger, samples: [] as number[] });
  }
  // Batches round-robin across modes, so load from other processes on the machine falls on every
  // mode alike and the ratios stay meaningful.
  for (let b = 0; b < BATCHES; b++) {
    for (const p of prepared) {
      const start = performance.now();
      for (let i = 0; i < p.mode.batchSize; i++) await p.chain(context(i), terminal);
      await p.logger?.flush();
      p.samples.push(((performance.now() - start) * 1000) / p.mode.batchSize);
    }
  }
  for (const p of prepared) await p.logger?.close();
  const baseline = median(prepared[0]!.samples);
  console.log(
    `audit middleware cost per command: median of ${BATCHES} batches per mode (node ${process.version}, ${process.platform})`,
  );
  printTable(
    ['mode', 'µs/command', 'audit cost µs', 'vs no auditing', 'commands/s'],
    prepared.map((p) => {
      const us = median(p.samples);
      return [p.mode.name, us, us - baseline, `${(us / baseline).toFixed(1)}x`, Math.round(1e6 / us)];
    }),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
