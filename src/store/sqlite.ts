import type { StatementSync } from 'node:sqlite';
import { MemvaultError } from '../errors.js';
import { countRequest } from './accounting.js';
import { assertValidKey, isWellFormed } from './file/keys.js';
import {
  PreconditionFailedError,
  type CopyOptions,
  type ListOptions,
  type ListPage,
  type ObjectInfo,
  type ObjectStore,
  type ObjectSummary,
  type PutOptions,
  type StoredObject,
  type SummaryOptions,
} from './port.js';
import { SqliteConnection, type BusyRetry } from './sqlite/connection.js';
import type { SqliteDatabaseOptions } from './sqlite/database.js';
import { listStatement, prefixBounds, summaryStatement } from './sqlite/listing.js';

export type { SqliteDurability } from './sqlite/database.js';

export interface SqliteStoreOptions extends SqliteDatabaseOptions {
  /** Clock for lastModified (expiry tests control it). */
  now?: () => Date;
}

interface Row {
  body: Uint8Array;
  size: number;
  etag: string;
  modified: number;
  metadata: string;
  tags: string;
}

type ListedRow = Pick<Row, 'size' | 'etag' | 'modified'> & { name: string };

const UPSERT = `INSERT INTO objects (key, body, size, etag, modified, metadata, tags) VALUES (?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (key) DO UPDATE SET body = excluded.body, size = excluded.size, etag = excluded.etag,
  modified = excluded.modified, metadata = excluded.metadata, tags = excluded.tags`;
const INSERT_NEW = `INSERT INTO objects (key, body, size, etag, modified, metadata, tags) VALUES (?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (key) DO NOTHING`;
const REPLACE_IF_MATCH = `UPDATE objects SET body = ?, size = ?, etag = ?, modified = ?, metadata = ?, tags = ?
  WHERE key = ? AND etag = ?`;

/**
 * The object store in one SQLite database file (`sqlite:/path/to/store.db`), with S3's semantics
 * like the others (the contract suite holds it to them).
 *
 * - Every request is one SQLite statement or one immediate transaction, decided inside SQLite: a
 *   conditional write, a create-only write and a conditional delete are each one atomic step, for
 *   every connection of every process on the file (WAL mode; a writer waits out another's
 *   transaction up to the busy timeout, then fails with STORE_UNAVAILABLE).
 * - `durability` 'full' (default) fsyncs the WAL before a commit answers: an acknowledged write
 *   survives a power loss (one fsync shared by the commits made meanwhile: sqlite/connection.ts).
 *   'normal' fsyncs at checkpoints only (see sqlite/database.ts).
 * - node:sqlite is synchronous: a request runs to its end on the event loop, so requests of one
 *   connection never interleave.
 * - Errors carry SQLite's result code only, never a path or SQL text.
 */
export class SqliteStore implements ObjectStore {
  readonly kind = 'sqlite';
  /** The conditional DELETE is one statement: a write that lands first makes it fail. */
  readonly atomicConditionalDelete = true;
  private closed = false;

  private constructor(
    private readonly connection: SqliteConnection,
    private readonly now: () => Date,
  ) {}

  /** Open (and by default create) the database at `path`; stores of one process on one file share its connection. */
  static async open(path: string, options: SqliteStoreOptions = {}): Promise<SqliteStore> {
    const { now, ...databaseOptions } = options;
    return new SqliteStore(await SqliteConnection.acquire(path, databaseOptions), now ?? (() => new Date()));
  }

