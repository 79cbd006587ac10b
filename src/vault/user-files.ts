/**
 * One user's files as the commands see them (src/tool/commands/), addressed by canonical memory
 * paths (`/memories` or `/memories/a/b.md`, as the path guard produces them). Implementations map
 * paths to store keys (plain or encrypted names) and bodies to stored bytes (plain or sealed), and
 * report the plaintext bytes they move into the command's stats (store/accounting.ts).
 *
 * Directories are implicit, as in S3: a directory exists while at least one file lies below it.
 * `/memories` always exists. What the directory protocols and the lifecycle need besides (stats,
 * fences, deletes, the history's usage) is TreeFiles (tree-files.ts), which extends this.
 */
export { PreconditionFailedError } from '../store/port.js';

export interface FileVersion {
  /** Plaintext bytes. */
  data: Uint8Array;
  /** Opaque version token for a conditional write. */
  etag: string;
  lastModified: Date;
}

export interface ListedFile {
  /** Canonical path of the file. */
  path: string;
  /** Plaintext size in bytes. */
  size: number;
  lastModified: Date;
  /** The version listed (for a conditional fence of exactly it). */
  etag: string;
}

export interface WriteCondition {
  /** Replace only this version of the file. */
  ifMatch?: string;
  /** Create only: fail if a file exists at the path. */
  ifNoneMatch?: boolean;
}

/**
 * How a read checks the file's freshness against its history (docs/versions.md), when history is on.
 * 'read' (default): one LIST of the file's newest version, in parallel with the GET; an older
 * version put back in place of the current one is refused (INTEGRITY). 'write': no LIST; the caller
 * is about to write the file, and its version write finds a put-back version by itself (the number
 * it takes is taken already), so an edit costs no request more for the check.
 */
export interface ReadOptions {
  freshness?: 'read' | 'write';
}

/**
 * What a write did. `replaced`: the size (plaintext bytes) of the file it replaced, null when it
 * created the name, absent when it replaced exactly the version its caller named (`ifMatch`: the
 * caller read it, so knows its size). The quota settles a write it admitted without a HEAD with it.
 */
export interface WriteResult {
  etag: string;
  replaced?: number | null;
}

export interface UserFiles {
  readonly uid: string;
  read(path: string, options?: ReadOptions): Promise<FileVersion | null>;
  /** Throws PreconditionFailedError when the condition fails. */
  write(path: string, data: Uint8Array, condition?: WriteCondition): Promise<WriteResult>;
  /** Every file below `dir` (recursively), in path order. */
  listFiles(dir: string): AsyncIterable<ListedFile>;
  /**
   * With history on: delete for good every kept version of the file older than its version `etag`
   * (the one an edit wrote). For an edit that redacted text the file already held (docs/pii.md).
   * Throws STORE_UNAVAILABLE when some could not be deleted.
   */
  dropVersionsBefore?(path: string, etag: string): Promise<void>;
}
