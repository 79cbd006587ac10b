/**
 * Throughput of 64 users on one store served by 1 or 2 processes (each with half the users), on the
 * SQLite store (one file, durability=full) and on the directory store, in one run:
 *   npx tsx bench/processes.ts [commands]
 * Each user runs create, view, str_replace, view dir on its own files (bench/goals.ts's mix);
 * `commands` in all per row (default 4,096), after one untimed row. The parent makes the store and
 * its deployment record first; the processes start together and the row's time runs from the
 * first start to the last finish. What a host gets from a process per core (docs/stores.md).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createVault } from '../src/index.js';
import { formatNumber, mustRun, printTable, userMix } from './stats.js';

const USERS = 64;

/** One process's share: `users` users from `first`, `rounds` rounds of the mix each. */
async function child(url: string, masterKey: string, tag: string, first: number, users: number, rounds: number) {
  const vault = await createVault({ store: url, encryption: { masterKey }, history: true });
  process.send?.('ready');
  await new Promise<void>((resolve) => process.once('message', () => resolve()));
  await Promise.all(
    Array.from({ length: users }, (_, u) => userMix((input) => mustRun(vault, `${tag}-${first + u}`, input), rounds)),
  );
  await vault.close();
}

/** Runs `processes` children at once on `url`; answers the row's commands per second. */
async function row(url: string, masterKey: string, processes: number, tag: string, commands: number): Promise<number> {
  const rounds = Math.max(1, Math.round(commands / 4 / USERS));
  const each = USERS / processes;
  const self = fileURLToPath(import.meta.url);
  const children = Array.from({ length: processes }, (_, p) =>
    spawn(
      process.execPath,
      [...process.execArgv, self, 'child', url, masterKey, tag, String(p * each), String(each), String(rounds)],
      { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
    ),
  );
  const exited = children.map(
    (c) =>
      new Promise<void>((resolve, reject) =>
        c.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`)))),
      ),
  );
  await Promise.all(children.map((c) => new Promise<void>((resolve) => c.once('message', () => resolve()))));
  const t0 = performance.now();
  for (const c of children) c.send('go');
  await Promise.all(exited);
  return (rounds * 4 * USERS) / ((performance.now() - t0) / 1000);
}

async function main(): Promise<void> {
  const commands = Number(process.argv[2] ?? 4096);
  const root = await mkdtemp(join(tmpdir(), 'memvault-procs-'));
  const masterKey = randomBytes(32).toString('base64');
  try {
    const stores: Array<[string, string]> = [
      ['SQLite store', `sqlite:${join(root, 'store.db')}`],
      ['directory store', pathToFileURL(join(root, 'dir')).href],
    ];
    const rows: Array<Array<string | number>> = [];
    for (const [label, url] of stores) {
      await (await createVault({ store: url, encryption: { masterKey } })).close(); // the deployment record, once
      await row(url, masterKey, 2, 'warm', 1024);
      for (const processes of [1, 2]) {
        const perSecond = await row(url, masterKey, processes, `p${processes}`, commands);
        rows.push([label, String(processes), formatNumber(perSecond)]);
      }
    }
    const load = loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
    console.log(`\n${USERS} users on one store, served by 1 or 2 processes (commands/s; load ${load})\n`);
    printTable(['store', 'processes', 'commands/s'], rows);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'child') {
  const [, , , url, masterKey, tag, first, users, rounds] = process.argv;
  await child(url!, masterKey!, tag!, Number(first), Number(users), Number(rounds));
} else {
  await main();
}
