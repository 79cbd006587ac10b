import { existsSync, statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MemvaultError } from '../errors.js';
import { MemoryStore } from './memory.js';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import type { ObjectStore } from './port.js';
import type { S3Store } from './s3.js';
import { resolveS3Settings } from './s3/settings.js';
import { parseSqliteUrl } from './sqlite/url.js';

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

export interface OpenStoreOptions {
  /**
   * For s3:// URLs: an S3Client (used as it is), or a config (region, endpoint, forcePathStyle,
   * credentials) over the MEMVAULT_S3_* settings of `env` (store/s3/settings.ts).
   */
  s3?: S3Client | S3ClientConfig;
  /** For s3:// URLs: how conditions the server ignores are checked, and tag handling (see S3StoreOptions). */
  s3Options?: { conditionChecks?: 'native' | 'check-first'; restateTagsOnReplace?: boolean };
  /** An environment whose MEMVAULT_S3_* settings apply (under `s3`). None by default: the library never reads process.env itself. */
  env?: NodeJS.ProcessEnv;
  /**
   * true (default): a file store's directory is created when missing. false: the store must exist
   * (a file store's directory must be there; S3 buckets are never created, and an empty prefix is
   * caught by the deployment check), for tools that only read or erase.
   */
  create?: boolean;
}

const BAD_URL =
  'Error: the store URL must be sqlite:/path/to/store.db, file:///absolute/path, s3://bucket/prefix or memory:.';

/**
 * Opens a store from a URL: `sqlite:/path/store.db` (one database file), `file:///abs/dir` (a
 * directory), `s3://bucket/prefix`, or `memory:` (tests). Adapters are imported lazily so that the
 * local stores never load the AWS SDK (nor the others node:sqlite).
 */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<ObjectStore> {
  if (url === 'memory:' || url === 'memory://') return new MemoryStore();
  if (url.startsWith('sqlite:')) {
    const { path, durability } = parseSqliteUrl(url);
    const { SqliteStore } = await import('./sqlite.js');
    return SqliteStore.open(path, { durability, create: options.create !== false });
  }
  if (url.startsWith('file:')) {
    let dir: string;
    try {
      dir = fileURLToPath(url);
    } catch {
      throw new MemvaultError('CONFIG', BAD_URL);
    }
    if (options.create === false) await requireDirectory(dir);
    const { FileStore } = await import('./file.js');
    return FileStore.open(dir);
  }
  if (url.startsWith('s3://')) return openS3Store(url, options);
  throw new MemvaultError('CONFIG', BAD_URL);
}

/** An s3:// store with its client (doctor and the sweeper's conditional deleter talk to the client itself). */
export async function openS3Store(url: string, options: Omit<OpenStoreOptions, 'create'> = {}): Promise<S3Store> {
  if (!url.startsWith('s3://')) throw new MemvaultError('CONFIG', BAD_URL);
  const { createS3Store } = await import('./s3.js');
  return createS3Store({ url, s3: resolveS3Settings(options.s3, options.env), ...options.s3Options });
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
