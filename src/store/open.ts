import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MemvaultError } from '../errors.js';
import { MemoryStore } from './memory.js';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import type { ObjectStore } from './port.js';

/** Where the embedded store lives when nothing is configured. */
export const DEFAULT_STORE_DIR = '.memvault';

export function defaultStoreUrl(cwd = process.cwd()): string {
  return pathToFileURL(resolve(cwd, DEFAULT_STORE_DIR)).href;
}

export interface OpenStoreOptions {
  /** For s3:// URLs: an S3Client, or a config (region, endpoint, forcePathStyle, credentials). */
  s3?: S3Client | S3ClientConfig;
  /** For s3:// URLs: how conditions the server ignores are checked, and tag handling (see S3StoreOptions). */
  s3Options?: { conditionChecks?: 'native' | 'check-first'; restateTagsOnReplace?: boolean };
}

/**
 * Opens a store from a URL: `file:///abs/dir` (the embedded default), `s3://bucket/prefix`,
 * or `memory:` (tests). Adapters are imported lazily so that the file store never loads the AWS SDK.
 */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<ObjectStore> {
  if (url === 'memory:' || url === 'memory://') return new MemoryStore();
  if (url.startsWith('file:')) {
    let dir: string;
    try {
      dir = fileURLToPath(url);
    } catch {
      throw new MemvaultError('CONFIG', 'Error: the store URL must be file:///absolute/path, s3://bucket/prefix or memory:.');
    }
    const { FileStore } = await import('./file.js');
    return FileStore.open(dir);
  }
  if (url.startsWith('s3://')) {
    const { createS3Store } = await import('./s3.js');
    return createS3Store({ url, ...(options.s3 !== undefined ? { s3: options.s3 } : {}), ...options.s3Options });
  }
  throw new MemvaultError('CONFIG', 'Error: the store URL must be file:///absolute/path, s3://bucket/prefix or memory:.');
}
