/**
 * Two checkouts' throughput with many users on the SQLite store (durability=full), measured in one
 * run: each run is a child process on its own database, running bench/goals.ts's users' mix (one
 * untimed row, then `commands` commands), the two checkouts' runs alternating, `pairs` pairs; the
 * median of each column and their ratio. A child per run, as two checkouts in one process would
 * share its one thread (bench/checkouts.ts does that for one command at a time).
 *   git worktree add /tmp/base <rev> && ln -s "$PWD/node_modules" /tmp/base/node_modules
 *   npx tsx bench/checkouts-users.ts /tmp/base . [users=64] [pairs=5] [commands=4096]
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { formatNumber, median, printTable, usersMixPerSecond } from './stats.js';
import type * as Stats from './stats.js';

/** In the child: one checkout's commands/s for `users` users. */
async function child(checkout: string, users: number, commands: number): Promise<void> {
  const stats = (await import(pathToFileURL(join(checkout, 'bench/stats.ts')).href)) as typeof Stats;
  const root = await mkdtemp(join(tmpdir(), 'memvault-checkouts-users-'));
  try {
    // With the audit log, as bench/goals.ts runs the same mix.
    const vault = await stats.benchVault(`sqlite:${join(root, 'store.db')}`, {
      history: true,
      audit: { file: join(root, 'audit.jsonl') },
    });
    // The mix and its timing are this checkout's, so both checkouts run the very same workload.
    const perSecond = await usersMixPerSecond((user, input) => stats.mustRun(vault, user, input), users, commands);
    await vault.close();
    console.log(String(perSecond));
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

function main(): void {
  const [baseDir, newDir] = [process.argv[2], process.argv[3]];
  const users = Number(process.argv[4] ?? 64);
  const pairs = Number(process.argv[5] ?? 5);
  const commands = Number(process.argv[6] ?? 4096);
  if (!baseDir || !newDir || ![users, pairs, commands].every((n) => Number.isInteger(n) && n > 0)) {
    console.error('usage: npx tsx bench/checkouts-users.ts <base checkout> <new checkout> [users] [pairs] [commands]');
    process.exit(2);
  }
  const self = fileURLToPath(import.meta.url);
  const run = (checkout: string) =>
    Number(
      execFileSync(
        process.execPath,
        [...process.execArgv, self, 'child', resolve(checkout), String(users), String(commands)],
        {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      ).trim(),
    );
  const base: number[] = [];
  const next: number[] = [];
  for (let p = 0; p < pairs; p++) {
    // The order alternates, so that a drift of the machine does not favour one column.
    if (p % 2 === 0) {
      base.push(run(baseDir));
      next.push(run(newDir));
    } else {
      next.push(run(newDir));
      base.push(run(baseDir));
    }
  }
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  console.log(`\n${users} users, SQLite store, commands/s of ${pairs} runs each, alternating (load ${load})\n`);
  printTable(
    ['checkout', 'runs', 'median'],
    [
      [baseDir, base.map((n) => formatNumber(n)).join(' '), formatNumber(median(base))],
      [newDir, next.map((n) => formatNumber(n)).join(' '), formatNumber(median(next))],
      ['new / base', '', `${(median(next) / median(base)).toFixed(2)}x`],
    ],
  );
}

if (process.argv[2] === 'child') await child(process.argv[3]!, Number(process.argv[4]), Number(process.argv[5]));
else main();
