/**
 * The path guard's cost (npx tsx bench/guard.ts).
 *
 * 1. canonicalizePath alone on typical paths, in ns/op.
 * 2. A whole command (view a file, create a file) on the in-memory store through the real chain and
 *    terminal, with and without the guard (and with guard + quota for reference), in µs/op and as a
 *    ratio to the run without the guard. Variants run in interleaved rounds (order rotated each
 *    round) in one process, so drift of a shared machine hits all of them alike. Both the fastest
 *    and the median round are reported: on a loaded machine interference only ever adds time, so
 *    the fastest round is the better estimate of the cost itself.
 */
import { randomUUID } from 'node:crypto';
import { compose } from '../src/pipeline/compose.js';
import type { CommandContext, Middleware } from '../src/pipeline/context.js';
import { canonicalizePath, pathGuard } from '../src/pipeline/path-guard.js';
import { quota } from '../src/pipeline/quota.js';
import { terminal } from '../src/pipeline/terminal.js';
import { withErrorBoundary } from '../src/pipeline/error-result.js';
import { validateInput } from '../src/pipeline/validate.js';
import { MemoryStore } from '../src/store/memory.js';
import { DEFAULT_LIMITS } from '../src/tool/commands/env.js';
import { VaultLocks } from '../src/vault/locks.js';
import { createPlainCodecProvider } from '../src/vault/plain-codec.js';
import { StoreUserFiles } from '../src/vault/store-user-files.js';
import { median } from './stats.js';

const ROUNDS = 15;

function timeSync(iterations: number, fn: () => void): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) fn();
  return Number(process.hrtime.bigint() - start) / iterations;
}

async function timeAsync(iterations: number, fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) await fn();
  return Number(process.hrtime.bigint() - start) / iterations;
}

// 1. canonicalizePath alone.
const PATHS: Array<[string, string]> = [
  ['root', '/memories'],
  ['file', '/memories/notes.md'],
  ['nested', '/memories/projects/alpha/2024/plan-v2.md'],
  ['10 levels', `/memories/${Array.from({ length: 10 }, (_, i) => `dir${i}`).join('/')}/file.md`],
  ['unicode (NFD)', '/memories/café/résumé naïve.md'.normalize('NFD')],
  ['CJK', '/memories/日本語/会議メモ.md'],
  ['percent', '/memories/my%20notes/100%.txt'],
  ['rejected ..', '/memories/../etc/passwd'],
  ['rejected %c0%ae', '/memories/%c0%ae%c0%ae/etc/passwd'],
];
const sink: string[] = [];
const guardRows = PATHS.map(([name, path]) => {
  const run = () => {
    try {
      sink.push(canonicalizePath(path));
    } catch {
      sink.push('');
    }
    if (sink.length > 1000) sink.length = 0;
  };
  timeSync(20_000, run); // warm up
  return { name, nsPerOp: median(Array.from({ length: ROUNDS }, () => timeSync(50_000, run))) };
});

// 2. Whole commands with and without the guard.
const store = new MemoryStore();
const files = new StoreUserFiles(store, await createPlainCodecProvider().forUser('bench-user'));
const execute = terminal({ env: { locks: new VaultLocks(), limits: DEFAULT_LIMITS, createMode: 'overwrite' } });
// Without the guard the inputs below are already canonical; mark them so, as the guard would.
const trustCanonical: Middleware = async (ctx, next) => {
  ctx.pathsCanonical = true;
  return next();
};
const variants: Array<[string, Middleware]> = [
  ['without guard', compose([validateInput, trustCanonical])],
  ['with guard', compose([validateInput, pathGuard])],
  [
    'guard + quota',
    compose([validateInput, pathGuard, quota({ refreshEveryWrites: 1_000_000, refreshAfterMs: 3_600_000 })]),
  ],
];

async function runCommand(chain: Middleware, input: unknown): Promise<void> {
  const stats = { bytesRead: 0, bytesWritten: 0, requests: {} };
  const ctx: CommandContext = {
    requestId: randomUUID(),
    uid: files.uid,
    input,
    pathsCanonical: false,
    files,
    stats,
    decisions: {},
  };
  const result = await withErrorBoundary(
    () => chain(ctx, () => execute(ctx)),
    (e) => console.error(e),
  );
  if (result.isError) throw new Error(`bench command failed: ${String(result.content)}`);
}

const body = Array.from({ length: 40 }, (_, i) => `line ${i}: some remembered fact about the project`).join('\n');
await runCommand(variants[0]![1], { command: 'create', path: '/memories/projects/alpha/notes.md', file_text: body });
const COMMANDS: Array<[string, unknown, number]> = [
  ['view file', { command: 'view', path: '/memories/projects/alpha/notes.md' }, 3000],
  ['create file', { command: 'create', path: '/memories/projects/alpha/scratch.md', file_text: body }, 1500],
];
const commandRows: Array<{
  command: string;
  variant: string;
  minUs: number;
  minRatio: number;
  medianUs: number;
  medianRatio: number;
}> = [];
for (const [command, input, iterations] of COMMANDS) {
  for (const [, chain] of variants) await timeAsync(iterations / 3, () => runCommand(chain, input)); // warm up
  const samples = new Map<string, number[]>(variants.map(([name]) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    // Rotate the order every round so that no variant always runs right after another.
    for (let k = 0; k < variants.length; k++) {
      const [name, chain] = variants[(round + k) % variants.length]!;
      samples.get(name)!.push(await timeAsync(iterations, () => runCommand(chain, input)));
    }
  }
  const baseline = samples.get('without guard')!;
  for (const [name] of variants) {
    const own = samples.get(name)!;
    commandRows.push({
      command,
      variant: name,
      minUs: Math.min(...own) / 1000,
      minRatio: Math.min(...own) / Math.min(...baseline),
      medianUs: median(own) / 1000,
      medianRatio: median(own) / median(baseline),
    });
  }
}

console.log('\ncanonicalizePath (median of %d rounds)', ROUNDS);
console.log('| path | ns/op |');
console.log('|---|---:|');
for (const row of guardRows) console.log(`| ${row.name} | ${row.nsPerOp.toFixed(0)} |`);
console.log('\nOne command on MemoryStore through validate -> [guard] -> terminal (%d interleaved rounds)', ROUNDS);
console.log('| command | chain | fastest µs/op | ratio | median µs/op | ratio |');
console.log('|---|---|---:|---:|---:|---:|');
for (const r of commandRows)
  console.log(
    `| ${r.command} | ${r.variant} | ${r.minUs.toFixed(2)} | ${r.minRatio.toFixed(3)} | ${r.medianUs.toFixed(2)} | ${r.medianRatio.toFixed(3)} |`,
  );
