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
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { realpath } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { openDatabase, toSqliteStoreError, type SqliteDatabaseOptions } from './database.js';

interface OpenTransaction {
  connection: SqliteConnection;
  done: Promise<void>;
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

  private constructor(
    readonly db: DatabaseSync,
    private readonly id: string,
    private readonly path: string,
    private readonly busyTimeoutMs: number,
  ) {}

  /** The process's connection to the file at `path` (opened, and by default created, on first use). */
  static async acquire(path: string, options: SqliteDatabaseOptions): Promise<SqliteConnection> {
    // One file, one key: its directory's real path (symlinks resolved) and its name, and the durability.
    const dir = await realpath(dirname(path)).catch(() => resolve(dirname(path)));
    const id = `${options.durability ?? 'full'}|${join(dir, basename(path))}`;
    let opening = shared.get(id);
    if (!opening) {
      opening = openDatabase(path, options).then(
        (db) => new SqliteConnection(db, id, path, options.busyTimeoutMs ?? 15_000),
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
    if (this.users > 0) return;
    shared.delete(this.id);
    this.statements.clear();
    this.reader?.statements.clear();
    this.reader?.db.close();
    this.db.close();
  }

  /** Resolves when a request of the current context may run: at once, unless another context's transaction is open. */
  whenFree(): Promise<void> | undefined {
    const active = this.active;
    if (!active || current.getStore() === active) return undefined;
    return active.done.then(() => this.whenFree());
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
    const tx: OpenTransaction = { connection: this, done: new Promise<void>((resolve) => (finish = resolve)) };
    this.active = tx;
    try {
      try {
        this.db.exec('BEGIN IMMEDIATE');
      } catch (e) {
        throw toSqliteStoreError(e);
      }
      try {
        const result = await current.run(tx, fn);
        this.db.exec('COMMIT');
        return result;
      } catch (e) {
        rollBack(this.db, 'ROLLBACK');
        throw e;
      }
    } finally {
      this.active = null;
      finish();
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
      db.exec(`PRAGMA busy_timeout = ${this.busyTimeoutMs}`);
      db.exec('PRAGMA query_only = 1');
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

/** Undo; a transaction SQLite already rolled back itself (a full disk, an I/O error) needs nothing. */
function rollBack(db: DatabaseSync, sql: string): void {
  try {
    db.exec(sql);
  } catch {
    // nothing was open
  }
}
