/**
 * Another process holds the SQLite write lock: the store's requests wait for it without stopping the
 * event loop (timers and other work run meanwhile), take the lock once it is free, and fail with
 * STORE_UNAVAILABLE once the busy timeout has passed. The other connection here is a plain
 * node:sqlite connection on the same file, as another process's would be.
 */
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite.js';
import { tempDir } from '../kit/temp.js';

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

async function lockedStore(busyTimeoutMs: number): Promise<{ store: SqliteStore; other: DatabaseSync }> {
  const t = tempDir('sqlite-busy');
  cleanup = t.cleanup;
  const path = join(t.dir, 's.db');
  const store = await SqliteStore.open(path, { busyTimeoutMs });
  await store.put('before', new Uint8Array([1]));
  const other = new DatabaseSync(path);
  other.exec('BEGIN IMMEDIATE');
  other.exec("UPDATE objects SET size = size WHERE key = CAST('before' AS BLOB)");
  return { store, other };
}

/** Counts timer ticks while `p` runs: how often the event loop ran meanwhile. */
async function ticksDuring<T>(p: Promise<T>): Promise<{ outcome: PromiseSettledResult<T>; ticks: number }> {
  let ticks = 0;
  const timer = setInterval(() => (ticks += 1), 10);
  const [outcome] = await Promise.allSettled([p]);
  clearInterval(timer);
  return { outcome: outcome!, ticks };
}

/** Microtask turns until `p` settles: what the busy retry must not add to an uncontended request. */
async function turnsUntil(p: Promise<unknown>): Promise<number> {
  let settled = false;
  void p.then(
    () => (settled = true),
    () => (settled = true),
  );
  let turns = 0;
  while (!settled && turns < 100) {
    await Promise.resolve();
    turns += 1;
  }
  return turns;
}

describe('the SQLite store without contention', () => {
  it('answers with no timer and no await of the busy retry on the way', async () => {
    const t = tempDir('sqlite-busy');
    cleanup = t.cleanup;
    const store = await SqliteStore.open(join(t.dir, 's.db'), { durability: 'normal' });
    try {
      await store.put('k', new Uint8Array([1]));
      expect(await turnsUntil(store.head('k'))).toBe(1);
      expect(await turnsUntil(store.get('k'))).toBe(1);
      expect(await turnsUntil(store.put('k', new Uint8Array([2])))).toBe(3);
      expect(await turnsUntil(store.transaction(() => store.head('k')))).toBe(4);
    } finally {
      await store.close();
    }
  });
});

describe('the SQLite store while another connection holds the write lock', () => {
  it.each([
    ['a write', (store: SqliteStore) => store.put('k', new Uint8Array([2]))],
    ['a transaction', (store: SqliteStore) => store.transaction(() => store.put('k', new Uint8Array([2])))],
    [
      'a batch delete',
      (store: SqliteStore) => store.deleteMany(['before']).then(() => store.put('k', new Uint8Array([2]))),
    ],
  ])('%s waits with the event loop running, then lands', async (_, request) => {
    const { store, other } = await lockedStore(15_000);
    try {
      setTimeout(() => other.exec('COMMIT'), 200);
      const { outcome, ticks } = await ticksDuring(request(store));
      expect(outcome.status).toBe('fulfilled');
      expect(ticks).toBeGreaterThanOrEqual(5); // a blocked event loop would count none until the lock was free
      expect(await store.head('k')).not.toBeNull();
    } finally {
      other.close();
      await store.close();
    }
  });

  it('a read is answered while the lock is held', async () => {
    const { store, other } = await lockedStore(15_000);
    try {
      expect((await store.get('before'))?.body).toEqual(new Uint8Array([1]));
      expect((await store.list('')).objects.map((o) => o.key)).toEqual(['before']);
    } finally {
      other.close();
      await store.close();
    }
  });

  it('a write fails with STORE_UNAVAILABLE once the busy timeout has passed, the event loop running meanwhile', async () => {
    const { store, other } = await lockedStore(300);
    try {
      const { outcome, ticks } = await ticksDuring(store.put('k', new Uint8Array([2])));
      expect(outcome.status).toBe('rejected');
      expect((outcome as PromiseRejectedResult).reason).toMatchObject({
        code: 'STORE_UNAVAILABLE',
        message: 'the SQLite store failed: SQLITE_BUSY',
      });
      expect(ticks).toBeGreaterThanOrEqual(10);
      other.exec('COMMIT');
      expect(await store.head('k')).toBeNull();
      await store.put('k', new Uint8Array([3])); // free again: it lands
      expect((await store.get('k'))?.body).toEqual(new Uint8Array([3]));
    } finally {
      other.close();
      await store.close();
    }
  });

  it("a transaction's BEGIN fails with STORE_UNAVAILABLE once the busy timeout has passed; its body never runs", async () => {
    const { store, other } = await lockedStore(300);
    try {
      let ran = false;
      const { outcome, ticks } = await ticksDuring(
        store.transaction(async () => {
          ran = true;
          await store.put('k', new Uint8Array([2]));
        }),
      );
      expect(outcome.status).toBe('rejected');
      expect((outcome as PromiseRejectedResult).reason).toMatchObject({
        code: 'STORE_UNAVAILABLE',
        message: 'the SQLite store failed: SQLITE_BUSY',
      });
      expect(ran).toBe(false);
      expect(ticks).toBeGreaterThanOrEqual(10);
      other.exec('COMMIT');
      await store.transaction(() => store.put('k', new Uint8Array([3]))); // free again: it lands
      expect((await store.get('k'))?.body).toEqual(new Uint8Array([3]));
    } finally {
      other.close();
      await store.close();
    }
  });
});
