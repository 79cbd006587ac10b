/**
 * One process's connection to one SQLite database file, shared by every SqliteStore opened on that
 * file (with the same durability), and the transactions run on it.
 *
 * node:sqlite is synchronous and a connection has one transaction at a time. A request is one
 * statement (or a few in one immediate transaction) run to its end on the event loop, so requests
 * never interleave. A `transaction(fn)` spans awaits: while it is open, a request that is not part
 * of it (async-local storage tells) waits until it has committed or rolled back, so that nothing
 * of another command lands inside it. Sharing the connection is what makes that possible: two
 * connections of one process would wait for each other's lock on the one thread and never get it.
 * A read that is not part of the open transaction does not wait: it runs on a second connection,
 * which sees the last committed state (never a part of the transaction), so that a transaction
 * that awaits such a read (a key load another command started) cannot wait for itself.
 *
 * Group commit (durability 'full'): SQLite commits without an fsync of its own (synchronous=NORMAL,
 * never a corrupt database in WAL mode), and a write answers once an fsync of the WAL file that
 * started after its commit has landed (`durable`). That fsync runs on libuv's thread pool, so the
 * event loop runs other commands meanwhile, and every commit made while one fsync runs shares the
 * next: one fsync for many users' commands. The write lock is not held across the fsync. A reader
 * may see a commit whose fsync is still under way (it has not been acknowledged: a power loss in
 * that millisecond takes it back, never an acknowledged one). Checkpoints run on a worker thread
 * (checkpointer.ts), each commit counted by `committed()`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { open as openFile, realpath, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { MemvaultError } from '../../errors.js';
import { Checkpointer } from './checkpointer.js';
import { openDatabase, toSqliteStoreError, type SqliteDatabaseOptions, type SqliteDurability } from './database.js';

interface OpenTransaction {
  connection: SqliteConnection;
  done: Promise<void>;
  /**
   * A request of the transaction failed in SQLite. SQLite may have rolled the whole transaction back
   * itself (a full disk, an I/O error), and a request after that would commit on its own: the
   * transaction fails as a whole instead, and nothing else of it runs.
   */
  failed: boolean;
}

/** The transaction the current async context runs in, if any. */
const current = new AsyncLocalStorage<OpenTransaction>();

const shared = new Map<string, Promise<SqliteConnection>>();

export class SqliteConnection {
  private readonly statements = new Map<string, StatementSync>();
  /** Random per connection, so that two connections on one file never hand out one ETag. */
  private readonly etagPrefix = randomBytes(8).toString('hex');
  private issued = 0;
  private users = 0;
  private active: OpenTransaction | null = null;
  private reader: { db: DatabaseSync; statements: Map<string, StatementSync> } | undefined;
  /** The WAL file, opened at the first fsync (SQLite makes it; it stays while this connection is open). */
  private wal: Promise<FileHandle> | undefined;
  /** The WAL fsync under way, and the next one, shared by every commit made while that one runs. */
  private syncing: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  private readonly checkpointer: Checkpointer;

  private constructor(
    readonly db: DatabaseSync,
    private readonly id: string,
    private readonly path: string,
    private readonly busyTimeoutMs: number,
    private readonly durability: SqliteDurability,
  ) {
    this.checkpointer = new Checkpointer(db, path, busyTimeoutMs);
    // SQLite's own busy wait sleeps on the thread: the event loop would stop while another process
    // holds the write lock. The store waits for it asynchronously instead (busyRetry).
    db.exec('PRAGMA busy_timeout = 0');
  }

  /** The process's connection to the file at `path` (opened, and by default created, on first use). */
  static async acquire(path: string, options: SqliteDatabaseOptions): Promise<SqliteConnection> {
    // One file, one key: its directory's real path (symlinks resolved) and its name, and the durability.
    const dir = await realpath(dirname(path)).catch(() => resolve(dirname(path)));
    const id = `${options.durability ?? 'full'}|${join(dir, basename(path))}`;
    let opening = shared.get(id);
    if (!opening) {
      opening = openDatabase(path, options).then(
        (db) => new SqliteConnection(db, id, path, options.busyTimeoutMs ?? 15_000, options.durability ?? 'full'),
      );
      shared.set(id, opening);
      opening.catch(() => shared.delete(id));
    }
    const connection = await opening;
    connection.users += 1;
    return connection;
  }

