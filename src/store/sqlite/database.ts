/**
 * Opening the SQLite database of a `sqlite:` store: the file (owner-only), the pragmas that make it
 * safe for several processes (WAL, a busy timeout) and durable (synchronous), and the one table.
 * `node:sqlite` is loaded here, lazily, so that no other store pays for it (Node 22 prints an
 * ExperimentalWarning when it loads).
 */
import { open as openFile, mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { MemvaultError } from '../../errors.js';
import { PreconditionFailedError } from '../port.js';

/**
 * 'full' (default): every acknowledged write is in the WAL and fsync'd before the call returns
 * (connection.ts: SQLite commits without its own fsync and the WAL is fsync'd off the event loop,
 * one fsync for every commit made while the one before ran).
 * 'normal': the WAL is fsync'd at checkpoints only, so a power loss (not a process crash) can lose
 * the last writes acknowledged before it; the database itself is never corrupted.
 */
export type SqliteDurability = 'full' | 'normal';

export interface SqliteDatabaseOptions {
  durability?: SqliteDurability;
  /** How long a write waits for another connection's transaction before failing (default 15 s). */
  busyTimeoutMs?: number;
  /**
   * false: the store must exist already (the service or a command opening an existing deployment
   * to use it): a missing file, or one that holds no store (an empty file), is CONFIG and nothing
   * is created; an older schema is still moved to this version. Default true.
   */
  create?: boolean;
  /**
   * The caller only reads (doctor, backup, audit verify and export): implies `create: false`, and
   * opening writes nothing at all. A store that would need a write first (an older schema, not in
   * WAL mode) is CONFIG, which says to open it once with the service. Not enforced on the
   * connection, which the process's stores on the file share: the caller makes no writes.
   */
  onlyReads?: boolean;
}

/** Marks the file as memvault's (PRAGMA application_id), so that another program's database is refused. */
const APPLICATION_ID = 0x6d766c74; // 'mvlt'
export const SCHEMA_VERSION = 2;

/*
 * Keys are stored as their UTF-8 bytes (a BLOB compares with memcmp), so that the index order is
 * S3's listing order. The body is the last column, so that a listing or a HEAD, which read the
 * columns before it, never walks a body's overflow pages (version 1 had it second: a LIST of 2,000
 * files read 2,000 bodies).
 */
const table = (name: string) => `
CREATE TABLE IF NOT EXISTS ${name} (
  key BLOB NOT NULL UNIQUE,
  size INTEGER NOT NULL,
  etag TEXT NOT NULL,
  modified INTEGER NOT NULL,
  metadata TEXT NOT NULL,
  tags TEXT NOT NULL,
  body BLOB NOT NULL
)`;

/** Version 1's rows into version 2's table, in the transaction that opens the file (all or nothing). */
function migrateFromVersion1(db: DatabaseSync): void {
  const columns = 'key, size, etag, modified, metadata, tags, body';
  db.exec(table('objects_v2'));
  db.exec(`INSERT INTO objects_v2 (${columns}) SELECT ${columns} FROM objects`);
  db.exec('DROP TABLE objects');
  db.exec('ALTER TABLE objects_v2 RENAME TO objects');
}

export async function openDatabase(path: string, options: SqliteDatabaseOptions = {}): Promise<DatabaseSync> {
  const durability = options.durability ?? 'full';
  if (durability !== 'full' && durability !== 'normal')
    throw new MemvaultError('CONFIG', "memvault: the SQLite durability must be 'full' or 'normal'.");
  const busyTimeoutMs = options.busyTimeoutMs ?? 15_000;
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0)
    throw new MemvaultError('CONFIG', 'memvault: the SQLite busy timeout must be a whole number of milliseconds.');
  const mustExist = options.create === false || options.onlyReads === true;
  if (mustExist) await requireFile(path);
  else await createPrivateFile(path);
  const { DatabaseSync } = await import('node:sqlite');
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(path);
    // The busy timeout first: setting WAL and creating the table take the write lock.
    db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
    checkApplication(db);
    // An empty file (a `touch`, a mistyped URL naming some other empty file) holds no store: one
    // that must exist is not made here (checkApplication refused any other program's tables).
    if (mustExist && applicationId(db) !== APPLICATION_ID) throw noStore(path);
    if (options.onlyReads === true) return readOnlyUse(db, path);
    const mode = db.prepare('PRAGMA journal_mode = WAL').get() as { journal_mode?: string } | undefined;
    if (mode?.journal_mode !== 'wal') throw new MemvaultError('STORE_UNAVAILABLE', 'the SQLite store cannot use WAL');
    // NORMAL for both: in WAL mode it never corrupts the database (the WAL is fsync'd before every
    // checkpoint); 'full' makes every commit durable itself, by a WAL fsync before it answers
    // (SqliteConnection.durable), so that the fsync runs off the event loop and is shared.
    db.exec('PRAGMA synchronous = NORMAL');
    // A database that is already this version's needs nothing more (the usual case).
    if (isCurrent(db)) return db;
    db.exec('BEGIN IMMEDIATE');
    try {
      // Looked at again under the write lock: another process may have made or migrated it meanwhile.
      if (userVersion(db) === 1) migrateFromVersion1(db);
      else db.exec(table('objects'));
      db.exec(`PRAGMA application_id = ${APPLICATION_ID}`);
      db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
      db.exec('COMMIT');
    } catch (e) {
      db.exec('ROLLBACK');
      throw e;
    }
    return db;
  } catch (e) {
    db?.close();
    throw toSqliteStoreError(e);
  }
}

