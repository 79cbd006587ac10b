/**
 * The sweeper over a virtual bucket (aws-sdk-client-mock behind S3Store, test/expiry/s3-mock.ts):
 * requests per command type against the acceptance bound (at most 1 LIST per 1,000 objects plus
 * 1 DeleteObjects per 1,000 deletions), and retained heap as the object count grows, against a
 * baseline in the same run that holds the whole listing (what a sweeper that collects keys first
 * would pay). Run: npx tsx bench/expire.ts
 *
 * Heap is measured after a forced GC at every progress report (each 1,000 objects), so the figure
 * is what the sweep keeps alive, not garbage waiting for collection.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { s3Deleter } from '../src/expiry/deleter.js';
import { sweep } from '../src/expiry/sweep.js';
import { listAll, type ObjectInfo } from '../src/store/port.js';
import { MOCK_BUCKET, MOCK_NOW, MOCK_PREFIX, virtualBucket } from '../test/expiry/s3-mock.js';
import { printTable } from './stats.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapMiB(): number {
  gc();
  return process.memoryUsage().heapUsed / (1024 * 1024);
}

const fmt = (n: number): string => n.toFixed(2);

async function measureSweep(
  objects: number,
  mode: 'native' | 'recheck',
): Promise<{ calls: Record<string, number>; deleted: number; retainedMiB: number; bound: string }> {
  const bucket = virtualBucket(objects);
  const deleter = s3Deleter({ client: bucket.client, bucket: MOCK_BUCKET, prefix: MOCK_PREFIX, mode });
  const base = heapMiB();
  let peak = 0;
  const summary = await sweep({
    store: bucket.store,
    ttl: { ttlDays: 30 },
    now: () => MOCK_NOW,
    deleter,
    onProgress: () => {
      peak = Math.max(peak, heapMiB() - base);
    },
  });
  const calls = bucket.calls();
  bucket.restore();
  const allowed = Math.ceil(objects / 1000) + Math.ceil(summary.expired / 1000);
  const used = (calls['ListObjectsV2'] ?? 0) + (calls['DeleteObjects'] ?? 0);
  const within = used <= allowed && Object.keys(calls).every((k) => k === 'ListObjectsV2' || k === 'DeleteObjects');
  return {
    calls,
    deleted: bucket.deletedKeys(),
    retainedMiB: peak,
    bound: `${used + (calls['HeadObject'] ?? 0)} / ${allowed} ${within ? 'within' : 'OVER'}`,
  };
}

async function measureHoldingListing(objects: number): Promise<number> {
  const bucket = virtualBucket(objects);
  const base = heapMiB();
  const held: ObjectInfo[] = [];
  for await (const info of listAll(bucket.store, 'u/')) held.push(info);
  const retained = heapMiB() - base;
  bucket.restore();
  if (held.length !== objects) throw new Error('listing incomplete');
  return retained;
}

const rows: string[][] = [];
for (const objects of [10_000, 50_000, 100_000]) {
  for (const mode of ['native', 'recheck'] as const) {
    const r = await measureSweep(objects, mode);
    rows.push([
      objects.toLocaleString('en'),
      mode,
      String(r.calls['ListObjectsV2'] ?? 0),
      String(r.calls['DeleteObjects'] ?? 0),
      String(r.calls['HeadObject'] ?? 0),
      r.deleted.toLocaleString('en'),
      r.bound,
      fmt(r.retainedMiB),
    ]);
  }
  rows.push([
    objects.toLocaleString('en'),
    'baseline: hold listing',
    '',
    '',
    '',
    '',
    '',
    fmt(await measureHoldingListing(objects)),
  ]);
}
printTable(
  ['objects', 'mode', 'LIST', 'DeleteObjects', 'HEAD', 'deleted', 'requests / bound', 'retained heap MiB'],
  rows,
);
console.log(
  '\nbound = ceil(objects/1000) LIST + ceil(deletions/1000) DeleteObjects; recheck mode (servers that ignore conditional deletes) adds a HEAD per deletion and deletes per 100.',
);
