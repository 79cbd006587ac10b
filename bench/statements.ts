/**
 * Where a command's time goes in SQLite: one command N times on the SQLite store (encryption, history,
 * the default chain; FILES files of 4 KiB below /memories/c, default 100), with every node:sqlite call
 * timed (the statement's SQL, calls and µs per command) and the COMMIT's percentiles (a COMMIT that
 * takes the WAL past wal_autocheckpoint runs the checkpoint and its two fsyncs on the event loop):
 *   npx tsx bench/statements.ts <str_replace|rename|create|delete> [n] [full|normal]
 * A rename moves each file to /memories/r and back on alternate rounds; str_replace alternates two words.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync, StatementSync } from 'node:sqlite';
import { benchVault, formatNumber, mustRun, NOTE_4K, printTable } from './stats.js';

const command = process.argv[2] ?? 'str_replace';
const n = Number(process.argv[3] ?? 2000);
const durability = process.argv[4] ?? 'full';
const files = Number(process.env['FILES'] ?? 100);
if (durability !== 'full' && durability !== 'normal') throw new Error('durability: full or normal');

/** µs and calls by SQL; COMMIT durations apart. Counting starts when `counting` is set. */
const spent = new Map<string, { ms: number; calls: number }>();
const commits: number[] = [];
let counting = false;
function timed<A extends unknown[], R>(label: (self: never, args: A) => string, fn: (...args: A) => R) {
  return function (this: never, ...args: A): R {
    if (!counting) return fn.apply(this, args);
    const t0 = performance.now();
    try {
      return fn.apply(this, args);
    } finally {
      const ms = performance.now() - t0;
      const key = label(this, args);
      const entry = spent.get(key) ?? { ms: 0, calls: 0 };
      entry.ms += ms;
      entry.calls += 1;
      spent.set(key, entry);
      if (key === 'COMMIT') commits.push(ms);
    }
  };
}
const statementProto = StatementSync.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
for (const method of ['run', 'get', 'all'] as const) {
  const sqlOf = (self: StatementSync) => self.sourceSQL.replace(/\s+/g, ' ').slice(0, 60);
  statementProto[method] = timed((self: never) => `${method} ${sqlOf(self)}`, statementProto[method]!);
}
const dbProto = DatabaseSync.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
dbProto['exec'] = timed((_self: never, args: unknown[]) => String(args[0]), dbProto['exec']!);

const root = await mkdtemp(join(tmpdir(), 'memvault-stmts-'));
try {
  const vault = await benchVault(
    `sqlite:${join(root, 'store.db')}${durability === 'normal' ? '?durability=normal' : ''}`,
  );
  const run = (input: Record<string, unknown>) => mustRun(vault, 'stmt-user', input);
  for (let i = 0; i < files; i++) await run({ command: 'create', path: `/memories/c/f${i}.md`, file_text: NOTE_4K });
  const inputs: Record<string, (k: number, even: boolean, i: number) => Record<string, unknown>> = {
    str_replace: (k, even) => ({
      command: 'str_replace',
      path: `/memories/c/f${k}.md`,
      old_str: even ? 'first line' : 'FIRST line',
      new_str: even ? 'FIRST line' : 'first line',
    }),
    rename: (k, even) => ({
      command: 'rename',
      old_path: `/memories/${even ? 'c' : 'r'}/f${k}.md`,
      new_path: `/memories/${even ? 'r' : 'c'}/f${k}.md`,
    }),
    create: (_k, _even, i) => ({ command: 'create', path: `/memories/n/f${i}.md`, file_text: NOTE_4K }),
    delete: (_k, _even, i) => ({ command: 'delete', path: `/memories/n/f${i}.md` }),
  };
  const input = inputs[command];
  if (!input) throw new Error(`unknown command ${command}: ${Object.keys(inputs).join(', ')}`);
  const at = (i: number) => input(i % files, Math.floor(i / files) % 2 === 0, i);
  const warm = Math.min(200, n);
  // delete needs the files it deletes: created first, and warmed on creates.
  if (command === 'delete')
    for (let i = 0; i < n + warm; i++)
      await run({ command: 'create', path: `/memories/n/f${i}.md`, file_text: NOTE_4K });
  for (let i = 0; i < warm; i++) await run(at(i));
  counting = true;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = warm; i < warm + n; i++) await run(at(i));
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  counting = false;
  await vault.close();
  const us = (ms: number) => formatNumber((ms * 1000) / n);
  const rows = [...spent].sort((a, b) => b[1].ms - a[1].ms);
  const inSqlite = rows.reduce((sum, [, e]) => sum + e.ms, 0);
  console.log(`\n${command} x${n}, durability=${durability}, ${files} files: in node:sqlite calls per command\n`);
  printTable(
    ['call', 'calls / command', 'µs / command', 'µs / call'],
    [
      ...rows.map(([sql, e]) => [sql, formatNumber(e.calls / n), us(e.ms), formatNumber((e.ms * 1000) / e.calls)]),
      ['all node:sqlite calls', '', us(inSqlite), ''],
      ['the whole command (wall)', '', us(wall), ''],
      ['CPU (user + system, all threads)', '', formatNumber((cpu.user + cpu.system) / n), ''],
    ],
  );
  const sorted = [...commits].sort((a, b) => a - b);
  const q = (p: number) => formatNumber(sorted[Math.floor(p * (sorted.length - 1))]! * 1000);
  const slow = sorted.filter((ms) => ms > 1);
  const slowMs = slow.reduce((a, b) => a + b, 0);
  console.log(
    `\nCOMMIT µs: p50 ${q(0.5)}, p90 ${q(0.9)}, p99 ${q(0.99)}, max ${q(1)}; ${slow.length} over 1 ms (checkpoints), ${us(slowMs)} µs per command`,
  );
} finally {
  await rm(root, { recursive: true, force: true });
}
