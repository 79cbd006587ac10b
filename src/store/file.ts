import { createHash, randomBytes } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { lstat, mkdir, open, realpath, rmdir, unlink } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { MemvaultError } from '../errors.js';
import { mapLimit } from '../util/concurrency.js';
import { errnoOf } from '../util/errno.js';
import { fsyncDirectory } from '../util/fs.js';
import { countRequest } from './accounting.js';
import { markerOf } from './fence.js';
import { decodeObject, encodeObject, headerLength, parseHeader, PREAMBLE_BYTES, type ObjectHeader } from './file/format.js';
import { assertValidKey, breakerFileName, isWellFormed, keyToComponents, lockFileName, tempFileName } from './file/keys.js';
import { acquireFileLock, inProcessQueue, type LockOptions } from './file/lock.js';
import { collectCandidates, decodeToken, encodeToken } from './file/walk.js';
import { createObjectFile, HardLinksUnsupportedError, linkTempIfAbsent, removeIfStaleTemp, writeObjectFile, writeTempFile } from './file/write.js';
import {
  PreconditionFailedError,
  type CopyOptions,
  type ListOptions,
  type ListPage,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
  type StoredObject,
  type PreparedCreate,
} from './port.js';

/** An object written to its temp file and not yet published (prepareCreate). */
interface StagedObject {
  header: ObjectHeader;
  temp: string;
}

export interface FileStoreOptions {
  /** Clock for lastModified (expiry tests control it). Locks and temp-file ages use the real clock. */
  now?: () => Date;
  /** fsync files and directories so that a power loss keeps acknowledged writes (default true). */
  durable?: boolean;
  /** A lock file older than this is broken even if its owner pid is alive (default 15 s; a put holds it for milliseconds). */
  lockStaleMs?: number;
  /** Waiting for a lock longer than this fails with STORE_UNAVAILABLE (default 20 s, longer than lockStaleMs so that a hung owner's lock is broken first). */
  lockTimeoutMs?: number;
  /** Temp files older than this, seen while listing, are left-overs of a crash and removed (default 15 min). */
  tempStaleMs?: number;
}

interface Location {
  /** Absolute directory holding the data file, its lock and its temp files. */
  dir: string;
  /** Data file name (ends with '~'). */
  name: string;
  file: string;
  lock: string;
  breaker: string;
}

const DELETE_MANY_CONCURRENCY = 8;
const HEADER_READ_CONCURRENCY = 16;
/** First read of a header: the preamble and a header of a long key and its metadata fit. */
const HEADER_READ_BYTES = 4096;

/**
 * Opening the last component of an object path never follows a link (O_NOFOLLOW: a link there is
 * ELOOP); the directories above it are checked by `FileStore.directoryState`. Windows has no
 * O_NOFOLLOW (0 there): links need privileges to create on Windows, and directories are still checked.
 */
const READ_NO_FOLLOW = fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0);

