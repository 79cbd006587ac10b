/**
 * Object-store adapters side by side, in one run:  npx tsx bench/store.ts [iterations]
 * Median milliseconds per operation on 4 KiB bodies for the memory adapter (the baseline) and the
 * file adapter, durable (fsync of file and directory, the default) and not. Keys are spread over
 * 16 directories of one user-like prefix, as the vault lays them out.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore } from '../src/store/file.js';
import { MemoryStore } from '../src/store/memory.js';
import type { ObjectStore } from '../src/store/port.js';
import { median, printTable, timeRuns } from './stats.js';

const iterations = Number(process.argv[2] ?? 300);
const body = new Uint8Array(randomBytes(4096));
const keyOf = (i: number): string => `bench/u/0123abcd/${i & 15}/file-${i}.md`;

interface Row {
  name: string;
  put: number;
  putIfMatch: number;
  get: number;
  head: number;
  list: number;
  deleteIfMatch: number;
}

async function measure(name: string, store: ObjectStore): Promise<Row> {
  const etags = new Map<number, string>();
  const put = median(await timeRuns(iterations, async (i) => etags.set(i, (await store.put(keyOf(i), body)).etag)));
  const putIfMatch = median(
    await timeRuns(iterations, async (i) => {
      if (i < 0) return; // warm-up runs have no etag to match
      etags.set(i, (await store.put(keyOf(i), body, { ifMatch: etags.get(i)! })).etag);
    }),
  );
  const get = median(await timeRuns(iterations, (i) => store.get(keyOf(Math.max(i, 0)))));
  const head = median(await timeRuns(iterations, (i) => store.head(keyOf(Math.max(i, 0)))));
  const list = median(
    await timeRuns(Math.min(iterations, 50), (i) => store.list(`bench/u/0123abcd/${Math.max(i, 0) & 15}/`)),
  );
  // A fence: the version read, deleted exactly (deleteExactly where the store offers it, as the
  // vault uses it; else the conditional DELETE). Warm-up runs delete keys the runs do not use.
  const deleteIfMatch = median(
    await timeRuns(iterations, async (i) => {
      const key = i < 0 ? keyOf(iterations - i) : keyOf(i);
      const etag = i < 0 ? (await store.put(key, body)).etag : etags.get(i)!;
      await (store.deleteExactly ? store.deleteExactly(key, etag) : store.delete(key, { ifMatch: etag }));
    }),
  );
  await store.close();
  return { name, put, putIfMatch, get, head, list, deleteIfMatch };
}

const dirs: string[] = [];
async function fileStore(durable: boolean): Promise<FileStore> {
  const dir = await mkdtemp(join(tmpdir(), 'memvault-bench-store-'));
  dirs.push(dir);
  return FileStore.open(dir, { durable });
}

try {
  const rows = [
    await measure('memory (baseline)', new MemoryStore()),
    await measure('file, durable (default)', await fileStore(true)),
    await measure('file, durable: false', await fileStore(false)),
  ];
  const base = rows[0]!;
  console.log(
    `4 KiB bodies, ${iterations} operations each, median ms per operation (list: ~${Math.round(iterations / 16)} keys per page)`,
  );
  printTable(
    ['adapter', 'put', 'put ifMatch', 'get', 'head', 'list', 'delete ifMatch'],
    rows.map((r) => [r.name, r.put, r.putIfMatch, r.get, r.head, r.list, r.deleteIfMatch]),
  );
  console.log('\nratio to memory (same run)');
  printTable(
    ['adapter', 'put', 'put ifMatch', 'get', 'head', 'list', 'delete ifMatch'],
    rows
      .slice(1)
      .map((r) => [
        r.name,
        `${(r.put / base.put).toFixed(0)}x`,
        `${(r.putIfMatch / base.putIfMatch).toFixed(0)}x`,
        `${(r.get / base.get).toFixed(0)}x`,
        `${(r.head / base.head).toFixed(0)}x`,
        `${(r.list / base.list).toFixed(0)}x`,
        `${(r.deleteIfMatch / base.deleteIfMatch).toFixed(0)}x`,
      ]),
  );
} finally {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
}
