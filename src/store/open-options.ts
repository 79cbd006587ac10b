/** What openStore takes beside the URL (open.ts), and what it says of a URL it does not know. */
import type { S3ClientConfigLike, S3ClientLike } from './s3/client-shape.js';

export const BAD_URL =
  'Error: the store URL must be sqlite:/path/to/store.db, file:///absolute/path, s3://bucket/prefix or memory:.';

export interface OpenStoreOptions {
  /**
   * For s3:// URLs: an S3Client (used as it is), or a config (region, endpoint, forcePathStyle,
   * credentials) over the MEMVAULT_S3_* settings of `env` (store/s3/settings.ts).
   */
  s3?: S3ClientLike | S3ClientConfigLike;
  /** For s3:// URLs: how conditions the server ignores are checked, and tag handling (see S3StoreOptions). */
  s3Options?: { conditionChecks?: 'native' | 'check-first'; restateTagsOnReplace?: boolean };
  /** An environment whose MEMVAULT_S3_* settings apply (under `s3`). None by default: the library never reads process.env itself. */
  env?: NodeJS.ProcessEnv;
  /**
   * true (default): a file store's directory (a SQLite store's file) is created when missing.
   * false: the store must exist (a file store's directory must be there; a SQLite file must hold a
   * store, an empty file is refused; S3 buckets are never created, and an empty prefix is caught by
   * the deployment check), for a host or command opening an existing deployment to use it: a
   * SQLite store of an older schema is still moved to this version, as the service does.
   */
  create?: boolean;
}