/** A symbolic link where the store expects its own directory or object file (ELINK: not an errno, the store's own code). */
function linkRefused(): MemvaultError {
  return new MemvaultError('STORE_UNAVAILABLE', 'the local store failed: ELINK');
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

/** Errors leave the store without host paths: typed errors pass, file-system errors keep only their code. */
function toStoreError(e: unknown): Error {
  if (e instanceof MemvaultError || e instanceof PreconditionFailedError) return e;
  const code = errnoOf(e);
  return new MemvaultError('STORE_UNAVAILABLE', `the local store failed: ${code && /^E[A-Z0-9]+$/.test(code) ? code : 'EUNKNOWN'}`);
}

function newEtag(body: Uint8Array): string {
  // The MD5 part is a checksum people can recognise; the random part makes every write a new version,
  // even of identical bytes and across processes, which conditional writers rely on.
  return createHash('md5').update(body).digest('hex').slice(0, 16) + randomBytes(8).toString('hex');
}

/**
 * The embedded object store: a local directory with S3 semantics (see src/store/file/keys.ts for the
 * key-to-path mapping and src/store/file/format.ts for the file layout).
 *
 * - Writes go to a temp file in the object's directory, are fsync'd, renamed over the object and the
 *   directory is fsync'd: a crash leaves the old object or the new one, never a torn one.
 * - Every mutation of a key (put, copy onto it, delete) runs under that key's lock, which holds within
 *   the process (a promise queue) and across processes (a lock file that only one process can
 *   create), so conditional writes are checked and applied atomically. Reads take no lock: a rename
 *   replaces a file atomically.
 * - Empty directories are pruned after deletes; a writer whose directory vanishes recreates it.
 * - Errors never carry host paths: file-system failures become STORE_UNAVAILABLE with the errno code.
 * A local directory only: lock files rely on atomic link() and pid checks, which network file systems break.
 */
export class FileStore implements ObjectStore {
  readonly kind = 'file';
  /** A conditional delete checks the version under the key's lock. */
  readonly atomicConditionalDelete = true;
  /** The root as configured (resolved), until `run` replaces it by its real path (the root itself may be a link). */
  private root: string;
  /** The root with a trailing separator: every object path starts with it. */
  private rootPrefix: string;
  private rootResolved: Promise<void> | undefined;
  private readonly now: () => Date;
  private readonly durable: boolean;
  private readonly lockOptions: LockOptions;
  private readonly tempStaleMs: number;
  /**
   * Whether create-only writes may link() (file/write.ts); false once the file system refused a
   * hard link (FAT, some network and FUSE mounts), after which every create takes the key's lock.
   */
  private hardLinks = true;
  private readonly inflight = new Set<Promise<unknown>>();
  private closed = false;

  constructor(rootDir: string, options: FileStoreOptions = {}) {
    this.root = resolve(rootDir);
    this.rootPrefix = this.root.endsWith(sep) ? this.root : this.root + sep;
    this.now = options.now ?? (() => new Date());
    this.durable = options.durable ?? true;
    this.lockOptions = { staleMs: options.lockStaleMs ?? 15_000, timeoutMs: options.lockTimeoutMs ?? 20_000 };
    this.tempStaleMs = options.tempStaleMs ?? 15 * 60_000;
  }

  /** Create the root directory (mode 0700, owner only) if needed and return a store on it. */
  static async open(rootDir: string, options: FileStoreOptions = {}): Promise<FileStore> {
    try {
      await mkdir(resolve(rootDir), { recursive: true, mode: 0o700 });
    } catch (e) {
      throw toStoreError(e);
    }
    return new FileStore(rootDir, options);
  }

  get(key: string): Promise<StoredObject | null> {
    return this.run('GET', async () => {
      const loc = this.locate(key);
      const file = await this.readObjectFile(loc);
      if (!file) return null;
      const { header, body } = decodeObject(file);
      return { ...this.info(key, header), body: new Uint8Array(body), metadata: { ...header.metadata } };
    });
  }

  head(key: string): Promise<ObjectInfo | null> {
    return this.run('HEAD', async () => {
      const loc = this.locate(key);
      if ((await this.directoryState(loc.dir)) === 'missing') return null;
      const header = await this.readHeader(loc.file);
      return header ? this.info(key, header) : null;
    });
  }

  put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<{ etag: string }> {
    return this.run('PUT', async () => {
      const loc = this.locate(key);
      await this.prepareDirectory(loc.dir);
      if (options.ifNoneMatch === '*' && options.ifMatch === undefined) {
        return this.createOnly(loc, key, body, { ...(options.metadata ?? {}) }, { ...(options.tags ?? {}) }, false);
      }
      return this.withKeyLock(loc, async () => {
        if (options.ifMatch !== undefined || options.ifNoneMatch === '*') {
          const current = await this.readHeader(loc.file);
          if (options.ifNoneMatch === '*' && current) throw new PreconditionFailedError(key);
          if (options.ifMatch !== undefined && current?.etag !== options.ifMatch) throw new PreconditionFailedError(key);
        }
        return this.write(loc, key, body, { ...(options.metadata ?? {}) }, { ...(options.tags ?? {}) });
      });
    });
  }

  copy(sourceKey: string, destinationKey: string, options: CopyOptions = {}): Promise<{ etag: string }> {
    return this.run('COPY', async () => {
      const source = this.locate(sourceKey);
      const destination = this.locate(destinationKey);
      await this.prepareDirectory(destination.dir);
      return this.withKeyLock(destination, async () => {
        // The source is read without its lock (unless it is the destination): a rename-replaced file
        // is a consistent snapshot, which is all S3 promises for a copy source too.
        const file = await this.readObjectFile(source);
        if (!file) throw new MemvaultError('NOT_FOUND', 'the copy source does not exist');
        const { header, body } = decodeObject(file);
        if (options.ifSourceMatch !== undefined && header.etag !== options.ifSourceMatch) throw new PreconditionFailedError(sourceKey);
        const metadata = { ...(options.metadata ?? header.metadata) };
        if (options.ifNoneMatch !== '*') return this.write(destination, destinationKey, body, metadata, { ...header.tags });
        // Create-only is decided as for put (a lock-free create could otherwise land between a look
        // and a rename over it, and be replaced unseen).
        if (sourceKey === destinationKey) throw new PreconditionFailedError(destinationKey);
        return this.createOnly(destination, destinationKey, body, metadata, { ...header.tags }, true);
      });
    });
  }

  delete(key: string, options: { ifMatch?: string } = {}): Promise<void> {
    return this.run('DELETE', () => this.deleteOne(key, options.ifMatch));
  }

  /**
   * The temp file written and fsync'd now (not counted: the request is the commit), linked to the
   * object's name by `commit` through createOnly, as a create-only `put` links it.
   */
  prepareCreate(key: string, body: Uint8Array, options: { metadata?: Record<string, string>; tags?: Record<string, string> } = {}): Promise<PreparedCreate> {
    return this.run(
      'PUT',
      async () => {
        const loc = this.locate(key);
        await this.prepareDirectory(loc.dir);
        const metadata = { ...(options.metadata ?? {}) };
        const tags = { ...(options.tags ?? {}) };
        const header = this.headerOf(key, body, metadata, tags);
        const staged: StagedObject | undefined = this.hardLinks
          ? { header, temp: await writeTempFile(loc, encodeObject(header, body), this.durable, () => this.ensureDirectory(loc.dir)) }
          : undefined;
        let settled = false;
        const once = (): void => {
          if (settled) throw new MemvaultError('INTERNAL', 'a prepared create is committed or discarded once');
          settled = true;
        };
        return {
          commit: async () => {
            once();
            return this.run('PUT', () => this.createOnly(loc, key, body, metadata, tags, false, staged));
          },
          discard: async () => {
            once();
            if (staged) await unlink(staged.temp).catch(() => undefined);
          },
        };
      },
      0,
    );
  }

  /** The version check and the unlink are one step under the key's lock; nothing there is a lost condition. */
  deleteExactly(key: string, ifMatch: string): Promise<void> {
    return this.run('DELETE', () => this.deleteOne(key, ifMatch, true));
  }

  deleteMany(keys: string[]): Promise<{ failed: string[] }> {
    // One S3 DeleteObjects request carries at most 1,000 keys; an empty batch needs no request.
    return this.run(
      'DELETE_MANY',
      async () => {
        const outcomes = await mapLimit(keys, DELETE_MANY_CONCURRENCY, async (key) => {
          try {
            await this.deleteOne(key, undefined);
            return null;
          } catch {
            return key;
          }
        });
        return { failed: outcomes.filter((key): key is string => key !== null) };
      },
      keys.length === 0 ? 0 : Math.ceil(keys.length / 1000),
    );
  }

  list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    return this.run('LIST', async () => {
      if (typeof prefix !== 'string' || !isWellFormed(prefix)) throw new MemvaultError('INVALID_INPUT', 'list prefix is not valid UTF-8');
      const requested = options.maxKeys !== undefined && Number.isFinite(options.maxKeys) ? Math.floor(options.maxKeys) : 1000;
      const maxKeys = Math.min(Math.max(requested, 1), 1000);
      const after = options.continuationToken !== undefined ? decodeToken(options.continuationToken) : options.startAfter;
      const candidates = await collectCandidates(
        this.root,
        Buffer.from(prefix, 'utf8'),
        after === undefined ? undefined : Buffer.from(after, 'utf8'),
        (path, name) => removeIfStaleTemp(path, name, this.tempStaleMs),
        (dir) => this.walkable(dir),
      );
      const page = candidates.slice(0, maxKeys);
      const infos = await mapLimit(page, HEADER_READ_CONCURRENCY, async (c) => {
        const header = await this.readHeader(c.file);
        // Deleted since the directory was read: S3 would not list it either.
        return header ? this.info(c.key, header) : null;
      });
      const objects = infos.filter((info): info is ObjectInfo => info !== null);
      const last = page[page.length - 1];
      return candidates.length > maxKeys && last ? { objects, continuationToken: encodeToken(last.key) } : { objects };
    });
  }

  /** Tags of an object (tests of TTL classes read them); not a port operation and not counted. */
  async tagsOf(key: string): Promise<Record<string, string> | undefined> {
    try {
      const loc = this.locate(key);
      const header = (await this.directoryState(loc.dir)) === 'missing' ? null : await this.readHeader(loc.file);
      return header ? { ...header.tags } : undefined;
    } catch (e) {
      throw toStoreError(e);
    }
  }

  /** Waits for operations in flight; later calls fail. */
  async close(): Promise<void> {
    this.closed = true;
    await this.idle();
  }

  /**
   * Resolves once the work that runs on after answered calls is done (lock files being removed:
   * `withKeyLock`), so that the data directory holds only objects, as after close() but with the
   * store still open. For backups and tests that look at the directory itself.
   */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.inflight]);
  }

  private run<T>(type: string, fn: () => Promise<T>, requests = 1): Promise<T> {
    if (requests > 0) countRequest(type, requests);
    if (this.closed) return Promise.reject(new MemvaultError('STORE_UNAVAILABLE', 'the local store is closed'));
    const operation = (async () => {
      try {
        await this.resolveRoot();
        return await fn();
      } catch (e) {
        throw toStoreError(e);
      }
    })();
    this.track(operation);
    return operation;
  }

  /**
   * Links inside the root are refused (below); the root itself is whatever the operator configured,
   * so it is replaced once by its real path, against which every object directory is compared.
   */
  private resolveRoot(): Promise<void> {
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
  private async directoryState(dir: string): Promise<'present' | 'missing'> {
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
  private async walkable(dir: string): Promise<boolean> {
    return (await this.directoryKind(dir)) === 'present';
  }

  /** The directory of an object about to be written: checked, or created one component at a time. */
  private async prepareDirectory(dir: string): Promise<void> {
    if ((await this.directoryState(dir)) === 'missing') await this.ensureDirectory(dir);
  }

  /** The whole object file (no link followed), or null when there is none. */
  private async readObjectFile(loc: Location): Promise<Buffer | null> {
    if ((await this.directoryState(loc.dir)) === 'missing') return null;
    const handle = await openNoFollow(loc.file);
    if (!handle) return null;
    try {
      return await handle.readFile();
    } finally {
      await handle.close();
    }
  }

  private locate(key: string): Location {
    assertValidKey(key);
    const components = keyToComponents(key);
    const name = components[components.length - 1]!;
    const dir = join(this.root, ...components.slice(0, -1));
    const file = join(dir, name);
    // Belt and braces: the escaping never emits separators or dot names, so this cannot fire.
    if (!file.startsWith(this.rootPrefix)) throw new MemvaultError('INTERNAL', 'object key escaped the store root');
    return { dir, name, file, lock: join(dir, lockFileName(name)), breaker: join(dir, breakerFileName(name)) };
  }

  private info(key: string, header: ObjectHeader): ObjectInfo {
    return { key, size: header.size, etag: header.etag, lastModified: new Date(header.lastModified) };
  }

  /** The header of the object file at `path`, or null when there is none. */
  private async readHeader(path: string): Promise<ObjectHeader | null> {
    const handle = await openNoFollow(path);
    if (!handle) return null;
    try {
      // One read holds the preamble and the header (and often the whole file: then its size is known
      // without a stat); a longer header takes a second read.
      const first = Buffer.allocUnsafe(HEADER_READ_BYTES);
      const { bytesRead } = await handle.read(first, 0, HEADER_READ_BYTES, 0);
      const size = bytesRead < HEADER_READ_BYTES ? bytesRead : (await handle.stat()).size;
      const length = headerLength(first.subarray(0, Math.min(bytesRead, PREAMBLE_BYTES)));
      if (PREAMBLE_BYTES + length <= bytesRead) return parseHeader(first.subarray(PREAMBLE_BYTES, PREAMBLE_BYTES + length), size);
      const json = Buffer.alloc(length);
      const read = await handle.read(json, 0, length, PREAMBLE_BYTES);
      return parseHeader(json.subarray(0, read.bytesRead), size);
    } finally {
      await handle.close();
    }
  }

  /**
   * Run `fn` holding the key's lock. The caller has its answer as soon as `fn` has settled: what is
   * decided under the lock is decided by then. The lock file's removal runs after that, off the
   * caller's path, while this process's next call on the key still waits for it in the key's
   * queue (and close() waits for it). A removal that fails leaves a lock that goes stale
   * (`lockStaleMs`), as a crash would. `afterRelease` (a delete's pruning of the directories it
   * emptied, which must follow the lock file out) is on the caller's path: a create that follows
   * a delete must not meet its directory being pruned.
   */
  private withKeyLock<T>(loc: Location, fn: () => Promise<T>, afterRelease?: () => Promise<void>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const queued = inProcessQueue(loc.lock, async () => {
        const staging = join(loc.dir, tempFileName(loc.name, process.pid, randomBytes(8).toString('hex')));
        const release = await acquireFileLock(loc.lock, loc.breaker, staging, () => this.ensureDirectory(loc.dir), this.lockOptions);
        let answer: () => void;
        try {
          const value = await fn();
          answer = () => resolve(value);
        } catch (error) {
          answer = () => reject(error instanceof Error ? error : new Error(String(error)));
        }
        if (!afterRelease) answer();
        await release().catch(() => undefined);
        if (afterRelease) {
          await afterRelease().catch(() => undefined);
          answer();
        }
      });
      // Taking the lock failed (timed out, the directory refused): the call fails with it.
      queued.catch(reject);
      this.track(queued);
    });
  }

  /** Work that runs on after a call has answered: close() waits for it. */
  private track(work: Promise<unknown>): void {
    this.inflight.add(work);
    const done = () => this.inflight.delete(work);
    work.then(done, done);
  }

  /**
   * Create the missing directories from the root down to `dir`, one at a time, so that a link met on
   * the way is refused instead of followed (`mkdir -p` would create directories wherever it points).
   * New directory entries are durable only once their parents are fsync'd.
   */
  private async ensureDirectory(dir: string): Promise<void> {
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
  private async directoriesDurable(dir: string): Promise<void> {
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

  /**
   * A create-only write (S3's If-None-Match: *), the one mechanism of put, copy and a prepared
   * create's commit: link() publishes the object only where no name is (file/write.ts), with no
   * lock. `locked`: the caller holds the key's lock already. `staged`: the object's temp file,
   * written already (prepareCreate). On a file system without hard links (found once, then remembered) every
   * create takes the lock and looks under it instead, so the look and the write are again one step.
   */
  private async createOnly(
    loc: Location,
    key: string,
    body: Uint8Array,
    metadata: Record<string, string>,
    tags: Record<string, string>,
    locked: boolean,
    staged?: StagedObject,
  ): Promise<{ etag: string }> {
    if (this.hardLinks) {
      try {
        return await this.write(loc, key, body, metadata, tags, 'create-only', staged);
      } catch (error) {
        if (!(error instanceof HardLinksUnsupportedError)) throw error;
        this.hardLinks = false; // a staged temp file went with the refused link
      }
    } else if (staged) {
      await unlink(staged.temp).catch(() => undefined); // staged before hard links were found missing
    }
    const lookThenWrite = async () => {
      if (await this.readHeader(loc.file)) throw new PreconditionFailedError(key);
      return this.write(loc, key, body, metadata, tags);
    };
    return locked ? lookThenWrite() : this.withKeyLock(loc, lookThenWrite);
  }

  /**
   * The atomic writers of file/write.ts: 'replace' renames over whatever is there (under the key's
   * lock), 'create-only' links where nothing is (PreconditionFailedError when something is).
   */
  private async write(
    loc: Location,
    key: string,
    body: Uint8Array,
    metadata: Record<string, string>,
    tags: Record<string, string>,
    mode: 'replace' | 'create-only' = 'replace',
    staged?: StagedObject,
  ): Promise<{ etag: string }> {
    const header = staged?.header ?? this.headerOf(key, body, metadata, tags);
    if (mode === 'replace') await writeObjectFile(loc, encodeObject(header, body), this.durable);
    else if (
      !(staged
        ? await linkTempIfAbsent(loc, staged.temp, this.durable)
        : await createObjectFile(loc, encodeObject(header, body), this.durable, () => this.ensureDirectory(loc.dir)))
    ) {
      // Taken: by an object, or by a link planted in its place, which is refused as a read of it is.
      if ((await lstat(loc.file).catch(() => null))?.isSymbolicLink()) throw linkRefused();
      throw new PreconditionFailedError(key);
    }
    if (this.durable) await this.directoriesDurable(loc.dir);
    return { etag: header.etag };
  }

  /** A new object's header: its ETag from its bytes, its time from the store's clock. */
  private headerOf(key: string, body: Uint8Array, metadata: Record<string, string>, tags: Record<string, string>): ObjectHeader {
    return { key, etag: newEtag(body), lastModified: this.now().getTime(), size: body.byteLength, metadata, tags };
  }

  /** `exactly`: a missing object is a lost condition (deleteExactly), not a delete already done. */
  private async deleteOne(key: string, ifMatch: string | undefined, exactly = false): Promise<void> {
    const loc = this.locate(key);
    const missing = (): void => {
      if (exactly) throw new PreconditionFailedError(key);
    };
    // A missing key needs no lock (and taking one would create directories only to prune them).
    // Only existence is checked here, so that a damaged object can still be deleted. A fence
    // (`exactly`) nearly always meets its object, so it skips the look and asks under the lock.
    if ((await this.directoryState(loc.dir)) === 'missing') return missing();
    if (!exactly) {
      try {
        await lstat(loc.file);
      } catch (e) {
        if (errnoOf(e) === 'ENOENT' || errnoOf(e) === 'ENOTDIR') return;
        throw e;
      }
    }
    await this.withKeyLock(
      loc,
      async () => {
        let durable = this.durable;
        if (ifMatch !== undefined) {
          const current = await this.readHeader(loc.file);
          // Gone since the look above (another deleter): done. Not an unlink of whatever is there
          // now, which may be a file a lock-free create has just linked (file/write.ts).
          if (current === null) return missing();
          if (current.etag !== ifMatch) throw new PreconditionFailedError(key);
          // The clean-up of a fence marker (this store fences by deleteExactly, but a marker can be
          // met: one written by an older memvault) needs no directory fsync: a marker that a power
          // loss brings back is still no file to anyone (store/fence.ts), a create replaces it and
          // the sweeper removes it. What made the file go, the fence, is durable.
          if (current.size === 0 && markerOf(current.metadata) !== null) durable = false;
        }
        try {
          await unlink(loc.file);
        } catch (e) {
          if (errnoOf(e) !== 'ENOENT') throw e;
          return missing();
        }
        if (durable) await fsyncDirectory(loc.dir);
      },
      () => this.pruneEmptyDirectories(loc.dir),
    );
  }

  /** Remove now-empty directories up to the root. A concurrent writer recreates what it needs. */
  private async pruneEmptyDirectories(dir: string): Promise<void> {
    for (let d = dir; d.startsWith(this.rootPrefix) && d !== this.root; d = dirname(d)) {
      try {
        await rmdir(d);
      } catch {
        return; // not empty (ENOTEMPTY/EEXIST), already gone, or busy: all fine to leave.
      }
    }
  }
}
