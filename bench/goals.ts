/**
 * The embedded store's goals that bench/commands.ts does not measure, in one run:
 *   npx tsx bench/goals.ts [--quick] [cpu|users|scale ...]
 * memvault with its defaults (encryption, history, the default chain) and the audit log (a file
 * sink: each record MACed and written with a blocking write before the answer) on the SQLite store
 * (durability=full) and on the directory store (file://), each in its own temp directory:
 * - CPU per 4 KiB edit: process.cpuUsage() (user + system, all threads) around N str_replace
 *   commands on 4 KiB files, divided by N (goal: 300 µs on SQLite), SQLite with durability=normal
 *   (no fsync per edit) and the memory store (no storage engine) beside them, one edit at a time,
 *   and the same edits by 16 users at once (the process never idles: their fsyncs are shared),
 *   the figure for a process that serves many users (docs/performance.md says why both are shown):
 *   their first round after the vault opened, and the steady state (the median of five more);
 * - throughput with 16 and 64 concurrent users on one process: each user runs create, view,
 *   str_replace, view on its own files, the same 4,096 commands in every row, after one untimed
 *   row of the same shape on each store (JIT, statement caches, the process's first fsyncs);
 *   commands/s, p50, p99 (goal: SQLite at least 5x the directory store);
 * - scaling: a directory of 1,000 and 10,000 files (4 KiB each) on SQLite: view, rename, delete of
 *   the whole directory, with the growth order k (time ~ n^k between the two sizes; 1 is linear).
 * The load average is printed with each part (the machine is shared).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Vault } from '../src/index.js';
import { benchVault, editInput, formatNumber, mustRun, NOTE_4K, printTable, seedFiles, userMix } from './stats.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const parts = args.filter((a) => !a.startsWith('--'));
const wants = (part: string) => parts.length === 0 || parts.includes(part);

type Kind = 'sqlite' | 'sqlite-normal' | 'file' | 'memory';
const KINDS: Array<[Kind, string]> = [
  ['sqlite', 'SQLite store'],
  ['file', 'directory store'],
];

/** Commands in each row of the throughput table (a quarter of them per step of the mix). */
const COMMANDS_PER_ROW = quick ? 1024 : 4096;

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

async function openVault(root: string, kind: Kind, name: string, extra: Record<string, unknown> = {}): Promise<Vault> {
  const url =
    kind === 'memory'
      ? 'memory:'
      : kind === 'file'
        ? pathToFileURL(join(root, name)).href
        : `sqlite:${join(root, `${name}.db`)}${kind === 'sqlite-normal' ? '?durability=normal' : ''}`;
  // The audit log as a deployment keeps it: a file sink, each MACed record written before the answer.
  return benchVault(url, { history: true, audit: { file: join(root, `${name}.audit.jsonl`) }, ...extra });
}

/** A row of the CPU table: `count` edits measured by process.cpuUsage and `wall` ms. */
function cpuRow(label: string, count: number, cpu: NodeJS.CpuUsage, wall: number): Array<string | number> {
  return [
    label,
    count,
    formatNumber((cpu.user + cpu.system) / count),
    formatNumber(cpu.user / count),
    formatNumber(cpu.system / count),
    formatNumber((wall * 1000) / count),
  ];
}

