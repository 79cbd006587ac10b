/**
 * One user's files as the directory protocols (src/vault/tree/), the quota and the lifecycle see
 * them: UserFiles (what a command needs) and the rest of the storage protocol, stats, fences,
 * deletes, the operation origin of a version, the deferred name check, the history's usage.
 * StoreUserFiles implements it over an ObjectStore; QuotaFiles wraps one and meters it.
 *
 * It lives in the vault layer, not in vault/tree/: StoreUserFiles and the name rule (vault layer)
 * implement and use it, and a layer imports only downward (.dependency-cruiser.cjs).
 */
import type { HistoryTarget, HistoryUsage } from './history-usage.js';
import { MEMORY_ROOT } from './paths.js';
import type { FileVersion, ReadOptions, UserFiles, WriteCondition, WriteResult } from './user-files.js';

export interface TreeFileVersion extends FileVersion {
  /** The `origin` this version was written with, if any (see TreeWriteCondition.origin). */
  origin?: string;
}

export interface TreeWriteCondition extends WriteCondition {
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

/** A fence marker at a path (src/store/fence.ts): no file is there, for reads, stats and listings. */
export interface FenceMarker {
  reason: string;
  /** Id of the operation that wrote it. */
  op: string;
  etag: string;
}

/** What one GET finds at a path: a file, a fence marker, or nothing. */
export type PathState =
  { file: TreeFileVersion; marker?: undefined } | { marker: FenceMarker; file?: undefined } | null;

export interface StatOptions {
  /**
   * The file is about to be fenced: with history on, a GET in place of the HEAD (one request still),
   * so that the tombstone can be numbered one past the version it ends without a request more.
   */
  forFence?: boolean;
}

/** A fence that landed, and what follows it: the marker's clean-up and the tombstone (never rejects). */
export interface FencedFile {
  settled: Promise<void>;
}

export interface TreeFiles extends UserFiles {
  read(path: string, options?: ReadOptions): Promise<TreeFileVersion | null>;
  /** Throws PreconditionFailedError when the condition fails. */
  write(path: string, data: Uint8Array, condition?: TreeWriteCondition): Promise<WriteResult>;
  /** The file at the path (one HEAD), or null when there is none. */
  stat(path: string, options?: StatOptions): Promise<{ size: number; etag: string; lastModified: Date } | null>;
  /** True when files lie below the path (one LIST of at most one key). */
  isDirectory(path: string): Promise<boolean>;
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
   * The user's files below /memories counted and their plaintext summed, as listFiles would count
   * them (but for an object whose name does not open: see UserObjects.summedUsage), with no row per
   * file where the store sums in place. Absent: the caller adds up listFiles.
   */
  usage?(): Promise<FilesUsage>;
}

/** How many files a user has below /memories and their plaintext bytes together. */
export interface FilesUsage {
  files: number;
  bytes: number;
}

/** What `usage` answers, for any TreeFiles: its own summary where it has one, else its listing added up. */
export function usageOf(files: Pick<TreeFiles, 'usage' | 'listFiles'>): Promise<FilesUsage> {
  return files.usage ? files.usage() : listedUsage(files);
}

/** The user's files listed and added up (what a store that cannot sum in place pays: one LIST per 1,000 files). */
export async function listedUsage(files: Pick<TreeFiles, 'listFiles'>): Promise<FilesUsage> {
  let count = 0;
  let bytes = 0;
  for await (const file of files.listFiles(MEMORY_ROOT)) {
    count += 1;
    bytes += file.size;
  }
  return { files: count, bytes };
}
