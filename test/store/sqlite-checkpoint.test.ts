/**
 * WAL checkpoints run on a worker thread (src/store/sqlite/checkpointer.ts): the connection's own
 * checkpoint is only a far safety net while the worker works, the database file takes the pages
 * the worker copies, a worker that fails hands checkpoints back to the connection (the WAL never
 * grows without end), and a store that closes leaves no WAL behind (the worker's connection closed
 * first, so the store's is the last one and checkpoints the whole WAL).
 */
import { readdirSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { Checkpointer } from '../../src/store/sqlite/checkpointer.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { tempDir } from '../kit/temp.js';

const temp = tempDir('memvault-checkpoint');
afterAll(temp.cleanup);
let stores = 0;

/** A database file of its own for each test. */
function freshPath(): string {
  return join(temp.dir, `store-${(stores += 1)}.db`);
}

const body = new Uint8Array(4096).fill(7);

/** `count` commits of a 4 KiB row each, every one counted by the checkpointer, as the connection does. */
function commit(db: DatabaseSync, checkpointer: Checkpointer, count: number, from = 0): void {
  const insert = db.prepare(
    "INSERT INTO objects (key, body, size, etag, modified, metadata, tags) VALUES (?, ?, 4096, 'e', 0, '{}', '{}')",
  );
  for (let i = from; i < from + count; i++) {
    db.exec('BEGIN IMMEDIATE');
    insert.run(new TextEncoder().encode(`k${i}`), body);
    db.exec('COMMIT');
    checkpointer.committed();
  }
}

const autocheckpoint = (db: DatabaseSync) =>
  (db.prepare('PRAGMA wal_autocheckpoint').get() as { wal_autocheckpoint: number }).wal_autocheckpoint;

describe('sqlite: WAL checkpoints on a worker thread', () => {
  it('copies the WAL into the database file off the connection, whose own checkpoint waits far behind', async () => {
    const path = freshPath();
    const db = await openDatabase(path);
    const checkpointer = new Checkpointer(db, path, 1_000);
    const before = (await stat(path)).size;
    commit(db, checkpointer, 99);
    expect(autocheckpoint(db)).toBe(1_000); // no worker yet: SQLite's default
    commit(db, checkpointer, 1, 99); // the 100th commit starts the worker and asks for a checkpoint
    expect(autocheckpoint(db)).toBe(10_000);
    await checkpointer.settled();
    // 100 rows of 4 KiB are about 200 pages, far under either connection threshold: only the
    // worker's checkpoint can have put them in the database file.
    expect((await stat(path)).size).toBeGreaterThan(before + 100 * 4096);
    expect(checkpointer.fellBack).toBe(false);
    await checkpointer.close();
    db.close();
  });

  it.each([
    ['fails as it starts', "throw new Error('no checkpoints here')"],
    ['stops unasked', "require('node:worker_threads').parentPort.close()"],
  ])('hands checkpoints back to the connection when the worker %s, and the writes go on', async (_, source) => {
    const path = freshPath();
    const db = await openDatabase(path);
    const checkpointer = new Checkpointer(db, path, 1_000, { source });
    commit(db, checkpointer, 100);
    await checkpointer.settled();
    expect(checkpointer.fellBack).toBe(true);
    expect(autocheckpoint(db)).toBe(1_000);
    commit(db, checkpointer, 200, 100); // no second worker, and nothing throws
    expect((db.prepare('SELECT count(*) AS n FROM objects').get() as { n: number }).n).toBe(300);
    await checkpointer.close();
    db.close();
  });

  it('a checkpoint that finds another under way (SQLITE_BUSY) is no failure; another error is', async () => {
    const path = freshPath();
    const db = await openDatabase(path);
    // The worker's statement takes the write lock (busy timeout 0) while this connection holds it:
    // SQLITE_BUSY, as a PASSIVE checkpoint meets another connection's checkpoint.
    const busy = new Checkpointer(db, path, 0, { sql: 'BEGIN IMMEDIATE' });
    commit(db, busy, 99);
    db.exec('BEGIN IMMEDIATE');
    busy.committed();
    await busy.settled();
    db.exec('ROLLBACK');
    expect(busy.fellBack).toBe(false);
    expect(autocheckpoint(db)).toBe(10_000);
    await busy.close();
    const broken = new Checkpointer(db, path, 0, { sql: 'SELECT * FROM no_such_table' });
    commit(db, broken, 100, 99);
    await broken.settled();
    expect(broken.fellBack).toBe(true);
    await broken.close();
    db.close();
  });

  it('a store that closes leaves the whole WAL checkpointed and removed, its worker stopped', async () => {
    const path = freshPath();
    const threads = () => readdirSync('/proc/self/task').length; // Linux: this process's threads
    const before = threads();
    const store = await SqliteStore.open(path);
    await Promise.all(Array.from({ length: 300 }, (_, i) => store.put(`k${i}`, body)));
    expect(threads()).toBeGreaterThan(before); // the worker
    await store.close();
    expect(threads()).toBeLessThanOrEqual(before); // the worker stopped with the store
    await expect(stat(`${path}-wal`)).rejects.toMatchObject({ code: 'ENOENT' });
    const reopened = await SqliteStore.open(path);
    expect((await reopened.list('')).objects.length).toBe(300);
    await reopened.close();
  });
});
