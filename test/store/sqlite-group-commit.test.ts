/**
 * Group commit on the SQLite store (durability=full): a write answers only after an fsync of the WAL
 * that started after its commit has landed; the writes committed while one fsync runs share the
 * next; a failed fsync fails the write; durability=normal makes none. The fsync is observed (and
 * failed, for the fault) on Node's FileHandle, the one the store calls.
 */
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function fileHandlePrototype(): Promise<{ datasync: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'memvault-sqlite-gc-'));
  dirs.push(dir);
  const handle = await open(join(dir, 'probe'), 'w');
  await handle.close();
  return Object.getPrototypeOf(handle) as { datasync: () => Promise<void> };
}

async function openStore(durability: 'full' | 'normal'): Promise<SqliteStore> {
  const dir = await mkdtemp(join(tmpdir(), 'memvault-sqlite-gc-'));
  dirs.push(dir);
  return SqliteStore.open(join(dir, 'store.db'), { durability });
}

const proto = await fileHandlePrototype();
const realDatasync = proto.datasync;
afterEach(() => {
  proto.datasync = realDatasync;
});

const body = new TextEncoder().encode('x');

describe('sqlite: group commit', () => {
  it('answers a write only after an fsync that began after it, one fsync for the writes made meanwhile', async () => {
    const store = await openStore('full');
    await store.put('warm', body);
    const events: string[] = [];
    let syncs = 0;
    proto.datasync = async function (this: unknown) {
      const n = ++syncs;
      events.push(`sync-start ${n}`);
      await new Promise((r) => setTimeout(r, 5));
      await realDatasync.call(this);
      events.push(`sync-end ${n}`);
    };
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        events.push(`put ${i}`);
        await store.put(`k${i}`, body);
        events.push(`done ${i}`);
      }),
    );
    for (let i = 0; i < 20; i++) {
      const done = events.indexOf(`done ${i}`);
      const lastEnd = events.slice(0, done).findLastIndex((e) => e.startsWith('sync-end'));
      const n = events[lastEnd]!.split(' ')[1];
      expect(events.indexOf(`sync-start ${n}`), `put ${i}`).toBeGreaterThan(events.indexOf(`put ${i}`));
    }
    expect(syncs).toBeGreaterThanOrEqual(1);
    expect(syncs).toBeLessThanOrEqual(2); // the 20 commits made in one turn share one fsync (two at most)
    // A transaction answers after its own fsync too.
    const before = syncs;
    await store.transaction(async () => {
      await store.put('t1', body);
      await store.put('t2', body);
    });
    expect(syncs).toBe(before + 1);
    await store.close();
  });

  it('fails a write whose fsync failed (STORE_UNAVAILABLE, no path); durability=normal makes no fsync', async () => {
    const store = await openStore('full');
    await store.put('warm', body);
    proto.datasync = () => Promise.reject(Object.assign(new Error('EIO /secret/path'), { code: 'EIO' }));
    const failed = await store.put('k', body).catch((e: unknown) => e);
    expect(failed).toMatchObject({ code: 'STORE_UNAVAILABLE', message: 'the SQLite store failed: EIO' });
    proto.datasync = realDatasync;
    await store.put('k2', body); // the next fsync is tried afresh
    await store.close();

    const normal = await openStore('normal');
    let syncs = 0;
    proto.datasync = async function (this: unknown) {
      syncs += 1;
      await realDatasync.call(this);
    };
    await normal.put('k', body);
    await normal.transaction(() => normal.put('t', body));
    expect(syncs).toBe(0);
    await normal.close();
  });
});
