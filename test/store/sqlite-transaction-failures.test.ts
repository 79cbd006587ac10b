/**
 * A transaction of the SQLite store when something goes wrong inside it:
 * - a request of it fails in SQLite (here a full database, as a full disk would: SQLite may roll the
 *   whole transaction back itself), and the caller goes on: nothing of the transaction lands, and
 *   nothing after the failure commits on its own;
 * - it awaits a write another context started while it was open (two commands sharing one touch of
 *   a file): the vault touches nothing inside its transactions, and the store bounds the write's
 *   wait by the busy timeout, so neither waits for the other for ever.
 */
import { join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { ExpiryService } from '../../src/expiry/access.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { transactionOf } from '../../src/vault/files/capabilities.js';
import { Expiry } from '../../src/vault/files/expiry.js';
import { tempDir } from '../kit/temp.js';

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

async function openStore(label: string, options: Parameters<typeof SqliteStore.open>[1] = {}) {
  const t = tempDir(label);
  cleanup = t.cleanup;
  return { path: join(t.dir, 's.db'), store: await SqliteStore.open(join(t.dir, 's.db'), options) };
}

/** The database may grow by four pages at most: a 1 MiB write fails with SQLITE_FULL. */
function fillUp(store: SqliteStore): void {
  const db = (store as unknown as { connection: { db: DatabaseSync } }).connection.db;
  const { page_count } = db.prepare('PRAGMA page_count').get() as { page_count: number };
  db.exec(`PRAGMA max_page_count = ${page_count + 4}`);
}

describe('a transaction one of whose requests fails in SQLite', () => {
  it('lands nothing when the caller catches the failure and goes on', async () => {
    const { store } = await openStore('sqlite-tx-full');
    try {
      await store.put('seed', new Uint8Array(10));
      fillUp(store);
      const outcome = store.transaction(async () => {
        await store.put('a', new Uint8Array(10));
        await store.put('big', new Uint8Array(1 << 20)).catch(() => undefined);
        await store.put('c', new Uint8Array(10)).catch(() => undefined); // refused: the transaction failed
        await store.get('seed').catch(() => undefined);
      });
      await expect(outcome).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
      expect(await store.head('a')).toBeNull();
      expect(await store.head('c')).toBeNull();
      expect(await store.head('seed')).not.toBeNull();
      await store.put('after', new Uint8Array(1)); // the store is usable again
      expect(await store.head('after')).not.toBeNull();
    } finally {
      await store.close();
    }
  });

  it('lands nothing when two of its writes run side by side and one fails', async () => {
    const { store } = await openStore('sqlite-tx-full');
    try {
      await store.put('seed', new Uint8Array(10));
      fillUp(store);
      const outcome = store.transaction(async () => {
        await store.put('a', new Uint8Array(10));
        await Promise.allSettled([store.put('big', new Uint8Array(1 << 20)), store.put('c', new Uint8Array(10))]);
      });
      await expect(outcome).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
      expect(await store.head('a')).toBeNull();
      expect(await store.head('c')).toBeNull();
    } finally {
      await store.close();
    }
  });
});

const within = <T>(p: Promise<T>, ms: number): Promise<T | 'hung'> =>
  Promise.race([p, new Promise<'hung'>((r) => setTimeout(() => r('hung'), ms).unref())]);

/**
 * A file last written two days ago (a read touches it), a transaction open that will read it, and
 * another command's read of it whose touch starts meanwhile (its PUT waits for the transaction).
 */
async function touchDuringTransaction(
  busyTimeoutMs: number,
  vaultSide: boolean,
): Promise<{ transaction: Promise<void>; view: Promise<unknown>; touchErrors: unknown[]; store: SqliteStore }> {
  const { path, store: old } = await openStore('sqlite-tx-touch', { now: () => new Date(Date.now() - 2 * 86_400_000) });
  await old.put('u/x/f/a', new Uint8Array([1, 2, 3]));
  await old.close();
  const store = await SqliteStore.open(path, { busyTimeoutMs });
  const touchErrors: unknown[] = [];
  const service = new ExpiryService(store, { ttlDays: 30, onTouchError: (e) => touchErrors.push(e) });
  const policy = await service.forUser('alice', { uid: 'x', filesPrefix: 'u/x/f/' });
  const expiry = new Expiry(policy);
  const run = vaultSide ? transactionOf(store)! : <T>(fn: () => Promise<T>) => store.transaction(fn);
  let opened!: () => void;
  const open = new Promise<void>((resolve) => (opened = resolve));
  let go!: () => void;
  const gate = new Promise<void>((resolve) => (go = resolve));
  const transaction = run(async () => {
    opened();
    await gate;
    const object = (await store.get('u/x/f/a'))!;
    await (vaultSide ? expiry.afterRead('u/x/f/a', object) : policy.afterRead('u/x/f/a', object));
    await store.put('u/x/f/b', new Uint8Array([4]));
  });
  await open;
  const view = policy.afterRead('u/x/f/a', (await store.get('u/x/f/a'))!);
  go();
  return { transaction, view, touchErrors, store };
}

describe('a transaction and a touch another command started while it was open', () => {
  it('the vault touches nothing inside its transaction: both end at once', async () => {
    const { transaction, view, store } = await touchDuringTransaction(15_000, true);
    try {
      expect(await within(transaction, 3000)).not.toBe('hung');
      expect(await within(view, 3000)).not.toBe('hung');
      expect(await store.head('u/x/f/b')).not.toBeNull();
    } finally {
      await store.close();
    }
  });

  it('a transaction that joins the touch: the touch gives up after the busy timeout and both end', async () => {
    const { transaction, view, touchErrors, store } = await touchDuringTransaction(300, false);
    try {
      expect(await within(transaction, 5000)).not.toBe('hung');
      expect(await within(view, 5000)).toBeUndefined(); // the touch wrote nothing
      expect(touchErrors).toEqual([expect.objectContaining({ code: 'STORE_UNAVAILABLE' })]);
      expect(await store.head('u/x/f/b')).not.toBeNull();
    } finally {
      await store.close();
    }
  });
});