  /**
   * Runs `fn` as one transaction: every request it makes (in its async context) commits together
   * when it resolves, or none does (it throws, or the process dies); other requests wait until it
   * is over, and other processes see it whole or not at all. The vault runs a directory rename or
   * delete this way (src/vault/tree/transactional.ts). Nested calls join the outer one.
   */
  transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(closedError());
    return this.connection.transaction(fn);
  }

  get(key: string): Promise<StoredObject | null> {
    return this.read('GET', (statement) => {
      const row = statement('SELECT body, size, etag, modified, metadata FROM objects WHERE key = ?').get(
        keyBytes(key),
      ) as Row | undefined;
      if (!row) return null;
      // node:sqlite hands each call a fresh Uint8Array of the blob: no copy of it is needed (2 µs a 4 KiB GET).
      return { ...info(key, row), body: row.body, metadata: JSON.parse(row.metadata) as Record<string, string> };
    });
  }

  head(key: string): Promise<ObjectInfo | null> {
    return this.read('HEAD', (statement) => {
      const row = statement('SELECT size, etag, modified FROM objects WHERE key = ?').get(keyBytes(key)) as
        Row | undefined;
      return row ? info(key, row) : null;
    });
  }

  put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<{ etag: string }> {
    return this.run('PUT', () => {
      const k = keyBytes(key);
      const etag = this.connection.nextEtag();
      const fields = [body, body.byteLength, etag, this.now().getTime(), json(options.metadata), json(options.tags)];
      if (options.ifMatch !== undefined) {
        // Both conditions at once: an object exists (the ETag matched) or none does (no match): either way one fails.
        const { changes } =
          options.ifNoneMatch === '*'
            ? { changes: 0 }
            : this.connection.statement(REPLACE_IF_MATCH).run(...fields, k, options.ifMatch);
        if (changes === 0) throw new PreconditionFailedError(key);
      } else if (options.ifNoneMatch === '*') {
        if (this.connection.statement(INSERT_NEW).run(k, ...fields).changes === 0)
          throw new PreconditionFailedError(key);
      } else {
        this.connection.statement(UPSERT).run(k, ...fields);
      }
      return { etag };
    });
  }

  list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    return this.read('LIST', (statement) => {
      checkPrefix(prefix);
      const requested =
        options.maxKeys !== undefined && Number.isFinite(options.maxKeys) ? Math.floor(options.maxKeys) : 1000;
      const maxKeys = Math.min(Math.max(requested, 1), 1000);
      const after = options.continuationToken ?? options.startAfter;
      const bounds = prefixBounds(prefix, after);
      const rows = statement(listStatement(bounds)).all(...bounds.params, maxKeys + 1) as unknown as ListedRow[];
      const more = rows.length > maxKeys;
      if (more) rows.pop();
      const objects = rows.map((row) => info(row.name, row));
      const last = objects[objects.length - 1];
      return more && last ? { objects, continuationToken: last.key } : { objects };
    });
  }

  /** One aggregate over the listing's range: what a LIST of every page would add up to, in one statement. */
  summarize(prefix: string, options: SummaryOptions = {}): Promise<ObjectSummary> {
    return this.read('LIST', (statement) => {
      checkPrefix(prefix);
      const { sql, params } = summaryStatement(prefix, options);
      const row = statement(sql).get(...params) as unknown as ObjectSummary;
      return { objects: row.objects, bytes: row.bytes };
    });
  }

  copy(sourceKey: string, destinationKey: string, options: CopyOptions = {}): Promise<{ etag: string }> {
    return this.run('COPY', () =>
      this.connection.immediate(() => {
        const destination = keyBytes(destinationKey);
        const source = this.connection
          .statement('SELECT body, etag, metadata, tags FROM objects WHERE key = ?')
          .get(keyBytes(sourceKey)) as Row | undefined;
        if (!source) throw new MemvaultError('NOT_FOUND', 'the copy source does not exist');
        if (options.ifSourceMatch !== undefined && source.etag !== options.ifSourceMatch)
          throw new PreconditionFailedError(sourceKey);
        const etag = this.connection.nextEtag();
        const metadata = options.metadata !== undefined ? json(options.metadata) : source.metadata;
        const fields = [destination, source.body, source.body.byteLength, etag, this.now().getTime(), metadata];
        const statement = this.connection.statement(options.ifNoneMatch === '*' ? INSERT_NEW : UPSERT);
        if (statement.run(...fields, source.tags).changes === 0) throw new PreconditionFailedError(destinationKey);
        return { etag };
      }),
    );
  }

  delete(key: string, options: { ifMatch?: string } = {}): Promise<void> {
    return this.run('DELETE', () => {
      const k = keyBytes(key);
      if (options.ifMatch === undefined) {
        this.connection.statement('DELETE FROM objects WHERE key = ?').run(k);
        return;
      }
      const ifMatch = options.ifMatch;
      this.connection.immediate(() => {
        if (this.connection.statement('DELETE FROM objects WHERE key = ? AND etag = ?').run(k, ifMatch).changes > 0)
          return;
        // Nothing there is no error (S3); another version is.
        if (this.connection.statement('SELECT 1 AS found FROM objects WHERE key = ?').get(k))
          throw new PreconditionFailedError(key);
      });
    });
  }

  /** One statement decides it: the version is deleted by this call, or the call fails. */
  deleteExactly(key: string, ifMatch: string): Promise<void> {
    return this.run('DELETE', () => {
      if (
        this.connection.statement('DELETE FROM objects WHERE key = ? AND etag = ?').run(keyBytes(key), ifMatch)
          .changes === 0
      )
        throw new PreconditionFailedError(key);
    });
  }

  deleteMany(keys: string[]): Promise<{ failed: string[] }> {
    // One S3 DeleteObjects request carries at most 1,000 keys; an empty batch needs no request.
    return this.run(
      'DELETE_MANY',
      () => {
        const encoded = keys.map(keyBytes);
        const remove = this.connection.statement('DELETE FROM objects WHERE key = ?');
        this.connection.immediate(() => {
          for (const k of encoded) remove.run(k);
        });
        return { failed: [] };
      },
      keys.length === 0 ? 0 : Math.ceil(keys.length / 1000),
    );
  }

  readTags(key: string): Promise<Record<string, string> | undefined> {
    return this.read('HEAD', (statement) => {
      const row = statement('SELECT tags FROM objects WHERE key = ?').get(keyBytes(key)) as Row | undefined;
      return row ? (JSON.parse(row.tags) as Record<string, string>) : undefined;
    });
  }

  /**
   * A consistent copy of the whole database into `path` (VACUUM INTO: one read transaction, so
   * writers of every process carry on meanwhile and none of their commits is half in it). `path`
   * must not exist or be an empty file; it is fsync'd by SQLite before this returns. Not counted:
   * no object request.
   */
  async backupTo(path: string): Promise<void> {
    await this.execute(() => this.connection.db.prepare('VACUUM INTO ?').run(path));
  }

  /** Later calls fail; the connection is closed (the last one on the file checkpoints the WAL). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.connection.release();
  }

  /** A write: answered once it is durable (its own commit's fsync), or with its transaction's commit. */
  private async run<T>(type: string, fn: () => T, requests = 1): Promise<T> {
    if (requests > 0) countRequest(type, requests);
    const result = await this.execute(fn);
    if (!this.connection.inTransaction()) {
      this.connection.committed();
      await this.connection.durable();
    }
    return result;
  }

  /** A read runs now, never waiting for a transaction: outside it, on the connection that sees what was committed. */
  private read<T>(type: string, fn: (statement: (sql: string) => StatementSync) => T): Promise<T> {
    countRequest(type);
    return this.attempt(() => fn((sql) => this.connection.readStatement(sql)));
  }

  /** Runs a request now, or once another context's transaction is over (never inside it). */
  private execute<T>(fn: () => T, retry?: BusyRetry): Promise<T> {
    if (this.closed) return Promise.reject(closedError());
    const wait = this.connection.whenFree();
    if (wait) return wait.then(() => this.execute(fn, retry));
    return this.attempt(fn, retry, (next) => this.execute(fn, next));
  }

  /** `fn` now; while another process holds the lock it needs, again a moment later (the event loop runs meanwhile). */
  private attempt<T>(
    fn: () => T,
    retry?: BusyRetry,
    again: (next: BusyRetry) => Promise<T> = (next) => this.attempt(fn, next),
  ): Promise<T> {
    if (this.closed) return Promise.reject(closedError());
    return this.connection.retrying(() => this.connection.request(fn), retry, again);
  }
}

const closedError = (): MemvaultError => new MemvaultError('STORE_UNAVAILABLE', 'the local store is closed');

function checkPrefix(prefix: string): void {
  if (typeof prefix !== 'string' || !isWellFormed(prefix))
    throw new MemvaultError('INVALID_INPUT', 'list prefix is not valid UTF-8');
}

function keyBytes(key: string): Buffer {
  assertValidKey(key);
  return Buffer.from(key, 'utf8');
}

function json(record: Record<string, string> | undefined): string {
  return JSON.stringify(record ?? {});
}

function info(key: string, row: Pick<Row, 'size' | 'etag' | 'modified'>): ObjectInfo {
  return { key, size: row.size, etag: row.etag, lastModified: new Date(row.modified) };
}
