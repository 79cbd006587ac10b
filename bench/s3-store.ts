/**
 * S3Store against bare SDK calls on a real S3 server: requests per store operation, median and p90
 * latency, the ratio to a bare PutObject/GetObject of the same body (measured interleaved, in one
 * run), and put+get throughput with 1, 16 and 64 operations in flight.
 *
 *   npx tsx bench/s3-store.ts                 # starts scripts/rgw.sh itself (radosgw installed)
 *   MEMVAULT_S3_ENDPOINT=http://127.0.0.1:7480 npx tsx bench/s3-store.ts
 *
 * RGW on a small machine is a correctness target, not a speed reference: read the ratios and the
 * request counts, not the absolute figures.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, type S3ClientConfig } from '@aws-sdk/client-s3';
import { withRequestCounter, type RequestCounter } from '../src/store/accounting.js';
import { listAll } from '../src/store/port.js';
import { buildS3Client, createS3Store } from '../src/store/s3.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 100);
const BODY_BYTES = 4096;
const BUCKET = 'memvault-bench';
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function quantile(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

async function main(): Promise<void> {
  let endpoint = process.env.MEMVAULT_S3_ENDPOINT;
  let workdir: string | undefined;
  if (!endpoint) {
    workdir = mkdtempSync(join(tmpdir(), 'memvault-rgw-bench-'));
    const started = performance.now();
    execFileSync('bash', [join(repoRoot, 'scripts/rgw.sh'), 'start', workdir], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    endpoint = `http://127.0.0.1:${process.env.MEMVAULT_RGW_PORT ?? 7480}`;
    console.log(`radosgw started in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  const config: S3ClientConfig = {
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: {
      accessKeyId: process.env.MEMVAULT_S3_ACCESS_KEY_ID ?? 'test',
      secretAccessKey: process.env.MEMVAULT_S3_SECRET_ACCESS_KEY ?? 'test',
    },
  };
  const bare = buildS3Client(config);
  await bare.send(new CreateBucketCommand({ Bucket: BUCKET })).catch(() => undefined);
  const prefix = `bench-${Date.now().toString(36)}`;
  const store = createS3Store({ url: `s3://${BUCKET}/${prefix}/store`, s3: config });
  const native = createS3Store({ url: `s3://${BUCKET}/${prefix}/store`, s3: config, conditionChecks: 'native' });
  const body = new Uint8Array(randomBytes(BODY_BYTES));

  try {
    const samples: Record<string, number[]> = {};
    const requests: Record<string, RequestCounter> = {};
    const record = async (name: string, fn: () => Promise<unknown>): Promise<void> => {
      const counter: RequestCounter = {};
      const ms = await withRequestCounter(counter, () => timed(fn));
      (samples[name] ??= []).push(ms);
      const total = (requests[name] ??= {});
      for (const [type, n] of Object.entries(counter)) total[type] = (total[type] ?? 0) + n;
    };

    // Warm the connection pool and RGW's caches.
    for (let i = 0; i < 10; i += 1) await store.put(`warm/${i}`, body);

    let etag = (await store.put('cond', body)).etag;
    // Interleaved, so that drift in the server's speed hits both sides of each ratio alike.
    for (let i = 0; i < ROUNDS; i += 1) {
      await record('bare PutObject', () =>
        bare.send(
          new PutObjectCommand({
            Bucket: BUCKET,
            Key: `${prefix}/bare/${i}`,
            Body: Buffer.from(body),
            ContentLength: BODY_BYTES,
          }),
        ),
      );
      await record('store.put', () => store.put(`put/${i}`, body));
      await record('store.put ifMatch', async () => {
        etag = (await store.put('cond', body, { ifMatch: etag })).etag;
      });
      await record('store.put ifNoneMatch', () => store.put(`create/${i}`, body, { ifNoneMatch: '*' }));
      await record('bare GetObject', async () => {
        const out = await bare.send(new GetObjectCommand({ Bucket: BUCKET, Key: `${prefix}/bare/${i}` }));
        await out.Body!.transformToByteArray();
      });
      await record('store.get', () => store.get(`put/${i}`));
      await record('store.copy ifNoneMatch (check-first)', () =>
        store.copy(`put/${i}`, `copy-cf/${i}`, { ifNoneMatch: '*' }),
      );
      await record('store.copy ifNoneMatch (native)', () =>
        native.copy(`put/${i}`, `copy-n/${i}`, { ifNoneMatch: '*' }),
      );
      await record('store.delete ifMatch (check-first)', async () => {
        const head = await native.head(`copy-cf/${i}`);
        await store.delete(`copy-cf/${i}`, { ifMatch: head!.etag });
      });
    }

    const baseline: Record<string, string> = {
      'store.put': 'bare PutObject',
      'store.put ifMatch': 'bare PutObject',
      'store.put ifNoneMatch': 'bare PutObject',
      'store.get': 'bare GetObject',
      'store.copy ifNoneMatch (check-first)': 'bare PutObject',
      'store.copy ifNoneMatch (native)': 'bare PutObject',
      'store.delete ifMatch (check-first)': 'bare PutObject',
    };
    console.log(`\nS3Store vs bare SDK calls, ${BODY_BYTES}-byte bodies, ${ROUNDS} rounds, sequential, ${endpoint}`);
    console.log(
      `${'operation'.padEnd(40)} ${'requests/op'.padEnd(22)} ${'median ms'.padStart(10)} ${'p90 ms'.padStart(8)} ${'ratio'.padStart(7)}`,
    );
    for (const [name, values] of Object.entries(samples)) {
      const perOp = Object.entries(requests[name] ?? {})
        .map(([type, n]) => `${(n / values.length).toFixed(n % values.length === 0 ? 0 : 2)} ${type}`)
        .join(' + ');
      const base = baseline[name];
      const ratio = base ? (quantile(values, 0.5) / quantile(samples[base]!, 0.5)).toFixed(2) : '1.00';
      console.log(
        `${name.padEnd(40)} ${(perOp || '(bare)').padEnd(22)} ${quantile(values, 0.5).toFixed(1).padStart(10)} ${quantile(values, 0.9).toFixed(1).padStart(8)} ${ratio.padStart(7)}`,
      );
    }
    console.log(
      '(delete row: the HEAD that fetches the etag is outside the store call but inside the timing; ratio against a PUT)',
    );

    console.log(`\nput+get pairs through S3Store, ${BODY_BYTES}-byte bodies`);
    console.log(
      `${'in flight'.padStart(9)} ${'pairs'.padStart(6)} ${'seconds'.padStart(8)} ${'pairs/s'.padStart(8)} ${'requests'.padStart(9)}`,
    );
    for (const inFlight of [1, 16, 64]) {
      const pairs = inFlight === 1 ? 100 : 320;
      let next = 0;
      const counter: RequestCounter = {};
      const start = performance.now();
      await withRequestCounter(counter, async () => {
        await Promise.all(
          Array.from({ length: inFlight }, async () => {
            while (next < pairs) {
              const i = next;
              next += 1;
              await store.put(`tp${inFlight}/${i}`, body);
              await store.get(`tp${inFlight}/${i}`);
            }
          }),
        );
      });
      const seconds = (performance.now() - start) / 1000;
      const total = Object.values(counter).reduce((a, b) => a + b, 0);
      console.log(
        `${String(inFlight).padStart(9)} ${String(pairs).padStart(6)} ${seconds.toFixed(2).padStart(8)} ${(pairs / seconds).toFixed(1).padStart(8)} ${String(total).padStart(9)}`,
      );
    }
  } finally {
    const sweeper = createS3Store({ url: `s3://${BUCKET}/${prefix}`, s3: config });
    const keys: string[] = [];
    for await (const info of listAll(sweeper, '')) keys.push(info.key);
    await sweeper.deleteMany(keys);
    await Promise.all([sweeper.close(), store.close(), native.close()]);
    bare.destroy();
    if (workdir)
      execFileSync('bash', [join(repoRoot, 'scripts/rgw.sh'), 'stop', workdir], {
        stdio: ['ignore', 'ignore', 'inherit'],
      });
  }
}

await main();
