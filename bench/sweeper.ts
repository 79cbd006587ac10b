/**
 * How many files one sweeper run gets through: the sweep of `memvault expire` / the Lambda sweeper
 * against a real S3 server (MEMVAULT_S3_ENDPOINT, e.g. the radosgw of scripts/rgw.sh), over N files
 * kept (listing only) and N files expired (listing plus deletes), per conditional-delete mode.
 * Prints a table: files/s and requests per 1,000 files.
 *
 *   MEMVAULT_S3_ENDPOINT=http://127.0.0.1:7490 MEMVAULT_S3_BUCKET=memvault-test npx tsx bench/sweeper.ts [N]
 */
import { randomBytes } from 'node:crypto';
import { DAY_MS } from '../src/expiry/config.js';
import { s3Deleter } from '../src/expiry/deleter.js';
import { sweep } from '../src/expiry/sweep.js';
import { withRequestCounter, type RequestCounter } from '../src/store/accounting.js';
import { listAll } from '../src/store/port.js';
import { createS3Store, parseS3Url, type S3Store } from '../src/store/s3.js';

const endpoint = process.env.MEMVAULT_S3_ENDPOINT;
if (!endpoint) {
  console.error('set MEMVAULT_S3_ENDPOINT (and MEMVAULT_S3_BUCKET)');
  process.exit(2);
}
const bucket = process.env.MEMVAULT_S3_BUCKET ?? 'memvault-test';
const n = Number(process.argv[2] ?? 5000);
const s3 = {
  endpoint,
  region: process.env.MEMVAULT_S3_REGION ?? 'us-east-1',
  forcePathStyle: true,
  credentials: {
    accessKeyId: process.env.MEMVAULT_S3_ACCESS_KEY_ID ?? 'test',
    secretAccessKey: process.env.MEMVAULT_S3_SECRET_ACCESS_KEY ?? 'test',
  },
};

async function populate(store: S3Store): Promise<void> {
  const body = new Uint8Array(200);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < n) {
      const i = next++;
      await store.put(`u/${String(Math.floor(i / 20)).padStart(6, '0')}/f/${String(i % 20).padStart(2, '0')}`, body);
    }
  };
  await Promise.all(Array.from({ length: 32 }, lane));
}

async function empty(store: S3Store): Promise<void> {
  const keys: string[] = [];
  for await (const o of listAll(store, '')) keys.push(o.key);
  for (let i = 0; i < keys.length; i += 1000) await store.deleteMany(keys.slice(i, i + 1000));
}

interface Row {
  case: string;
  files: number;
  ms: number;
  requests: RequestCounter;
}

async function measure(label: string, expired: boolean, mode: 'native' | 'recheck'): Promise<Row> {
  const url = `s3://${bucket}/bench-sweeper-${randomBytes(4).toString('hex')}`;
  const store = createS3Store({ url, s3 });
  await populate(store);
  const { prefix } = parseS3Url(url);
  const deleter = s3Deleter({ client: store.client, bucket, prefix, mode });
  const now = expired ? () => new Date(Date.now() + 31 * DAY_MS + 2 * 3600_000) : () => new Date();
  const requests: RequestCounter = {};
  const started = performance.now();
  const summary = await withRequestCounter(requests, () => sweep({ store, ttl: { ttlDays: 30 }, now, deleter }));
  const ms = performance.now() - started;
  if (summary.scanned !== n || summary.expired !== (expired ? n : 0))
    throw new Error(`unexpected summary ${JSON.stringify(summary)}`);
  await empty(store);
  await store.close();
  return { case: label, files: n, ms, requests };
}

const rows = [
  await measure('all kept (LIST only)', false, 'native'),
  await measure('all expired, native', true, 'native'),
  await measure('all expired, recheck', true, 'recheck'),
];
const perK = (r: Row, t: string): string => ((1000 * (r.requests[t] ?? 0)) / r.files).toFixed(1);
console.log(`sweep of ${n} files on ${endpoint}`);
console.log('| case | files/s | ms | LIST/1k | DELETE_MANY/1k | HEAD/1k | 14-min run (files) |');
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) {
  const rate = (r.files / r.ms) * 1000;
  console.log(
    `| ${r.case} | ${rate.toFixed(0)} | ${r.ms.toFixed(0)} | ${perK(r, 'LIST')} | ${perK(r, 'DELETE_MANY')} | ${perK(r, 'HEAD')} | ${(rate * 14 * 60).toExponential(1)} |`,
  );
}
