/**
 * The file store's directory tree under its root: the root resolved to its real path, every object
 * directory checked to be reached without a link (a link planted in the data directory is never
 * followed out of it), directories created one component at a time and made durable by their
 * parent's fsync, emptied ones pruned, and the read of an object file or its header.
 */
import { constants as fsConstants } from 'node:fs';
import { lstat, mkdir, open, realpath, rmdir } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { MemvaultError } from '../../errors.js';
import { errnoOf } from '../../util/errno.js';
import { fsyncDirectory } from '../../util/fs.js';
import { PreconditionFailedError } from '../port.js';
import { headerLength, parseHeader, PREAMBLE_BYTES, type ObjectHeader } from './format.js';
import { assertValidKey, breakerFileName, keyToComponents, lockFileName } from './keys.js';

export interface Location {
  /** Absolute directory holding the data file, its lock and its temp files. */
  dir: string;
  /** Data file name (ends with '~'). */
  name: string;
  file: string;
  lock: string;
  breaker: string;
}

/** First read of a header: the preamble and a header of a long key and its metadata fit. */
const HEADER_READ_BYTES = 4096;

/**
 * Opening the last component of an object path never follows a link (O_NOFOLLOW: a link there is
 * ELOOP); the directories above it are checked by `FileTree.directoryState`. Windows has no
 * O_NOFOLLOW (0 there): links need privileges to create on Windows, and directories are still checked.
 */
const READ_NO_FOLLOW = fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0);

/** A symbolic link where the store expects its own directory or object file (ELINK: not an errno, the store's own code). */
export function linkRefused(): MemvaultError {
  return new MemvaultError('STORE_UNAVAILABLE', 'the local store failed: ELINK');
}

/** Errors leave the store without host paths: typed errors pass, file-system errors keep only their code. */
export function toStoreError(e: unknown): Error {
  if (e instanceof MemvaultError || e instanceof PreconditionFailedError) return e;
  const code = errnoOf(e);
  return new MemvaultError(
    'STORE_UNAVAILABLE',
    `the local store failed: ${code && /^E[A-Z0-9]+$/.test(code) ? code : 'EUNKNOWN'}`,
  );
}

/** Open an object file for reading, refusing a link; null when there is no file. */
async function openNoFollow(path: string) {
  try {
    return await open(path, READ_NO_FOLLOW);
  } catch (e) {
    if (errnoOf(e) === 'ENOENT' || errnoOf(e) === 'ENOTDIR') return null;
    if (errnoOf(e) === 'ELOOP' || errnoOf(e) === 'EMLINK') throw linkRefused();
    throw e;
  }
}

export class FileTree {
  /** The root as configured (resolved), until `resolveRoot` replaces it by its real path (the root itself may be a link). */
  root: string;
  /** The root with a trailing separator: every object path starts with it. */
  private rootPrefix: string;
  private rootResolved: Promise<void> | undefined;

  constructor(
    rootDir: string,
    private readonly durable: boolean,
    /** Work that runs on after a call has answered: the store's close() waits for it. */
    private readonly track: (work: Promise<unknown>) => void,
  ) {
    this.root = resolve(rootDir);
    this.rootPrefix = this.root.endsWith(sep) ? this.root : this.root + sep;
  }

  /**
   * Links inside the root are refused (below); the root itself is whatever the operator configured,
   * so it is replaced once by its real path, against which every object directory is compared.
   */
  resolveRoot(): Promise<void> {
    this.rootResolved ??= (async () => {
      try {
        const real = await realpath(this.root);
        this.root = real;
        this.rootPrefix = real.endsWith(sep) ? real : real + sep;
      } catch (e) {
        this.rootResolved = undefined; // not created yet: try again next time
        if (errnoOf(e) !== 'ENOENT') throw e;
      }
    })();
    return this.rootResolved;
  }

  /**
   * Whether an object directory exists, refusing it when any component below the root is a link:
   * its real path must be exactly the path the key maps to (the root being real already). So a link
   * planted in the data directory is never followed out of it, whatever it points at.
   */
  async directoryState(dir: string): Promise<'present' | 'missing'> {
    const kind = await this.directoryKind(dir);
    if (kind === 'link') throw linkRefused();
    return kind;
  }

  /** `directoryState` without the refusal: 'link' when the directory is reached through a link. */
  private async directoryKind(dir: string): Promise<'present' | 'missing' | 'link'> {
    let real: string;
    try {
      real = await realpath(dir);
    } catch (e) {
      if (errnoOf(e) === 'ENOENT' || errnoOf(e) === 'ENOTDIR') return 'missing';
      if (errnoOf(e) === 'ELOOP') return 'link';
      throw e;
    }
    return real === dir ? 'present' : 'link';
  }

  /**
   * Whether a listing may walk `dir`: present and reached without a link. A link is passed over
   * as the walk passes over a link it meets below (listing nothing through it), not an error.
   */
  async walkable(dir: string): Promise<boolean> {
    return (await this.directoryKind(dir)) === 'present';
  }

  /** The directory of an object about to be written: checked, or created one component at a time. */
  async prepareDirectory(dir: string): Promise<void> {
    if ((await this.directoryState(dir)) === 'missing') await this.ensureDirectory(dir);
  }

