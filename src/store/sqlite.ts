import { randomBytes } from 'node:crypto';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
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
  type PutOptions,
  type StoredObject,
} from './port.js';
import { openDatabase, toSqliteStoreError, type SqliteDatabaseOptions } from './sqlite/database.js';
import { listStatement, prefixBounds } from './sqlite/listing.js';

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

type ListedRow = Pick<Row, 'size' | 'etag' | 'modified'> & { key: Uint8Array };

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
 * - `durability` 'full' (default) fsyncs the WAL at every commit: an acknowledged write survives a
 *   power loss. 'normal' fsyncs at checkpoints only (see sqlite/database.ts).
 * - node:sqlite is synchronous: a request runs to its end on the event loop, so requests of one
 *   connection never interleave.
 * - Errors carry SQLite's result code only, never a path or SQL text.
 */
export class SqliteStore implements ObjectStore {
  readonly kind = 'sqlite';
  /** The conditional DELETE is one statement: a write that lands first makes it fail. */
  readonly atomicConditionalDelete = true;
  private readonly statements = new Map<string, StatementSync>();
  /** Random per connection, so that two connections on one file never hand out one ETag. */
  private readonly etagPrefix = randomBytes(8).toString('hex');
  private issued = 0;
  private closed = false;

  private constructor(
    private readonly db: DatabaseSync,
    private readonly now: () => Date,
  ) {}

  /** Open (and by default create) the database at `path`. */
  static async open(path: string, options: SqliteStoreOptions = {}): Promise<SqliteStore> {
    const { now, ...databaseOptions } = options;
    return new SqliteStore(await openDatabase(path, databaseOptions), now ?? (() => new Date()));
  }

  get(key: string): Promise<StoredObject | null> {
    return this.run('GET', () => {
      const row = this.statement('SELECT body, size, etag, modified, metadata FROM objects WHERE key = ?').get(
        keyBytes(key),
      ) as Row | undefined;
      if (!row) return null;
      return {
        ...info(key, row),
        body: new Uint8Array(row.body),
        metadata: JSON.parse(row.metadata) as Record<string, string>,
      };
    });
  }

  head(key: string): Promise<ObjectInfo | null> {
    return this.run('HEAD', () => {
      const row = this.statement('SELECT size, etag, modified FROM objects WHERE key = ?').get(keyBytes(key)) as
        Row | undefined;
      return row ? info(key, row) : null;
    });
  }

  put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<{ etag: string }> {
    return this.run('PUT', () => {
      const k = keyBytes(key);
      const etag = this.nextEtag();
      const fields = [body, body.byteLength, etag, this.now().getTime(), json(options.metadata), json(options.tags)];
      if (options.ifMatch !== undefined) {
        // Both conditions at once: an object exists (the ETag matched) or none does (no match): either way one fails.
        const { changes } =
          options.ifNoneMatch === '*'
            ? { changes: 0 }
            : this.statement(REPLACE_IF_MATCH).run(...fields, k, options.ifMatch);
        if (changes === 0) throw new PreconditionFailedError(key);
      } else if (options.ifNoneMatch === '*') {
        if (this.statement(INSERT_NEW).run(k, ...fields).changes === 0) throw new PreconditionFailedError(key);
      } else {
        this.statement(UPSERT).run(k, ...fields);
      }
      return { etag };
    });
  }

