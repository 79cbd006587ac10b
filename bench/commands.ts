/**
 * The command mix on the embedded store against the SDK's own local tool, in one run.
 *   npx tsx bench/commands.ts [iterations]
 * Both write real files under a temp directory of this machine. memvault runs with its default
 * chain (validation, path guard, PII redactor, quota), file history and client-side encryption (the
 * defaults) and the audit log (a file sink: each record MACed and written before the answer), on the two embedded stores side by side: the directory store (file://, an fsync'd file
 * per write, version and fence) and the SQLite store (sqlite:, one WAL commit fsync'd per request,
 * a directory rename or delete one transaction), so the table shows what the guarantees cost on
 * each. A last column attributes the rest: SQLite with durability=normal (the WAL fsync'd at
 * checkpoints only). The columns run interleaved, round by round, so that the disk's drift during
 * the run hits them alike.
 * With MEMVAULT_S3_ENDPOINT set, the same mix then runs on S3 and prints its requests per command,
 * with history on (the default) and off.
 */
import { BetaLocalFilesystemMemoryTool } from '@anthropic-ai/sdk/tools/memory/node';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createEncryptionFromConfig } from '../src/crypto/index.js';
import { createVault, type Vault } from '../src/index.js';
import { withRequestCounter, type RequestCounter } from '../src/store/accounting.js';
import { FileStore } from '../src/store/file.js';
import { SqliteStore } from '../src/store/sqlite.js';
import type { ObjectStore } from '../src/store/port.js';
import { ensureBucket, s3Bucket, s3ClientConfig, s3Endpoint } from './s3-env.js';
import { median, printTable } from './stats.js';

const iterations = Number(process.argv[2] ?? 200);
const text4k = 'memory line with some words in it, about 60 characters long\n'.repeat(68);

type Runner = (input: Record<string, unknown>) => Promise<unknown>;

const seedText = 'memory line once\n' + 'x\n'.repeat(100);
const f = (i: number) => `/memories/c/f${i}.md`;

/** The mix: every step works on its own files, and nothing is overwritten (the SDK refuses that). */
const steps: Array<{ name: string; input: (i: number) => Record<string, unknown> }> = [
  { name: 'create 4 KiB', input: (i) => ({ command: 'create', path: `/memories/n/f${i}.md`, file_text: text4k }) },
  { name: 'view file', input: (i) => ({ command: 'view', path: f(i) }) },
  { name: 'view dir', input: () => ({ command: 'view', path: '/memories' }) },
  {
    name: 'str_replace',
    input: (i) => ({ command: 'str_replace', path: f(i), old_str: 'memory line once', new_str: 'memory LINE once' }),
  },
  { name: 'insert', input: (i) => ({ command: 'insert', path: f(i), insert_line: 1, insert_text: `inserted ${i}` }) },
  { name: 'rename file', input: (i) => ({ command: 'rename', old_path: f(i), new_path: `/memories/r/f${i}.md` }) },
  { name: 'delete file', input: (i) => ({ command: 'delete', path: `/memories/r/f${i}.md` }) },
];

/**
 * Every column's median per command, measured interleaved: round by round each column runs the
 * step once, starting with a different column each round, so that what the disk does meanwhile (its
 * latency drifts by 2x within minutes on a shared machine) hits every column alike and the ratios
 * compare like with like (as bench/s3.ts does against its bare requests).
 */
async function measureInterleaved(runners: Runner[]): Promise<Array<Map<string, number>>> {
  // Seeded side by side as well: a file written a moment ago costs more to replace or remove on this
  // ext4 (its blocks are still being allocated and committed) than one written a minute ago, so
  // seeding column by column made the last columns' edits about 10 to 20 % slower than the first's
  // (bench/checkouts.ts, one checkout against itself).
  for (let i = 0; i < iterations; i++)
    for (const run of runners) await run({ command: 'create', path: f(i), file_text: seedText });
  const out = runners.map(() => new Map<string, number>());
  for (const step of steps) {
    const times = runners.map((): number[] => []);
    for (let i = 0; i < iterations; i++) {
      for (let k = 0; k < runners.length; k++) {
        const c = (i + k) % runners.length;
        const t0 = performance.now();
        await runners[c]!(step.input(i));
        times[c]!.push(performance.now() - t0);
      }
    }
    times.forEach((t, c) => out[c]!.set(step.name, median(t)));
  }
  return out;
}

type Embedded = 'file' | 'sqlite' | 'sqlite-normal';

async function memvaultRunner(dir: string, kind: Embedded): Promise<{ run: Runner; vault: Vault }> {
  const store =
    kind === 'file'
      ? await FileStore.open(dir)
      : await SqliteStore.open(`${dir}.db`, { durability: kind === 'sqlite' ? 'full' : 'normal' });
  const vault = await createVault({
    store,
    history: true,
    audit: { file: `${dir}.audit.jsonl` },
    ...(await encryptionOptions(store)),
  });
  const handlers = vault.handlers('bench-user') as unknown as Record<string, (i: unknown) => Promise<unknown>>;
  return { vault, run: (input) => handlers[String(input['command'])]!(input) };
}