  /** The whole object file (no link followed), or null when there is none. */
  async readObjectFile(loc: Location): Promise<Buffer | null> {
    if ((await this.directoryState(loc.dir)) === 'missing') return null;
    const handle = await openNoFollow(loc.file);
    if (!handle) return null;
    try {
      return await handle.readFile();
    } finally {
      await handle.close();
    }
  }

  locate(key: string): Location {
    assertValidKey(key);
    const components = keyToComponents(key);
    const name = components[components.length - 1]!;
    const dir = join(this.root, ...components.slice(0, -1));
    const file = join(dir, name);
    // Belt and braces: the escaping never emits separators or dot names, so this cannot fire.
    if (!file.startsWith(this.rootPrefix)) throw new MemvaultError('INTERNAL', 'object key escaped the store root');
    return { dir, name, file, lock: join(dir, lockFileName(name)), breaker: join(dir, breakerFileName(name)) };
  }

  /** The header of the object file at `path`, or null when there is none. */
  async readHeader(path: string): Promise<ObjectHeader | null> {
    const handle = await openNoFollow(path);
    if (!handle) return null;
    try {
      // One read holds the preamble and the header (and often the whole file: then its size is known
      // without a stat); a longer header takes a second read.
      const first = Buffer.allocUnsafe(HEADER_READ_BYTES);
      const { bytesRead } = await handle.read(first, 0, HEADER_READ_BYTES, 0);
      const size = bytesRead < HEADER_READ_BYTES ? bytesRead : (await handle.stat()).size;
      const length = headerLength(first.subarray(0, Math.min(bytesRead, PREAMBLE_BYTES)));
      if (PREAMBLE_BYTES + length <= bytesRead)
        return parseHeader(first.subarray(PREAMBLE_BYTES, PREAMBLE_BYTES + length), size);
      const json = Buffer.alloc(length);
      const read = await handle.read(json, 0, length, PREAMBLE_BYTES);
      return parseHeader(json.subarray(0, read.bytesRead), size);
    } finally {
      await handle.close();
    }
  }

  /**
   * Create the missing directories from the root down to `dir`, one at a time, so that a link met on
   * the way is refused instead of followed (`mkdir -p` would create directories wherever it points).
   * New directory entries are durable only once their parents are fsync'd.
   */
  async ensureDirectory(dir: string): Promise<void> {
    if (!dir.startsWith(this.rootPrefix)) throw new MemvaultError('INTERNAL', 'object key escaped the store root');
    // A store constructed on a root that does not exist yet creates it on its first write.
    if ((await mkdir(this.root, { recursive: true, mode: 0o700 })) !== undefined) await this.resolveRoot();
    await this.makeDirectory(dir);
  }

  /**
   * Directories this process made whose entry in their parent is not yet known durable: the
   * parent's fsync, in flight (removed once it succeeds; one that failed stays, so that every later
   * durable write below it fails too: after a failed fsync nothing below can be promised durable).
   */
  private readonly syncingDirectories = new Map<string, Promise<void>>();

  /** Start the fsync of `parent` that makes the new `dir` durable, and remember it until it succeeds. */
  private syncEntry(dir: string, parent: string): void {
    const syncing = fsyncDirectory(parent);
    this.syncingDirectories.set(dir, syncing);
    this.track(syncing);
    syncing.then(
      () => {
        if (this.syncingDirectories.get(dir) === syncing) this.syncingDirectories.delete(dir);
      },
      () => undefined, // kept: every later durable write below `dir` fails with it
    );
  }

  /** Once every directory from `dir` up to the root is durably in its parent (see makeDirectory). */
  async directoriesDurable(dir: string): Promise<void> {
    if (this.syncingDirectories.size === 0) return;
    const pending: Promise<void>[] = [];
    for (let d = dir; d.startsWith(this.rootPrefix); d = dirname(d)) {
      const syncing = this.syncingDirectories.get(d);
      if (syncing) pending.push(syncing);
    }
    await Promise.all(pending);
  }

  /**
   * `dir` made below its parent, which is checked to be a real directory first (one realpath: no
   * link on the way) or made the same way when missing. From the bottom up, so that the usual case,
   * a new directory below existing ones (a file's first version), costs a realpath, a mkdir and the
   * parent's fsync, not a mkdir and an lstat per component from the root.
   */
  private async makeDirectory(dir: string): Promise<void> {
    if (dir === this.root) return;
    const parent = dirname(dir);
    const kind = parent === this.root ? 'present' : await this.directoryKind(parent);
    if (kind === 'link') throw linkRefused();
    if (kind === 'missing') await this.makeDirectory(parent);
    try {
      await mkdir(dir, { mode: 0o700 });
      // The new entry is made durable by the parent's fsync, which runs beside the caller's own
      // work (its temp file's write and fsync): a durable write into `dir` waits for it before it
      // answers (directoriesDurable).
      if (this.durable) this.syncEntry(dir, parent);
    } catch (e) {
      if (errnoOf(e) !== 'EEXIST') throw e;
      const info = await lstat(dir);
      if (info.isSymbolicLink()) throw linkRefused();
      if (!info.isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    }
  }

  /** Remove now-empty directories up to the root. A concurrent writer recreates what it needs. */
  async pruneEmptyDirectories(dir: string): Promise<void> {
    for (let d = dir; d.startsWith(this.rootPrefix) && d !== this.root; d = dirname(d)) {
      try {
        await rmdir(d);
      } catch {
        return; // not empty (ENOTEMPTY/EEXIST), already gone, or busy: all fine to leave.
      }
    }
  }
}