/**
 * A store opened by a caller that only reads: used as it is, or refused (CONFIG) when it would need
 * a write first; no pragma that changes the file is set (synchronous is the connection's own).
 */
function readOnlyUse(db: DatabaseSync, path: string): DatabaseSync {
  const upgrade =
    'start the service on it once (memvault serve, or createVault in the host), which does that in one transaction. Nothing was changed.';
  const mode = (db.prepare('PRAGMA journal_mode').get() as { journal_mode?: string } | undefined)?.journal_mode;
  if (mode !== 'wal')
    throw new MemvaultError(
      'CONFIG',
      `memvault: the SQLite store at ${path} is not in WAL mode, and this command only reads: ${upgrade}`,
    );
  if (isCurrent(db)) {
    db.exec('PRAGMA synchronous = NORMAL');
    return db;
  }
  const version = userVersion(db);
  throw new MemvaultError(
    'CONFIG',
    version < SCHEMA_VERSION
      ? `memvault: the SQLite store at ${path} is of schema version ${version}, and this command only reads, never moving it to version ${SCHEMA_VERSION}: ${upgrade}`
      : `memvault: the SQLite store at ${path} has no objects table (a damaged file?): restore a backup. Nothing was changed.`,
  );
}

const noStore = (path: string): MemvaultError =>
  new MemvaultError(
    'CONFIG',
    `memvault: there is no store at ${path} (an empty file, never made a memvault store): check the store URL. Nothing was created.`,
  );

/** Memvault's, at this schema version, with its table: nothing to create or migrate. */
function isCurrent(db: DatabaseSync): boolean {
  const table = db.prepare("SELECT 1 AS found FROM sqlite_schema WHERE type = 'table' AND name = 'objects'").get();
  return applicationId(db) === APPLICATION_ID && userVersion(db) === SCHEMA_VERSION && table !== undefined;
}

function applicationId(db: DatabaseSync): number {
  return (db.prepare('PRAGMA application_id').get() as { application_id: number }).application_id;
}

function userVersion(db: DatabaseSync): number {
  return (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
}

/** A database another program made, or a newer memvault's, is refused before anything is written to it. */
function checkApplication(db: DatabaseSync): void {
  const id = applicationId(db);
  const version = userVersion(db);
  const tables = (db.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE type = 'table'").get() as { n: number }).n;
  if (tables > 0 && id !== APPLICATION_ID)
    throw new MemvaultError('CONFIG', 'memvault: the SQLite file is not a memvault store. Nothing was changed.');
  if (version > SCHEMA_VERSION)
    throw new MemvaultError(
      'CONFIG',
      'memvault: the SQLite store was written by a newer memvault. Nothing was changed.',
    );
}

/** The file created owner-only before SQLite opens it (its -wal and -shm files take the same mode). */
async function createPrivateFile(path: string): Promise<void> {
  try {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const handle = await openFile(path, 'a', 0o600);
    await handle.close();
  } catch (e) {
    throw toSqliteStoreError(e);
  }
}

async function requireFile(path: string): Promise<void> {
  let isFile = false;
  try {
    isFile = (await stat(path)).isFile();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw toSqliteStoreError(e);
  }
  if (!isFile)
    throw new MemvaultError(
      'CONFIG',
      `memvault: there is no store at ${path}: check the store URL. Nothing was created.`,
    );
}

/** SQLite's primary result codes by number, for errors that carry no host path or SQL text. */
const RESULT_NAMES: Record<number, string> = {
  5: 'SQLITE_BUSY',
  6: 'SQLITE_LOCKED',
  7: 'SQLITE_NOMEM',
  8: 'SQLITE_READONLY',
  10: 'SQLITE_IOERR',
  11: 'SQLITE_CORRUPT',
  13: 'SQLITE_FULL',
  14: 'SQLITE_CANTOPEN',
  26: 'SQLITE_NOTADB',
};

/** Errors leave the store with a code only: typed errors pass, SQLite and file-system errors become STORE_UNAVAILABLE. */
export function toSqliteStoreError(e: unknown): Error {
  if (e instanceof MemvaultError || e instanceof PreconditionFailedError) return e;
  const errcode = (e as { errcode?: unknown }).errcode;
  if (typeof errcode === 'number') {
    const name = RESULT_NAMES[errcode & 0xff] ?? 'SQLITE_ERROR';
    return new MemvaultError('STORE_UNAVAILABLE', `the SQLite store failed: ${name}`);
  }
  const code = (e as { code?: unknown }).code;
  return new MemvaultError(
    'STORE_UNAVAILABLE',
    `the SQLite store failed: ${typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) ? code : 'EUNKNOWN'}`,
  );
}
