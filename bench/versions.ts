/**
 * File history (docs/versions.md): what history on costs per command, against history off, in one
 * run: requests per command and median / p90 latency, measured interleaved (off, on, off, on, ...)
 * on the same store so that both see the same load.
 *
 *   npx tsx bench/versions.ts                                  # the memory store
 *   MEMVAULT_S3_ENDPOINT=http://127.0.0.1:7490 MEMVAULT_S3_BUCKET=wt-v npx tsx bench/versions.ts   # radosgw
 *
 * On a shared small machine read the ratios and the request counts, not the absolute figures.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createVault, type Vault } from '../src/index.js';
import { withRequestCounter, type RequestCounter } from '../src/store/accounting.js';
import { MemoryStore } from '../src/store/memory.js';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 30);
const endpoint = process.env['MEMVAULT_S3_ENDPOINT'];
const bucket = process.env['MEMVAULT_S3_BUCKET'] ?? 'memvault-bench';
const masterKey = randomBytes(32).toString('base64');
const run = randomBytes(4).toString('hex');

async function open(history: boolean): Promise<Vault> {
  const store = endpoint ? `s3://${bucket}/bench-versions-${run}-${history ? 'on' : 'off'}` : new MemoryStore();
  const s3 = endpoint
    ? {
        s3: {
          endpoint,
          region: 'us-east-1',
          forcePathStyle: true,
          credentials: {
            accessKeyId: process.env['MEMVAULT_S3_ACCESS_KEY_ID'] ?? 'test',
            secretAccessKey: process.env['MEMVAULT_S3_SECRET_ACCESS_KEY'] ?? 'test',
          },
        },
      }
    : {};
  return createVault({ store, ...s3, encryption: { masterKey }, history });
}

const quantile = (samples: number[], q: number) =>
  [...samples].sort((a, b) => a - b)[Math.min(samples.length - 1, Math.floor(q * samples.length))] ?? NaN;

async function main(): Promise<void> {
  const vaults = { off: await open(false), on: await open(true) };
  const body = Array.from({ length: 200 }, (_, i) => `line ${i} of memory text\n`).join('');
  for (const vault of Object.values(vaults)) {
    const r = await vault.run('bench', { command: 'create', path: '/memories/b.md', file_text: body });
    if (r.isError) throw new Error(JSON.stringify(r.content));
  }
  let n = 0;
  const created: string[] = [];
  const commands: Record<string, () => Record<string, unknown>> = {
    view: () => ({ command: 'view', path: '/memories/b.md' }),
    str_replace: () => {
      const i = ++n;
      return {
        command: 'str_replace',
        path: '/memories/b.md',
        old_str: `line ${i} of memory text\n`,
        new_str: `edit ${i}\n`,
      };
    },
    create: () => {
      const path = `/memories/new/f${++n}.md`;
      created.push(path);
      return { command: 'create', path, file_text: 'x\n' };
    },
    delete: () => ({ command: 'delete', path: created.pop()! }),
  };
  const rows: string[] = [];
  for (const [name, input] of Object.entries(commands)) {
    const times = { off: [] as number[], on: [] as number[] };
    const requests: Record<'off' | 'on', RequestCounter> = { off: {}, on: {} };
    for (let i = 0; i < ROUNDS; i++) {
      const made = input(); // the same input for both vaults (each has its own store)
      for (const mode of ['off', 'on'] as const) {
        const counter: RequestCounter = {};
        const start = performance.now();
        const r = await withRequestCounter(counter, () => vaults[mode].run('bench', made));
        times[mode].push(performance.now() - start);
        if (r.isError) throw new Error(`${name} ${mode}: ${JSON.stringify(r.content)}`);
        requests[mode] = counter;
      }
    }
    const fmt = (c: RequestCounter) =>
      Object.entries(c)
        .map(([k, v]) => `${v} ${k}`)
        .join(' + ');
    const med = { off: quantile(times.off, 0.5), on: quantile(times.on, 0.5) };
    rows.push(
      `| ${name} | ${fmt(requests.off)} | ${fmt(requests.on)} | ${med.off.toFixed(2)} / ${quantile(times.off, 0.9).toFixed(2)} | ${med.on.toFixed(2)} / ${quantile(times.on, 0.9).toFixed(2)} | ${(med.on / med.off).toFixed(2)} |`,
    );
  }
  console.log(`store: ${endpoint ? 'radosgw' : 'memory'}, ${ROUNDS} rounds per command, interleaved`);
  console.log(
    '| command | requests, history off | requests, history on | ms median / p90, off | ms median / p90, on | median on/off |',
  );
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const row of rows) console.log(row);
  for (const vault of Object.values(vaults)) await vault.close();
}

await main();
