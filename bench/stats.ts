/**
 * Small helpers shared by the benchmarks: medians, timing loops, aligned tables, the 4 KiB note, the
 * concurrent users' mix, and a vault as the benches open it.
 */
import { randomBytes } from 'node:crypto';
import { createEncryptionFromConfig } from '../src/crypto/index.js';
import { createVault, type Vault } from '../src/index.js';
import { openStore } from '../src/store/open.js';

/**
 * A 4 KiB memory note whose first line is unique, so that a str_replace of 'first line' matches
 * exactly once (an ambiguous old_str is refused, and a bench would measure the error path).
 */
export const NOTE_4K = 'first line\n' + 'memory line with some words in it, about 60 characters long\n'.repeat(68);

/**
 * The concurrent users' mix (bench/goals.ts, bench/processes.ts): `rounds` times create, view,
 * str_replace and view dir of one user's own files, each command through `run`.
 */
export async function userMix(
  run: (input: Record<string, unknown>) => Promise<unknown>,
  rounds: number,
): Promise<void> {
  for (let r = 0; r < rounds; r++) {
    const path = `/memories/load/f${r}.md`;
    await run({ command: 'create', path, file_text: NOTE_4K });
    await run({ command: 'view', path });
    await run({ command: 'str_replace', path, old_str: 'first line', new_str: 'First line' });
    await run({ command: 'view', path: '/memories/load' });
  }
}
/**
 * Commands/s of `users` users at once, each running userMix on its own files (`commands` in all, a
 * quarter per step of the mix), after one untimed row of the same (the JIT, the statement caches and
 * the first fsyncs are the process's start, not its throughput).
 */
export async function usersMixPerSecond(
  run: (user: string, input: Record<string, unknown>) => Promise<unknown>,
  users: number,
  commands: number,
): Promise<number> {
  const rounds = Math.max(1, Math.round(commands / 4 / users));
  const row = (tag: string) =>
    Promise.all(Array.from({ length: users }, (_, u) => userMix((input) => run(`${tag}-${u}`, input), rounds)));
  await row('warm');
  const t0 = performance.now();
  await row('timed');
  return (rounds * 4 * users) / ((performance.now() - t0) / 1000);
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Runs `fn` `iterations` times (after `warmup` runs) and returns each run's milliseconds. */
export async function timeRuns(iterations: number, fn: (i: number) => Promise<unknown>, warmup = 5): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn(-1 - i);
  const out: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now();
    await fn(i);
    out.push(performance.now() - t0);
  }
  return out;
}

export function printTable(headers: string[], rows: Array<Array<string | number>>): void {
  const cells = [headers, ...rows.map((r) => r.map((c) => (typeof c === 'number' ? formatNumber(c) : c)))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => String(r[i] ?? '').length)));
  const line = (r: Array<string | number>) => `| ${r.map((c, i) => String(c).padEnd(widths[i]!)).join(' | ')} |`;
  console.log(line(cells[0]!));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of cells.slice(1)) console.log(line(r));
}

export function formatNumber(n: number): string {
  if (n === 0) return '0';
  if (Math.abs(n) >= 100) return n.toFixed(0);
  if (Math.abs(n) >= 10) return n.toFixed(1);
  if (Math.abs(n) >= 1) return n.toFixed(2);
  return n.toFixed(3);
}

/** A vault on the store at `url`, encrypted under a fresh master key, memvault's defaults otherwise (and `extra`). */
export async function benchVault(url: string, extra: Record<string, unknown> = {}): Promise<Vault> {
  const store = await openStore(url);
  const encryption = await createEncryptionFromConfig({
    store,
    config: { masterKey: randomBytes(32).toString('base64') },
  });
  return createVault({ store, codec: encryption.codecProvider, ...extra });
}

/** `files` 4 KiB notes of `user`, /memories/f0.md and on, each starting 'first line'. */
export async function seedFiles(vault: Vault, user: string, files: number): Promise<void> {
  for (let i = 0; i < files; i++)
    await mustRun(vault, user, { command: 'create', path: `/memories/f${i}.md`, file_text: NOTE_4K });
}

/** The i-th edit of `files` seeded notes: each in turn, 'first' to 'FIRST' in one round, back in the next, so every edit writes. */
export function editInput(i: number, files: number): Record<string, unknown> {
  const [from, to] = Math.floor(i / files) % 2 === 0 ? ['first', 'FIRST'] : ['FIRST', 'first'];
  return { command: 'str_replace', path: `/memories/f${i % files}.md`, old_str: `${from} line`, new_str: `${to} line` };
}

/** Runs one command of `user` that must succeed: a bench that counted failed commands would measure nothing. */
export async function mustRun(vault: Vault, user: string, input: Record<string, unknown>): Promise<void> {
  const result = await vault.run(user, input);
  if (result.isError) throw new Error(`${String(input['command'])} failed: ${JSON.stringify(result.content)}`);
}
