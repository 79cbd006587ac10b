/**
 * How cost grows with the work, in one run:  npx tsx bench/scale.ts [--quick]
 * Rows on the embedded store (encrypted, durable, the default chain), and on S3 when
 * MEMVAULT_S3_ENDPOINT is set (sizes shrunk there, printed in the row):
 * - view of a directory of 10 / 1,000 / 5,000 files;
 * - rename and delete of a directory of 10 / 100 / 1,000 files;
 * - 1 / 16 / 64 / 256 concurrent users on one process (commands/s, p50, p99);
 * - the sweeper over 10k objects on the file store and 100k on a counting store (the S3 adapter on
 *   an in-process bucket that answers ListObjectsV2/DeleteObjects, test/expiry/s3-mock.ts);
 * - audit export of 100k records.
 * Each row: time, store requests (the counter of store/accounting.ts, as test/s3/requests.test.ts
 * reads it), peak memory above the start of the row (heap + array buffers, sampled every ms), and
 * the growth exponent fitted over the sizes (time ~ n^k: k near 1 is linear).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { exportRecords } from '../src/audit/export.js';
import { collectFileChains } from '../src/audit/sources.js';
import { createEncryptionFromConfig } from '../src/crypto/index.js';
import { s3Deleter } from '../src/expiry/deleter.js';
import { sweep } from '../src/expiry/sweep.js';
import { createVault, type Vault } from '../src/index.js';
import { createAuditLogger } from '../src/pipeline/audit-logger.js';
import type { CommandContext, CommandResult } from '../src/pipeline/context.js';
import { compose } from '../src/pipeline/compose.js';
import { withRequestCounter, type RequestCounter } from '../src/store/accounting.js';
import { FileStore } from '../src/store/file.js';
import type { ObjectStore } from '../src/store/port.js';
import type { UserFiles } from '../src/vault/user-files.js';
import { MOCK_BUCKET, MOCK_NOW, MOCK_PREFIX, virtualBucket } from '../test/expiry/s3-mock.js';
import { ensureBucket, s3Bucket, s3ClientConfig, s3Endpoint } from './s3-env.js';
import { formatNumber, printTable } from './stats.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const quick = process.argv.includes('--quick');
const endpoint = s3Endpoint;
const masterKey = randomBytes(32).toString('base64');
const body = 'first line of the note\n' + 'a note of about sixty characters, as the model writes them\n'.repeat(4);

interface Measured {
  ms: number;
  requests: number;
  peakMiB: number;
}

/** Time, store requests and peak memory (above the start, sampled every millisecond) of `fn`. */
async function measure(fn: () => Promise<unknown>): Promise<Measured> {
  gc();
  const used = () => {
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  const base = used();
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, used())), 1);
  const counter: RequestCounter = {};
  const t0 = performance.now();
  try {
    await withRequestCounter(counter, fn);
  } finally {
    clearInterval(timer);
  }
  const ms = performance.now() - t0;
  peak = Math.max(peak, used());
  return { ms, requests: Object.values(counter).reduce((a, b) => a + b, 0), peakMiB: (peak - base) / (1024 * 1024) };
}

/** Least-squares slope of log(y) over log(n): y ~ n^k. */
function exponent(points: Array<{ n: number; y: number }>): string {
  const pts = points.filter((p) => p.y > 0);
  if (pts.length < 2) return '';
  const xs = pts.map((p) => Math.log(p.n));
  const ys = pts.map((p) => Math.log(p.y));
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  const k = xs.reduce((s, x, i) => s + (x - mx) * (ys[i]! - my), 0) / xs.reduce((s, x) => s + (x - mx) ** 2, 0);
  return `n^${k.toFixed(2)}`;
}

const rows: Array<Array<string | number>> = [];
function addSeries(name: string, backend: string, results: Array<{ n: number; m: Measured; note?: string }>): void {
  const timeK = exponent(results.map((r) => ({ n: r.n, y: r.m.ms })));
  const reqK = exponent(results.map((r) => ({ n: r.n, y: r.m.requests })));
  for (const r of results) {
    rows.push([
      name,
      backend,
      r.n.toLocaleString('en'),
      r.m.ms,
      String(r.m.requests),
      r.m.peakMiB,
      r === results[results.length - 1] && results.length > 1 ? `time ${timeK}, requests ${reqK || 'none'}` : '',
      r.note ?? '',
    ]);
  }
}

interface Backend {
  name: string;
  open(): Promise<Vault>;
  sizes: { view: number[]; tree: number[]; users: number[] };
  close(): Promise<void>;
}

async function fileBackend(root: string): Promise<Backend> {
  return {
    name: 'file store',
    sizes: quick
      ? { view: [10, 100, 500], tree: [10, 100], users: [1, 16, 64] }
      : { view: [10, 1000, 5000], tree: [10, 100, 1000], users: [1, 16, 64, 256] },
    open: async () => {
      const store = await FileStore.open(join(root, 'vault'));
      const encryption = await createEncryptionFromConfig({ store, config: { masterKey } });
      return createVault({ store, codec: encryption.codecProvider });
    },
    close: async () => undefined,
  };
}