async function encryptionOptions(store: ObjectStore): Promise<Record<string, unknown>> {
  const encryption = await createEncryptionFromConfig({
    store,
    config: { masterKey: randomBytes(32).toString('base64') },
  });
  return { codec: encryption.codecProvider };
}

/** Requests per command of the same mix on S3 (the counter test/s3/requests.test.ts reads), when a server is set. */
async function s3Requests(): Promise<void> {
  if (!s3Endpoint) {
    console.log(
      '\nS3 requests per command: skipped (set MEMVAULT_S3_ENDPOINT and MEMVAULT_S3_BUCKET to count them on a real server)',
    );
    return;
  }
  await ensureBucket();
  for (const history of [true, false]) await s3RequestsOf(history);
}

async function s3RequestsOf(history: boolean): Promise<void> {
  const prefix = `bench-commands/${randomBytes(6).toString('hex')}`;
  const vault = await createVault({
    store: `s3://${s3Bucket}/${prefix}`,
    s3: s3ClientConfig(),
    history,
    encryption: { masterKey: randomBytes(32).toString('base64') },
  });
  const rounds = Math.min(iterations, 20);
  const run = (input: Record<string, unknown>) => vault.run('bench-user', input);
  try {
    for (let i = 0; i < rounds; i++) await run({ command: 'create', path: f(i), file_text: seedText });
    const rows: Array<Array<string | number>> = [];
    for (const step of steps) {
      const counts: RequestCounter[] = [];
      const times: number[] = [];
      for (let i = 0; i < rounds; i++) {
        const counter: RequestCounter = {};
        const t0 = performance.now();
        const r = await withRequestCounter(counter, () => run(step.input(i)));
        times.push(performance.now() - t0);
        if (r.isError) throw new Error(`${step.name} failed on S3: ${JSON.stringify(r.content)}`);
        counts.push(counter);
      }
      const last = counts[counts.length - 1]!;
      const total = Object.values(last).reduce((a, b) => a + b, 0);
      const kinds = Object.entries(last)
        .sort()
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
      rows.push([step.name, String(total), kinds, median(times)]);
    }
    const label = history ? 'history on (the default)' : 'history off';
    console.log(
      `\nS3 requests per command on ${s3Endpoint} (encrypted, ${label}, the same mix, ${rounds} rounds; requests of the last round, median ms)\n`,
    );
    printTable(['command', 'requests', 'by kind', 'median ms'], rows);
  } finally {
    for (let i = 0; i < rounds; i++) await run({ command: 'delete', path: `/memories/n/f${i}.md` });
    await run({ command: 'delete', path: '/memories/c' });
    await vault.close();
  }
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'memvault-bench-'));
  try {
    const sdk = await BetaLocalFilesystemMemoryTool.init(join(root, 'sdk'));
    const sdkHandlers = sdk as unknown as Record<string, (i: unknown) => Promise<unknown>>;
    const sdkRun: Runner = (input) => sdkHandlers[String(input['command'])]!.call(sdk, input);
    const opened: Array<{ name: string; run: Runner; vault?: Vault }> = [{ name: 'SDK local tool', run: sdkRun }];
    for (const [name, kind] of [
      ['memvault, directory store', 'file'],
      ['memvault, SQLite store', 'sqlite'],
      ['SQLite, durability=normal', 'sqlite-normal'],
    ] as const) {
      opened.push({ name, ...(await memvaultRunner(join(root, name.replace(/\W+/g, '-')), kind)) });
    }
    const measured = await measureInterleaved(opened.map((o) => o.run));
    for (const o of opened) await o.vault?.close();
    const columns = opened.map((o, c) => ({ name: o.name, times: measured[c]! }));
    const sdkTimes = columns[0]!.times;
    const names = [...sdkTimes.keys()];
    const total = (times: Map<string, number>) => names.reduce((sum, n) => sum + times.get(n)!, 0);
    // The whole mix: one of each command, the sum of the medians (view dir counts once, like every other command).
    const rows = [...names, 'whole mix (sum)', 'whole mix without view dir'].map((name) => {
      const value = (times: Map<string, number>) =>
        name === 'whole mix (sum)'
          ? total(times)
          : name === 'whole mix without view dir'
            ? total(times) - times.get('view dir')!
            : times.get(name)!;
      const s = value(sdkTimes);
      return [name, s, ...columns.slice(1).flatMap((c) => [value(c.times), `${(value(c.times) / s).toFixed(2)}x`])];
    });
    console.log(
      `\nCommand mix, embedded store vs the SDK's BetaLocalFilesystemMemoryTool (median ms of ${iterations} runs each, one run, the columns interleaved round by round)\n`,
    );
    printTable(['command', 'SDK local tool', ...columns.slice(1).flatMap((c) => [c.name, 'ratio'])], rows);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  await s3Requests();
}

await main();