/** CPU per str_replace of a 4 KiB file (the edit alternates two words, so every command writes). */
async function cpuPerEdit(root: string): Promise<void> {
  const edits = quick ? 300 : 2000;
  const files = 50;
  const rows: Array<Array<string | number>> = [];
  // The memory store calibrates: the same edits with no storage engine (bench/cpu.ts's setting). SQLite with
  // durability=normal beside it: the difference to the default is what the fsync per edit costs.
  // The last row waits 1 ms after each edit (a timer, no I/O): what going idle and waking costs a process
  // that waits for something between commands, as the default waits for its fsync.
  const kinds: Array<[Kind, string, number]> = [
    ...KINDS.map(([kind, label]): [Kind, string, number] => [kind, label, 0]),
    ['sqlite-normal', 'SQLite, durability=normal', 0],
    ['memory', 'memory store', 0],
    ['memory', 'memory store, idle 1 ms after each edit', 1],
  ];
  for (const [kind, label, idleMs] of kinds) {
    const vault = await openVault(root, kind, `cpu-${kind}-${idleMs}`);
    await seedFiles(vault, 'cpu', files);
    const edit = (i: number) => mustRun(vault, 'cpu', editInput(i, files));
    for (let i = 0; i < files * 2; i++) await edit(i); // warm up: JIT, key and name caches
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < edits; i++) {
      await edit(i);
      if (idleMs > 0) await new Promise((resolve) => setTimeout(resolve, idleMs));
    }
    const cpu = process.cpuUsage(cpu0);
    const wall = performance.now() - t0;
    await vault.close();
    rows.push(cpuRow(label, edits, cpu, wall));
  }
  const concurrent = await concurrentEdits(root, edits);
  rows.push(...concurrent.rows);
  console.log(`\nCPU per 4 KiB edit (str_replace, process.cpuUsage around the edits; load ${load()})\n`);
  printTable(['store', 'edits', 'CPU µs/edit', 'user µs', 'system µs', 'wall µs/edit'], rows);
  console.log(
    `\nsteady: the median of ${STEADY_ROUNDS} rounds after the first, CPU µs/edit ${concurrent.steadyRounds.join(', ')}`,
  );
}

/** Measured rounds of the 16 users' edits after the first: their median is the steady state. */
const STEADY_ROUNDS = 5;

/**
 * The same edits on SQLite by 16 users at once, each editing its own files in turn: two rows of the
 * table above. The first round right after the vault opened (what a process pays while V8 is still
 * compiling the hot path: the JIT needs some thousands of commands), then the median of STEADY_ROUNDS
 * more rounds of the same edits on the same vault (what a serving process pays; each round's CPU is
 * printed below the table).
 */
async function concurrentEdits(
  root: string,
  edits: number,
): Promise<{ rows: Array<Array<string | number>>; steadyRounds: string[] }> {
  const users = 16;
  const filesEach = 4;
  const vault = await openVault(root, 'sqlite', 'cpu-users');
  const user = (u: number) => `cpu-${u}`;
  for (let u = 0; u < users; u++) await seedFiles(vault, user(u), filesEach);
  const editsOf = (u: number, count: number) => async () => {
    for (let i = 0; i < count; i++) await mustRun(vault, user(u), editInput(i, filesEach));
  };
  const all = (count: number) => Promise.all(Array.from({ length: users }, (_, u) => editsOf(u, count)()));
  await all(filesEach * 2); // warm up, and every file back to 'first'
  // A whole number of passes over each user's files, twice (both words), so every round ends where it began.
  const each = Math.ceil(edits / users / (filesEach * 2)) * filesEach * 2;
  const round = async () => {
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    await all(each);
    return { cpu: process.cpuUsage(cpu0), wall: performance.now() - t0 };
  };
  const first = await round();
  const steady: Array<Awaited<ReturnType<typeof round>>> = [];
  for (let r = 0; r < STEADY_ROUNDS; r++) steady.push(await round());
  await vault.close();
  const total = (cpu: NodeJS.CpuUsage) => cpu.user + cpu.system;
  steady.sort((a, b) => total(a.cpu) - total(b.cpu));
  const median = steady[Math.floor(STEADY_ROUNDS / 2)]!;
  return {
    rows: [
      cpuRow(`SQLite store, ${users} users at once, first round`, each * users, first.cpu, first.wall),
      cpuRow(`SQLite store, ${users} users at once, steady`, each * users, median.cpu, median.wall),
    ],
    // CPU µs per edit of each steady round (sorted), printed under the CPU table.
    steadyRounds: steady.map((r) => formatNumber(total(r.cpu) / (each * users))),
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

/** `users` users at once on one vault, each running create, view, str_replace, view on its own files. */
async function throughput(
  vault: Vault,
  users: number,
  tag: string,
): Promise<{ perSecond: number; p50: number; p99: number }> {
  const rounds = Math.max(1, Math.round(COMMANDS_PER_ROW / 4 / users));
  const latencies: number[] = [];
  const one = async (user: string, input: Record<string, unknown>) => {
    const t0 = performance.now();
    await mustRun(vault, user, input);
    latencies.push(performance.now() - t0);
  };
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: users }, (_, u) => userMix((input) => one(`${tag}-${users}-${u}`, input), rounds)),
  );
  const ms = performance.now() - t0;
  latencies.sort((x, y) => x - y);
  return {
    perSecond: (latencies.length / ms) * 1000,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
  };
}

