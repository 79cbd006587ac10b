/**
 * One command, N times, on an embedded store (file, the default, sqlite or sqlite-normal) with encryption and the
 * default chain, for system-call counts and CPU profiles of the store's hot path:
 *   strace -c -f -o /tmp/sc.txt npx tsx bench/syscalls.ts create 200 [file|sqlite|sqlite-normal]
 *   node --cpu-prof --import tsx bench/syscalls.ts rename 200
 * The setup (seeding the files renames and deletes work on) runs before the marker line is printed
 * and is counted too: run with `seed` as the command to get the setup's own counts and subtract.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchVault, mustRun, NOTE_4K } from './stats.js';

const command = process.argv[2] ?? 'create';
const n = Number(process.argv[3] ?? 200);
const kind = process.argv[4] ?? 'file';
if (kind !== 'file' && kind !== 'sqlite' && kind !== 'sqlite-normal')
  throw new Error(`unknown store ${kind}: file, sqlite or sqlite-normal (durability=normal: no fsync per commit)`);

const root = await mkdtemp(join(tmpdir(), 'memvault-sc-'));
try {
  const url =
    kind === 'file'
      ? pathToFileURL(root).href
      : `sqlite:${join(root, 'store.db')}${kind === 'sqlite-normal' ? '?durability=normal' : ''}`;
  const vault = await benchVault(url);
  const run = (input: Record<string, unknown>) => mustRun(vault, 'sc-user', input);
  if (command !== 'create')
    for (let i = 0; i < n; i++) await run({ command: 'create', path: `/memories/c/f${i}.md`, file_text: NOTE_4K });
  const inputs: Record<string, (i: number) => Record<string, unknown>> = {
    seed: () => ({ command: 'view', path: '/memories/c/f0.md' }),
    create: (i) => ({ command: 'create', path: `/memories/n/f${i}.md`, file_text: NOTE_4K }),
    view: (i) => ({ command: 'view', path: `/memories/c/f${i}.md` }),
    str_replace: (i) => ({
      command: 'str_replace',
      path: `/memories/c/f${i}.md`,
      old_str: 'first line',
      new_str: 'FIRST line',
    }),
    insert: (i) => ({ command: 'insert', path: `/memories/c/f${i}.md`, insert_line: 1, insert_text: `inserted ${i}` }),
    rename: (i) => ({ command: 'rename', old_path: `/memories/c/f${i}.md`, new_path: `/memories/r/f${i}.md` }),
    delete: (i) => ({ command: 'delete', path: `/memories/c/f${i}.md` }),
  };
  const input = inputs[command];
  if (!input) throw new Error(`unknown command ${command}`);
  const t0 = performance.now();
  for (let i = 0; i < (command === 'seed' ? 1 : n); i++) await run(input(i));
  console.log(`${command} x${n} (${kind}): ${((performance.now() - t0) / n).toFixed(3)} ms each`);
  await vault.close();
} finally {
  await rm(root, { recursive: true, force: true });
}