  /** One store is done with it; the last one closes it (the last connection on the file checkpoints the WAL). */
  async release(): Promise<void> {
    this.users -= 1;
    if (this.users > 0) return;
    await this.active?.done;
    await this.queued?.catch(() => undefined);
    await this.syncing?.catch(() => undefined);
    if (this.users > 0) return;
    shared.delete(this.id);
    const wal = this.wal;
    this.wal = undefined;
    await wal?.then((handle) => handle.close()).catch(() => undefined);
    await this.checkpointer.close();
    this.statements.clear();
    this.reader?.statements.clear();
    this.reader?.db.close();
    this.db.close();
  }

  /**
   * Resolves when a request of the current context may run: at once, unless another context's
   * transaction is open. The wait is bounded by the busy timeout, as a wait for another process's
   * transaction is: a transaction that awaits a write another command started meanwhile (two
   * commands sharing one touch of a file) would otherwise wait for it for ever, and it for the
   * transaction. That write fails (STORE_UNAVAILABLE) and the transaction goes on.
   */
  whenFree(deadline?: number): Promise<void> | undefined {
    const active = this.active;
    if (!active || current.getStore() === active) return undefined;
    const until = deadline ?? Date.now() + this.busyTimeoutMs;
    const left = until - Date.now();
    if (left <= 0) return Promise.reject(busyError());
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(busyError()), left);
      timer.unref();
    });
    return Promise.race([active.done, timedOut])
      .finally(() => clearTimeout(timer))
      .then(() => this.whenFree(until));
  }

  /**
   * `fn` as one transaction, taken with BEGIN IMMEDIATE (the write lock first, so what it reads
   * stays true until it commits): committed when it resolves, rolled back when it throws or the
   * process dies. A transaction inside one joins it.
   */
  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active && current.getStore() === this.active) return fn();
    while (this.active) await this.active.done;
    let finish!: () => void;
    const tx: OpenTransaction = {
      connection: this,
      done: new Promise<void>((resolve) => (finish = resolve)),
      failed: false,
    };
    this.active = tx;
    try {
      await this.begin();
      let result: T;
      try {
        result = await current.run(tx, fn);
      } catch (e) {
        rollBack(this.db, 'ROLLBACK');
        throw e;
      }
      try {
        if (tx.failed) throw failedTransactionError();
        this.db.exec('COMMIT');
      } catch (e) {
        rollBack(this.db, 'ROLLBACK');
        throw toSqliteStoreError(e);
      }
      this.committed();
      this.active = null;
      finish(); // the next transaction runs while this one's fsync does: the write lock is free
      await this.durable();
      return result;
    } finally {
      if (this.active === tx) this.active = null;
      finish();
    }
  }

  /** BEGIN IMMEDIATE, tried again (asynchronously) while another connection holds the write lock. */
  private begin(retry?: BusyRetry): Promise<void> {
    return this.retrying(
      () => void this.db.exec('BEGIN IMMEDIATE'),
      retry,
      (next) => this.begin(next),
    );
  }

  /**
   * `step` now; when it fails with SQLITE_BUSY (another connection holds the lock it takes at its
   * start: nothing of it ran), outside a transaction and until the busy timeout, `again(next)` after
   * the wait, the event loop running meanwhile; any other failure rejects as the store's error.
   * Promises chained, not an async loop: an uncontended step settles with no await of its own (a
   * request is the hot path). `again` lets a request check again whether it may run at all.
   */
  retrying<T>(step: () => T, retry: BusyRetry | undefined, again: (next: BusyRetry) => Promise<T>): Promise<T> {
    try {
      return Promise.resolve(step());
    } catch (e) {
      const next = this.inTransaction() ? undefined : busyRetry(e, retry, this.busyTimeoutMs);
      if (next) return sleep(next.delayMs).then(() => again(next));
      return Promise.reject(toSqliteStoreError(e));
    }
  }

  /** A write committed on this connection (a transaction, or a request of its own): the checkpointer counts it. */
  committed(): void {
    this.checkpointer.committed();
  }

  /** Whether the current async context runs in this connection's open transaction (its writes commit with it). */
  inTransaction(): boolean {
    return this.active !== null && current.getStore() === this.active;
  }

  /**
   * `fn` (synchronous: SQLite requests) for the current context: inside its open transaction, which
   * a failure in SQLite fails as a whole (nothing of it runs after that), or on its own.
   */
  request<T>(fn: () => T): T {
    const tx = this.inTransaction() ? this.active : null;
    if (tx?.failed) throw failedTransactionError();
    try {
      return fn();
    } catch (e) {
      if (tx && typeof (e as { errcode?: unknown }).errcode === 'number') tx.failed = true;
      throw e;
    }
  }

  /**
   * Resolves once every commit made before this call is on disk: with durability 'full', when an
   * fsync of the WAL that started after the call has landed (the one queued behind the fsync under
   * way, shared by every commit meanwhile); with 'normal', at once. A failed fsync rejects
   * (STORE_UNAVAILABLE): the write may have landed, as when an answer is lost.
   */
  durable(): Promise<void> {
    if (this.durability !== 'full') return Promise.resolve();
    if (this.queued) return this.queued;
    const before = this.syncing ?? Promise.resolve();
    const queued = before
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        const syncing = this.syncWal();
        this.syncing = syncing;
        return syncing.finally(() => {
          if (this.syncing === syncing) this.syncing = undefined;
        });
      });
    this.queued = queued;
    return queued;
  }

  private async syncWal(): Promise<void> {
    try {
      this.wal ??= openFile(`${this.path}-wal`, 'r+');
      await (await this.wal).datasync();
    } catch (e) {
      this.wal = undefined;
      throw toSqliteStoreError(e);
    }
  }

  /** `fn` (synchronous) as one step: its own immediate transaction, or a savepoint inside an open one. */
  immediate<T>(fn: () => T): T {
    const nested = this.active !== null;
    this.db.exec(nested ? 'SAVEPOINT request' : 'BEGIN IMMEDIATE');
    try {
      const result = fn();
      this.db.exec(nested ? 'RELEASE request' : 'COMMIT');
      return result;
    } catch (e) {
      if (nested) {
        rollBack(this.db, 'ROLLBACK TO request');
        rollBack(this.db, 'RELEASE request');
      } else rollBack(this.db, 'ROLLBACK');
      throw e;
    }
  }

  statement(sql: string): StatementSync {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** A statement for a read: on this connection, or on the reader while another context's transaction is open. */
  readStatement(sql: string): StatementSync {
    if (!this.active || current.getStore() === this.active) return this.statement(sql);
    if (!this.reader) {
      const Database = this.db.constructor as new (path: string) => DatabaseSync;
      const db = new Database(this.path);
      db.exec('PRAGMA query_only = 1'); // busy timeout 0: a read that finds a lock is tried again (busyRetry)
      this.reader = { db, statements: new Map() };
    }
    let statement = this.reader.statements.get(sql);
    if (!statement) {
      statement = this.reader.db.prepare(sql);
      this.reader.statements.set(sql, statement);
    }
    return statement;
  }

  nextEtag(): string {
    // A counter keeps rewrites of identical bytes distinguishable, as a conditional writer needs.
    return `${this.etagPrefix}${(++this.issued).toString(16).padStart(8, '0')}`;
  }
}