  list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    return this.run('LIST', () => {
      if (typeof prefix !== 'string' || !isWellFormed(prefix))
        throw new MemvaultError('INVALID_INPUT', 'list prefix is not valid UTF-8');
      const requested =
        options.maxKeys !== undefined && Number.isFinite(options.maxKeys) ? Math.floor(options.maxKeys) : 1000;
      const maxKeys = Math.min(Math.max(requested, 1), 1000);
      const after = options.continuationToken ?? options.startAfter;
      const bounds = prefixBounds(prefix, after);
      const rows = this.statement(listStatement(bounds)).all(...bounds.params, maxKeys + 1) as unknown as ListedRow[];
      const more = rows.length > maxKeys;
      if (more) rows.pop();
      const objects = rows.map((row) => info(Buffer.from(row.key).toString('utf8'), row));
      const last = objects[objects.length - 1];
      return more && last ? { objects, continuationToken: last.key } : { objects };
    });
  }

  copy(sourceKey: string, destinationKey: string, options: CopyOptions = {}): Promise<{ etag: string }> {
    return this.run('COPY', () =>
      this.immediate(() => {
        const destination = keyBytes(destinationKey);
        const source = this.statement('SELECT body, etag, metadata, tags FROM objects WHERE key = ?').get(
          keyBytes(sourceKey),
        ) as Row | undefined;
        if (!source) throw new MemvaultError('NOT_FOUND', 'the copy source does not exist');
        if (options.ifSourceMatch !== undefined && source.etag !== options.ifSourceMatch)
          throw new PreconditionFailedError(sourceKey);
        const etag = this.nextEtag();
        const metadata = options.metadata !== undefined ? json(options.metadata) : source.metadata;
        const fields = [destination, source.body, source.body.byteLength, etag, this.now().getTime(), metadata];
        const statement = this.statement(options.ifNoneMatch === '*' ? INSERT_NEW : UPSERT);
        if (statement.run(...fields, source.tags).changes === 0) throw new PreconditionFailedError(destinationKey);
        return { etag };
      }),
    );
  }

  delete(key: string, options: { ifMatch?: string } = {}): Promise<void> {
    return this.run('DELETE', () => {
      const k = keyBytes(key);
      if (options.ifMatch === undefined) {
        this.statement('DELETE FROM objects WHERE key = ?').run(k);
        return;
      }
      const ifMatch = options.ifMatch;
      this.immediate(() => {
        if (this.statement('DELETE FROM objects WHERE key = ? AND etag = ?').run(k, ifMatch).changes > 0) return;
        // Nothing there is no error (S3); another version is.
        if (this.statement('SELECT 1 AS found FROM objects WHERE key = ?').get(k))
          throw new PreconditionFailedError(key);
      });
    });
  }

  /** One statement decides it: the version is deleted by this call, or the call fails. */
  deleteExactly(key: string, ifMatch: string): Promise<void> {
    return this.run('DELETE', () => {
      if (this.statement('DELETE FROM objects WHERE key = ? AND etag = ?').run(keyBytes(key), ifMatch).changes === 0)
        throw new PreconditionFailedError(key);
    });
  }

  deleteMany(keys: string[]): Promise<{ failed: string[] }> {
    // One S3 DeleteObjects request carries at most 1,000 keys; an empty batch needs no request.
    return this.run(
      'DELETE_MANY',
      () => {
        const encoded = keys.map(keyBytes);
        const remove = this.statement('DELETE FROM objects WHERE key = ?');
        this.immediate(() => {
          for (const k of encoded) remove.run(k);
        });
        return { failed: [] };
      },
      keys.length === 0 ? 0 : Math.ceil(keys.length / 1000),
    );
  }

  readTags(key: string): Promise<Record<string, string> | undefined> {
    return this.run('HEAD', () => {
      const row = this.statement('SELECT tags FROM objects WHERE key = ?').get(keyBytes(key)) as Row | undefined;
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
    if (this.closed) throw new MemvaultError('STORE_UNAVAILABLE', 'the local store is closed');
    try {
      this.db.prepare('VACUUM INTO ?').run(path);
    } catch (e) {
      throw toSqliteStoreError(e);
    }
  }

  /** Later calls fail; the connection is closed (the last one on the file checkpoints the WAL). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.statements.clear();
    this.db.close();
  }

  private run<T>(type: string, fn: () => T, requests = 1): Promise<T> {
    if (requests > 0) countRequest(type, requests);
    if (this.closed) return Promise.reject(new MemvaultError('STORE_UNAVAILABLE', 'the local store is closed'));
    try {
      return Promise.resolve(fn());
    } catch (e) {
      return Promise.reject(toSqliteStoreError(e));
    }
  }

  /** `fn` in one immediate transaction: the write lock is taken first, so what it reads stays true until it commits. */
  private immediate<T>(fn: () => T): T {
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const result = fn();
      this.db.exec('COMMIT');
      return result;
    } catch (e) {
      rollBack(this.db);
      throw e;
    }
  }

  private statement(sql: string): StatementSync {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private nextEtag(): string {
    // A counter keeps rewrites of identical bytes distinguishable, as a conditional writer needs.
    return `${this.etagPrefix}${(++this.issued).toString(16).padStart(8, '0')}`;
  }
}

/** Undo an open transaction; one SQLite already rolled back (a full disk, an I/O error) needs nothing. */
function rollBack(db: DatabaseSync): void {
  try {
    db.exec('ROLLBACK');
  } catch {
    // no transaction was active
  }
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