async function usersRows(root: string): Promise<void> {
  const rows: Array<Array<string | number>> = [];
  const vaults = new Map<Kind, Vault>();
  for (const [kind] of KINDS) vaults.set(kind, await openVault(root, kind, `users-${kind}`));
  // One untimed row on each store first: the JIT, the statement caches and the first fsyncs of a
  // file are the process's start, not its throughput.
  for (const [kind] of KINDS) await throughput(vaults.get(kind)!, 16, 'warm');
  for (const users of [16, 64]) {
    const measured = new Map<Kind, Awaited<ReturnType<typeof throughput>>>();
    // The stores in turn, twice, alternating which goes first; the better of the two runs of each.
    for (const round of [0, 1]) {
      const order = round === 0 ? KINDS : [...KINDS].reverse();
      for (const [kind] of order) {
        const m = await throughput(vaults.get(kind)!, users, `r${round}`);
        const best = measured.get(kind);
        if (!best || m.perSecond > best.perSecond) measured.set(kind, m);
      }
    }
    const sqlite = measured.get('sqlite')!;
    const file = measured.get('file')!;
    for (const [kind, label] of KINDS) {
      const m = measured.get(kind)!;
      rows.push([
        `${users} users`,
        label,
        formatNumber(m.perSecond),
        formatNumber(m.p50),
        formatNumber(m.p99),
        kind === 'sqlite' ? `${(sqlite.perSecond / file.perSecond).toFixed(2)}x` : '',
      ]);
    }
  }
  for (const vault of vaults.values()) await vault.close();
  console.log(
    `\nConcurrent users on one process (${formatNumber(COMMANDS_PER_ROW)} commands a row: create, view, str_replace, view dir; load ${load()})\n`,
  );
  printTable(['users', 'store', 'commands/s', 'p50 ms', 'p99 ms', 'SQLite / directory'], rows);
}

async function scaleRows(root: string): Promise<void> {
  const sizes = quick ? [100, 1000] : [1000, 10_000];
  // 11,000 files of 4 KiB: over the default quota (5,000 files, 10 MB a user), so it is raised.
  const vault = await openVault(root, 'sqlite', 'scale', {
    quota: { maxUserFiles: 20_000, maxUserBytes: 200_000_000 },
  });
  const times = new Map<string, number[]>();
  const timed = async (name: string, input: Record<string, unknown>) => {
    const t0 = performance.now();
    await mustRun(vault, 'scale', input);
    const list = times.get(name) ?? [];
    list.push(performance.now() - t0);
    times.set(name, list);
  };
  for (const n of sizes) {
    const dir = `/memories/d${n}`;
    for (let i = 0; i < n; i++)
      await mustRun(vault, 'scale', { command: 'create', path: `${dir}/f${i}.md`, file_text: NOTE_4K });
    await timed('view', { command: 'view', path: dir });
    await timed('rename', { command: 'rename', old_path: dir, new_path: `${dir}-moved` });
    await timed('delete', { command: 'delete', path: `${dir}-moved` });
  }
  await vault.close();
  const rows = [...times].map(([name, [small, large]]) => {
    const k = Math.log(large! / small!) / Math.log(sizes[1]! / sizes[0]!);
    return [`${name} dir`, formatNumber(small!), formatNumber(large!), k.toFixed(2)];
  });
  console.log(`\nA directory of ${sizes[0]} and ${sizes[1]} files on SQLite (ms; k: time ~ n^k; load ${load()})\n`);
  printTable(['command', `${sizes[0]} files`, `${sizes[1]} files`, 'k'], rows);
}

const root = await mkdtemp(join(tmpdir(), 'memvault-goals-'));
try {
  if (wants('cpu')) await cpuPerEdit(root);
  if (wants('users')) await usersRows(root);
  if (wants('scale')) await scaleRows(root);
} finally {
  await rm(root, { recursive: true, force: true });
}