/** Another try of a request that found a lock taken: when, and how many tries so far. */
export interface BusyRetry {
  deadline: number;
  attempt: number;
  delayMs: number;
}

/** The longest wait between two tries: a lock another process holds for a moment is taken soon after. */
const MAX_BUSY_DELAY_MS = 25;

/** The next try after SQLITE_BUSY (1, 2, 4 ... 25 ms apart) until `timeoutMs` from the first; undefined for any other error or past it. */
function busyRetry(e: unknown, previous: BusyRetry | undefined, timeoutMs: number): BusyRetry | undefined {
  const errcode = (e as { errcode?: unknown }).errcode;
  if (typeof errcode !== 'number' || (errcode & 0xff) !== SQLITE_BUSY) return undefined;
  const deadline = previous?.deadline ?? Date.now() + timeoutMs;
  const attempt = (previous?.attempt ?? 0) + 1;
  const delayMs = Math.min(2 ** (attempt - 1), MAX_BUSY_DELAY_MS);
  return Date.now() + delayMs > deadline ? undefined : { deadline, attempt, delayMs };
}

const SQLITE_BUSY = 5;

const busyError = (): MemvaultError => new MemvaultError('STORE_UNAVAILABLE', 'the SQLite store failed: SQLITE_BUSY');

const failedTransactionError = (): MemvaultError =>
  new MemvaultError('STORE_UNAVAILABLE', 'the SQLite store failed: a request of the transaction failed');

/** Undo; a transaction SQLite already rolled back itself (a full disk, an I/O error) needs nothing. */
function rollBack(db: DatabaseSync, sql: string): void {
  try {
    db.exec(sql);
  } catch {
    // nothing was open
  }
}
