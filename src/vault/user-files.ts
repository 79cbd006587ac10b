/**
 * One user's files, addressed by canonical memory paths (`/memories` or `/memories/a/b.md`, as the
 * path guard produces them). Implementations map paths to store keys (plain or encrypted names) and
 * bodies to stored bytes (plain or sealed), and report the plaintext bytes they move into the command's stats (store/accounting.ts).
 *
 * Directories are implicit, as in S3: a directory exists while at least one file lies below it.
 * `/memories` always exists.
 */
import type { HistoryTarget, HistoryUsage } from './history-usage.js';
export { PreconditionFailedError } from '../store/port.js';

export interface FileVersion {
  /** Plaintext bytes. */
  data: Uint8Array;
  /** Opaque version token for a conditional write. */
  etag: string;
  lastModified: Date;
  /** The `origin` this version was written with, if any (see WriteCondition.origin). */
  origin?: string;
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

/** A fence marker at a path (src/store/fence.ts): no file is there, for reads, stats and listings. */
export interface FenceMarker {
  reason: string;
  /** Id of the operation that wrote it. */
  op: string;
  etag: string;
}

/** What one GET finds at a path: a file, a fence marker, or nothing. */
export type PathState = { file: FileVersion; marker?: undefined } | { marker: FenceMarker; file?: undefined } | null;

export interface WriteCondition {
  /** Replace only this version of the file. */
  ifMatch?: string;
  /** Create only: fail if a file exists at the path. */
  ifNoneMatch?: boolean;
  /**
   * An opaque id of the operation writing this version (a directory rename's journal id), kept with
   * the version and returned by `read`. Every later write without it (an edit, an overwrite) drops
   * it, so a resumed operation can tell its own untouched copies from anything written since.
   */
  origin?: string;
  /**
   * A write that may create a name is checked against the name invariant after it lands
   * (src/vault/names.ts) and rolled back on a conflict (NameConflictError). A caller that checks a
   * whole tree it wrote at once (a directory rename) sets this and runs `treeNameConflict` itself.
   */
  deferNameCheck?: boolean;
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

export interface StatOptions {
  /**
   * The file is about to be fenced: with history on, a GET in place of the HEAD (one request still),
   * so that the tombstone can be numbered one past the version it ends without a request more.
   */
  forFence?: boolean;
}

export interface UserFiles {
  readonly uid: string;
  read(path: string, options?: ReadOptions): Promise<FileVersion | null>;
  /** Throws PreconditionFailedError when the condition fails. */
  write(path: string, data: Uint8Array, condition?: WriteCondition): Promise<WriteResult>;
  /** The file at the path (one HEAD), or null when there is none. */
  stat(path: string, options?: StatOptions): Promise<{ size: number; etag: string; lastModified: Date } | null>;
  /** True when files lie below the path (one LIST of at most one key). */
  isDirectory(path: string): Promise<boolean>;
  /** Every file below `dir` (recursively), in path order. */
  listFiles(dir: string): AsyncIterable<ListedFile>;
  /** Throws the clear INVALID_PATH "too long to store" error when the path's key exceeds the store's key limit. */
  assertStorable(path: string): void;
  /** One GET: the file, the fence marker that replaced it, or nothing (read() sees only files). */
  inspect(path: string, options?: ReadOptions): Promise<PathState>;
  /**
   * Take exactly the version `ifMatch` of the file out of use, in one step the store enforces
   * (PreconditionFailedError when the file changed or is gone): a conditional delete where the store
   * offers `deleteExactly`, else a fence marker put `If-Match` (src/store/fence.ts). Returns once
   * that step landed, with what follows it: the marker's clean-up and, with history on, the file's
   * tombstone, which go out together; the caller awaits `settled` before it answers (it never
   * rejects: a marker left behind is no file, and a failed tombstone is no error).
   */
  fence(path: string, ifMatch: string, reason: 'moved' | 'deleted', op: string): Promise<FencedFile>;
  /** Delete one file (optionally only this version). */
  remove(path: string, condition?: { ifMatch?: string }): Promise<void>;
  /** Delete many files at once (batched: one request per 1,000 on S3). Returns paths that failed. */
  removeMany(paths: string[]): Promise<{ failed: string[] }>;
  /**
   * With history on: what the user's kept versions hold (one LIST per 1,000), after pruning the
   * oldest down to `pruneTo` bytes and versions when given (src/vault/history-usage.ts); null with history off.
   */
  historyUsage?(pruneTo?: HistoryTarget): Promise<HistoryUsage | null>;
  /**
   * With history on: delete for good every kept version of the file older than its version `etag`
   * (the one an edit wrote). For an edit that redacted text the file already held (docs/pii.md).
   * Throws STORE_UNAVAILABLE when some could not be deleted.
   */
  dropVersionsBefore?(path: string, etag: string): Promise<void>;
}

/** A fence that landed, and what follows it: the marker's clean-up and the tombstone (never rejects). */
export interface FencedFile {
  settled: Promise<void>;
}
