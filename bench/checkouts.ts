/**
 * Two checkouts of memvault in one process, on the embedded store with the defaults (encryption,
 * history, fsync), their commands interleaved call by call (the order alternating each round), so
 * that a before/after ratio is measured in one run: this machine's drift hits both columns alike,
 * where two bench runs one after the other can differ by half.
 *   git worktree add /tmp/base <rev> && ln -s "$PWD/node_modules" /tmp/base/node_modules
 *   npx tsx bench/checkouts.ts /tmp/base . 200 [file|sqlite]
 * Each checkout is loaded from its own sources; both must have the API used below (createVault,
 * createEncryptionFromConfig, FileStore.open or SqliteStore.open, Vault.handlers).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { median, NOTE_4K, printTable } from './stats.js';

type Handlers = Record<string, (input: Record<string, unknown>) => Promise<{ isError?: boolean }>>;
type Checkout = { handlers: Handlers; close: () => Promise<void> };

const [baseDir, newDir] = [process.argv[2], process.argv[3]];
const n = Number(process.argv[4] ?? 200);
const kind = process.argv[5] ?? 'file';
const PAUSE_MS = 2;
if (!baseDir || !newDir || !Number.isInteger(n) || n < 1 || (kind !== 'file' && kind !== 'sqlite')) {
  console.error('usage: npx tsx bench/checkouts.ts <base checkout> <new checkout> [rounds] [file|sqlite]');
  process.exit(2);
}

const commands: Array<{ name: string; input: (i: number) => Record<string, unknown> }> = [
  { name: 'create 4 KiB', input: (i) => ({ command: 'create', path: `/memories/n/f${i}.md`, file_text: NOTE_4K }) },
  { name: 'view file', input: (i) => ({ command: 'view', path: `/memories/c/f${i}.md` }) },
  { name: 'view dir', input: () => ({ command: 'view', path: '/memories' }) },
  {
    name: 'str_replace',
    input: (i) => ({
      command: 'str_replace',
      path: `/memories/c/f${i}.md`,
      old_str: 'first line',
      new_str: 'FIRST line',
    }),
  },
  {
    name: 'insert',
    input: (i) => ({ command: 'insert', path: `/memories/c/f${i}.md`, insert_line: 1, insert_text: `inserted ${i}` }),
  },
  {
    name: 'rename file',
    input: (i) => ({ command: 'rename', old_path: `/memories/c/f${i}.md`, new_path: `/memories/r/f${i}.md` }),
  },
  { name: 'delete file', input: (i) => ({ command: 'delete', path: `/memories/r/f${i}.md` }) },
];

async function load(checkout: string, dir: string): Promise<Checkout> {
  const from = (module: string) => import(pathToFileURL(join(resolve(checkout), 'src', module)).href);
  const [{ createVault }, { createEncryptionFromConfig }, stores] = await Promise.all([
    from('index.ts'),
    from('crypto/index.ts'),
    from(kind === 'file' ? 'store/file.ts' : 'store/sqlite.ts'),
  ]);
  const store =
    kind === 'file' ? await stores.FileStore.open(dir, { durable: true }) : await stores.SqliteStore.open(`${dir}.db`);
  const encryption = await createEncryptionFromConfig({
    store,
    config: { masterKey: randomBytes(32).toString('base64') },
  });
  const vault = await createVault({ store, codec: encryption.codecProvider });
  return { handlers: vault.handlers('bench-user') as Handlers, close: () => vault.close() };
}

const root = await mkdtemp(join(tmpdir(), 'memvault-checkouts-'));
try {
  const checkouts = [await load(baseDir, join(root, 'base')), await load(newDir, join(root, 'new'))];
  const run = async (c: Checkout, input: Record<string, unknown>): Promise<number> => {
    // Work an answered call leaves running (a lock file's removal) is let finish first, so that
    // neither column pays for the other's.
    await sleep(PAUSE_MS);
    const t0 = performance.now();
    const result = await c.handlers[String(input['command'])]!(input);
    const ms = performance.now() - t0;
    // A failed command measures nothing.
    if (result.isError) throw new Error(`${String(input['command'])} failed`);
    return ms;
  };
  // Seeded side by side too: files written last are younger on disk for both alike.
  for (let i = 0; i < n; i++)
    for (const c of checkouts) await run(c, { command: 'create', path: `/memories/c/f${i}.md`, file_text: NOTE_4K });
  console.log(`\nTwo checkouts in one run, ${kind} store, defaults (median ms of ${n} calls each, interleaved)\n`);
  const rows: Array<Array<string | number>> = [];
  for (const { name, input } of commands) {
    const times: [number[], number[]] = [[], []];
    for (let i = 0; i < n; i++) {
      for (const side of i % 2 === 0 ? [0, 1] : [1, 0])
        times[side as 0 | 1].push(await run(checkouts[side]!, input(i)));
    }
    const [base, next] = [median(times[0]), median(times[1])];
    rows.push([name, base, next, `${(next / base).toFixed(2)}x`]);
  }
  printTable(['command', 'base', 'new', 'new / base'], rows);
  for (const c of checkouts) await c.close();
} finally {
  await rm(root, { recursive: true, force: true });
}
