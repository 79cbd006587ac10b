import { existsSync, statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MemvaultError } from '../errors.js';
import { MemoryStore } from './memory.js';
import type { ObjectStore } from './port.js';
import { BAD_URL, type OpenStoreOptions } from './open-options.js';
import { openS3Store } from './open-s3.js';
import { parseSqliteUrl } from './sqlite/url.js';

export type { OpenStoreOptions } from './open-options.js';

/** Where the embedded store lives when nothing is configured: one SQLite database file. */
export const DEFAULT_STORE_FILE = '.memvault.db';
/** The earlier default, a directory store: still the default where one exists and no database does. */
export const DEFAULT_STORE_DIR = '.memvault';

/**
 * The embedded default: `sqlite:<cwd>/.memvault.db`. A directory store that an earlier default
 * created (`./.memvault`) stays the default where it is and no database file is, so that an upgrade
 * never opens an empty store in its place; `memvault migrate` moves it (docs/stores.md).
 */
export function defaultStoreUrl(cwd = process.cwd()): string {
  const file = resolve(cwd, DEFAULT_STORE_FILE);
  const dir = resolve(cwd, DEFAULT_STORE_DIR);
  if (!existsSync(file) && isDirectory(dir)) return pathToFileURL(dir).href;
  return `sqlite:${file}`;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * What an embedded store's default key file is named after (`<base>.key`, beside the data): a file
 * store's directory, a SQLite store's file without its `.db` extension (so `./.memvault` and
 * `./.memvault.db` share `./.memvault.key`, and a deployment migrated between them keeps its key).
 * Undefined for any other URL or one that does not parse.
 */
export function localStoreBase(url: string | undefined): string | undefined {
  try {
    if (url?.startsWith('file:')) return fileURLToPath(url).replace(/[/\\]+$/, '');
    if (url?.startsWith('sqlite:')) return parseSqliteUrl(url).path.replace(/\.db$/, '');
  } catch {
    // not a valid URL of either kind
  }
  return undefined;
}

/** openStore's options inside the package: the public ones, and `onlyReads` for the CLI's tools. */
export interface InternalOpenStoreOptions extends OpenStoreOptions {
  /**
   * The caller only reads (doctor, backup, audit verify and export): implies `create: false`, and
   * opening writes nothing; a SQLite store that would need a write first (an older schema) is
   * CONFIG (src/store/sqlite/database.ts). `create: false` alone may still upgrade a schema.
   */
  onlyReads?: boolean;
}

/**
 * Opens a store from a URL: `sqlite:/path/store.db` (one database file), `file:///abs/dir` (a
 * directory), `s3://bucket/prefix`, or `memory:` (tests). Adapters are imported lazily so that the
 * local stores never load the AWS SDK (nor the others node:sqlite).
 */
export async function openStore(url: string, options: InternalOpenStoreOptions = {}): Promise<ObjectStore> {
  if (url === 'memory:' || url === 'memory://') return new MemoryStore();
  const mustExist = options.create === false || options.onlyReads === true;
  if (url.startsWith('sqlite:')) {
    const { path, durability } = parseSqliteUrl(url);
    const { SqliteStore } = await import('./sqlite.js');
    return SqliteStore.open(path, {
      durability,
      create: !mustExist,
      ...(options.onlyReads === true ? { onlyReads: true } : {}),
    });
  }
  if (url.startsWith('file:')) {
    let dir: string;
    try {
      dir = fileURLToPath(url);
    } catch {
      throw new MemvaultError('CONFIG', BAD_URL);
    }
    if (mustExist) await requireDirectory(dir);
    const { FileStore } = await import('./file.js');
    return FileStore.open(dir);
  }
  if (url.startsWith('s3://')) return openS3Store(url, options);
  throw new MemvaultError('CONFIG', BAD_URL);
}

/**
 * Opens the store behind a URL without creating it: a file store's directory must exist already.
 * (S3 buckets are never created; an empty prefix is caught by the deployment check.)
 */
export function openExistingStore(url: string, options: Omit<OpenStoreOptions, 'create'> = {}): Promise<ObjectStore> {
  return openStore(url, { ...options, create: false });
}

async function requireDirectory(dir: string): Promise<void> {
  let isDirectory = false;
  try {
    isDirectory = (await stat(dir)).isDirectory();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR')
      throw new MemvaultError(
        'STORE_UNAVAILABLE',
        `memvault: the store directory ${dir} cannot be read (${code ?? 'error'}).`,
        { cause: e },
      );
  }
  if (!isDirectory)
    throw new MemvaultError(
      'CONFIG',
      `memvault: there is no store at ${dir}: check the store URL. Nothing was created.`,
    );
}