function s3Backend(url: string): Backend {
  const prefix = `bench-scale/${randomBytes(6).toString('hex')}`;
  let opened: Vault | undefined;
  return {
    name: 'radosgw',
    // Shrunk so the whole bench stays within minutes: each file on loopback radosgw costs a few ms per request.
    sizes: quick
      ? { view: [10, 100], tree: [10, 100], users: [1, 16] }
      : { view: [10, 1000, 2000], tree: [10, 100, 300], users: [1, 16, 64] },
    open: async () => {
      await ensureBucket();
      opened = await createVault({
        store: `${url.replace(/\/$/, '')}/${prefix}`,
        s3: s3ClientConfig(),
        encryption: { masterKey },
      });
      return opened;
    },
    close: async () => {
      if (!opened) return;
      const keys: string[] = [];
      const { listAll } = await import('../src/store/port.js');
      for await (const o of listAll(opened.store, '')) keys.push(o.key);
      for (let i = 0; i < keys.length; i += 1000) await opened.store.deleteMany(keys.slice(i, i + 1000));
    },
  };
}

/** Seeds `n` files under `dir` for `user`, 32 at a time (not measured). */
async function seed(vault: Vault, user: string, dir: string, n: number): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < n) {
      const i = next++;
      const r = await vault.run(user, {
        command: 'create',
        path: `${dir}/f${String(i).padStart(5, '0')}.md`,
        file_text: body,
      });
      if (r.isError) throw new Error(`seed failed: ${JSON.stringify(r.content)}`);
    }
  };
  await Promise.all(Array.from({ length: 32 }, lane));
}

async function ok(vault: Vault, user: string, input: Record<string, unknown>): Promise<void> {
  const r = await vault.run(user, input);
  if (r.isError) throw new Error(`${String(input['command'])} failed: ${JSON.stringify(r.content)}`);
}

