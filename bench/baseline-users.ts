/**
 * Throughput with many users against the directory store #43 was measured on: the users' mix of
 * bench/goals.ts (create, view, str_replace, view dir; history and the audit log on) with `users`
 * users at once, each run a child process on a fresh store, in three columns whose runs alternate:
 * the base checkout's directory store (`file://`), this checkout's directory store, and this
 * checkout's SQLite store. The median of each column and SQLite's ratio to both directory stores.
 * The base is the last commit before the SQLite store (fa5dec2), the directory store as it was
 * when the goal "at least 5x today's directory store" was set; the directory store got faster
 * since (the vault's shared paths: the path memo, the quota's sums, the chain), so this checkout's
 * own directory store is the stricter column and is shown beside it.
 *   git worktree add /tmp/issue-base fa5dec2 && ln -s "$PWD/node_modules" /tmp/issue-base/node_modules
 *   npx tsx bench/baseline-users.ts /tmp/issue-base [users=64] [runs=3] [commands=4096]
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { formatNumber, median, printTable, usersMixPerSecond } from './stats.js';

interface AnyVault {
  run(user: string, input: Record<string, unknown>): Promise<{ isError?: boolean; content: unknown }>;
  close(): Promise<void>;
}

/** In the child: commands/s of one checkout's store for `users` users, after one untimed row. */
async function child(checkout: string, kind: 'file' | 'sqlite', users: number, commands: number): Promise<void> {
  const entry = (await import(pathToFileURL(join(checkout, 'src/index.ts')).href)) as {
    createVault(options: Record<string, unknown>): Promise<AnyVault>;
  };
  const root = await mkdtemp(join(tmpdir(), 'memvault-baseline-users-'));
  try {
    const vault = await entry.createVault({
      store: kind === 'file' ? pathToFileURL(join(root, 'store')).href : `sqlite:${join(root, 'store.db')}`,
      encryption: { masterKey: randomBytes(32).toString('base64') },
      history: true,
      audit: { file: join(root, 'audit.jsonl') },
    });
    const run = async (user: string, input: Record<string, unknown>) => {
      const result = await vault.run(user, input);
      if (result.isError) throw new Error(`${String(input['command'])} failed: ${JSON.stringify(result.content)}`);
    };
    const perSecond = await usersMixPerSecond(run, users, commands);
    await vault.close();
    console.log(String(perSecond));
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

function main(): void {
  const baseDir = process.argv[2];
  const users = Number(process.argv[3] ?? 64);
  const runs = Number(process.argv[4] ?? 3);
  const commands = Number(process.argv[5] ?? 4096);
  if (!baseDir || ![users, runs, commands].every((n) => Number.isInteger(n) && n > 0)) {
    console.error('usage: npx tsx bench/baseline-users.ts <base checkout> [users] [runs] [commands]');
    process.exit(2);
  }
  const self = fileURLToPath(import.meta.url);
  const here = resolve(fileURLToPath(new URL('..', import.meta.url)));
  const columns: Array<{ label: string; checkout: string; kind: 'file' | 'sqlite'; values: number[] }> = [
    { label: `directory store, ${baseDir}`, checkout: resolve(baseDir), kind: 'file', values: [] },
    { label: 'directory store, this checkout', checkout: here, kind: 'file', values: [] },
    { label: 'SQLite store, this checkout', checkout: here, kind: 'sqlite', values: [] },
  ];
  for (let r = 0; r < runs; r++) {
    // The order turns every run, so that a drift of the machine does not favour one column.
    const order = r % 2 === 0 ? columns : [...columns].reverse();
    for (const column of order) {
      const out = execFileSync(
        process.execPath,
        [...process.execArgv, self, 'child', column.checkout, column.kind, String(users), String(commands)],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
      );
      column.values.push(Number(out.trim().split('\n').pop()));
    }
  }
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  console.log(
    `\n${users} users, commands/s of ${runs} runs each, alternating (load ${load}; node ${process.version})\n`,
  );
  const sqlite = median(columns[2]!.values);
  printTable(
    ['store', 'runs', 'median', 'SQLite / this'],
    columns.map((c) => [
      c.label,
      c.values.map((n) => formatNumber(n)).join(' '),
      formatNumber(median(c.values)),
      c.kind === 'file' ? `${(sqlite / median(c.values)).toFixed(2)}x` : '',
    ]),
  );
}

if (process.argv[2] === 'child')
  await child(process.argv[3]!, process.argv[4] as 'file' | 'sqlite', Number(process.argv[5]), Number(process.argv[6]));
else main();