async function treeRows(b: Backend, vault: Vault): Promise<void> {
  const view: Array<{ n: number; m: Measured }> = [];
  for (const n of b.sizes.view) {
    const user = `view-${n}`;
    await seed(vault, user, '/memories/d', n);
    view.push({ n, m: await measure(() => ok(vault, user, { command: 'view', path: '/memories/d' })) });
  }
  addSeries('view dir', b.name, view);
  const renames: Array<{ n: number; m: Measured }> = [];
  const deletes: Array<{ n: number; m: Measured }> = [];
  for (const n of b.sizes.tree) {
    const user = `tree-${n}`;
    await seed(vault, user, '/memories/src', n);
    renames.push({
      n,
      m: await measure(() =>
        ok(vault, user, { command: 'rename', old_path: '/memories/src', new_path: '/memories/dst' }),
      ),
    });
    deletes.push({ n, m: await measure(() => ok(vault, user, { command: 'delete', path: '/memories/dst' })) });
  }
  addSeries('rename dir', b.name, renames);
  addSeries('delete dir', b.name, deletes);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

/** `users` users at once, each running create, view, str_replace, view for `rounds` rounds on its own files. */
async function usersRows(b: Backend, vault: Vault): Promise<void> {
  const results: Array<{ n: number; m: Measured; note: string }> = [];
  for (const users of b.sizes.users) {
    const rounds = Math.max(1, Math.round(256 / users));
    const latencies: number[] = [];
    const one = async (user: string, input: Record<string, unknown>) => {
      const t0 = performance.now();
      await ok(vault, user, input);
      latencies.push(performance.now() - t0);
    };
    const m = await measure(() =>
      Promise.all(
        Array.from({ length: users }, async (_, u) => {
          const user = `load-${users}-${u}`;
          for (let r = 0; r < rounds; r++) {
            const path = `/memories/load/f${r}.md`;
            await one(user, { command: 'create', path, file_text: body });
            await one(user, { command: 'view', path });
            await one(user, { command: 'str_replace', path, old_str: 'first line', new_str: 'First line' });
            await one(user, { command: 'view', path: '/memories/load' });
          }
        }),
      ),
    );
    latencies.sort((x, y) => x - y);
    const perSecond = (latencies.length / m.ms) * 1000;
    results.push({
      n: users,
      m,
      note: `${latencies.length} commands, ${formatNumber(perSecond)}/s, p50 ${formatNumber(percentile(latencies, 0.5))} ms, p99 ${formatNumber(percentile(latencies, 0.99))} ms`,
    });
  }
  // The same 1,024 commands in every row, so 'ms' is the wall time of that work and time ~ n^0 is ideal scaling.
  addSeries('concurrent users', b.name, results);
}

async function sweeperRows(root: string): Promise<void> {
  // 10k objects on the file store: 20 files a user, half idle past the TTL.
  const n = quick ? 2000 : 10_000;
  const dir = join(root, 'sweep');
  const seedStore = await FileStore.open(dir, {
    durable: false,
    now: () => new Date(MOCK_NOW.getTime() - 40 * 86_400_000),
  });
  const fresh = await FileStore.open(dir, { durable: false, now: () => MOCK_NOW });
  let next = 0;
  const lane = async () => {
    while (next < n) {
      const i = next++;
      const key = `u/${String(Math.floor(i / 20)).padStart(6, '0')}/f/${String(i % 20).padStart(2, '0')}`;
      await (i % 2 ? seedStore : fresh).put(key, new Uint8Array(200));
    }
  };
  await Promise.all(Array.from({ length: 16 }, lane));
  const store: ObjectStore = await FileStore.open(dir);
  let expired = 0;
  const fileRow = await measure(
    async () => (expired = (await sweep({ store, ttl: { ttlDays: 30 }, now: () => MOCK_NOW, graceMs: 0 })).expired),
  );
  const results = [{ n, m: fileRow, note: `${expired} expired, deleted one by one (conditional, fsync'd)` }];
  addSeries('sweeper', 'file store', results);
  // The counting store: the S3 adapter over an in-process bucket (ListObjectsV2 + DeleteObjects counted).
  const counted: Array<{ n: number; m: Measured; note: string }> = [];
  for (const objects of quick ? [10_000, 20_000] : [10_000, 100_000]) {
    const bucket = virtualBucket(objects);
    const deleter = s3Deleter({ client: bucket.client, bucket: MOCK_BUCKET, prefix: MOCK_PREFIX, mode: 'native' });
    let summary = { expired: 0 };
    const m = await measure(
      async () => (summary = await sweep({ store: bucket.store, ttl: { ttlDays: 30 }, now: () => MOCK_NOW, deleter })),
    );
    const calls = bucket.calls();
    bucket.restore();
    counted.push({
      n: objects,
      m: { ...m, requests: (calls['ListObjectsV2'] ?? 0) + (calls['DeleteObjects'] ?? 0) + (calls['HeadObject'] ?? 0) },
      note: `${summary.expired} expired; ${calls['ListObjectsV2'] ?? 0} LIST + ${calls['DeleteObjects'] ?? 0} DeleteObjects`,
    });
  }
  addSeries('sweeper', 'counting S3 bucket', counted);
}

async function auditRows(root: string): Promise<void> {
  const results: Array<{ n: number; m: Measured; note: string }> = [];
  // The first size runs twice: the first pass warms the JIT up and is not shown.
  const sizes = quick ? [10_000, 10_000, 20_000] : [10_000, 10_000, 100_000];
  for (const [index, n] of sizes.entries()) {
    const file = join(root, `audit-${index}.jsonl`);
    const logger = await createAuditLogger({ file, sync: false, macKey: new Uint8Array(32).fill(7) });
    const chain = compose([logger.middleware()]);
    const terminal = async (): Promise<CommandResult> => ({ content: 'ok', isError: false });
    for (let i = 0; i < n; i++) {
      const command = {
        command: 'str_replace' as const,
        path: `/memories/p/n-${i % 50}.md`,
        old_str: 'a',
        new_str: 'b',
      };
      const ctx = {
        requestId: `r-${i}`,
        uid: `u_${i % 100}`,
        input: command,
        command,
        pathsCanonical: true,
        files: {} as UserFiles,
        stats: { bytesRead: 812, bytesWritten: 815, requests: { GET: 1, PUT: 1 } },
        decisions: {},
      } as unknown as CommandContext;
      await chain(ctx, terminal);
      if (i % 5000 === 0) await logger.flush();
    }
    await logger.close();
    let records = 0;
    let bytes = 0;
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        bytes += chunk.length;
        done();
      },
    });
    const m = await measure(async () => {
      const { chains } = await collectFileChains([file]);
      records = (await exportRecords(chains, { format: 'jsonl', output: sink })).records;
    });
    if (index > 0)
      results.push({
        n,
        m,
        note: `${records.toLocaleString('en')} records exported, ${(bytes / 1048576).toFixed(1)} MiB`,
      });
  }
  addSeries('audit export', 'local files', results);
}

const root = await mkdtemp(join(tmpdir(), 'memvault-bench-scale-'));
try {
  const backends = [await fileBackend(root), ...(endpoint ? [s3Backend(`s3://${s3Bucket}`)] : [])];
  for (const b of backends) {
    const vault = await b.open();
    try {
      await treeRows(b, vault);
      await usersRows(b, vault);
    } finally {
      await b.close();
      await vault.close();
    }
  }
  await sweeperRows(root);
  await auditRows(root);
  console.log(
    `\nScaling (one run${quick ? ', --quick sizes' : ''}${endpoint ? '' : '; radosgw rows skipped: MEMVAULT_S3_ENDPOINT not set'})\n`,
  );
  printTable(['work', 'store', 'n', 'ms', 'requests', 'peak MiB', 'growth (fit over n)', 'notes'], rows);
} finally {
  await rm(root, { recursive: true, force: true });
}
