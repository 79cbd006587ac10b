import { mkdir, unlink } from 'node:fs/promises';
import { resolve } from 'node:path';
import { MemvaultError } from '../errors.js';
import { mapLimit } from '../util/concurrency.js';
import { countRequest } from './accounting.js';
import { decodeObject, encodeObject } from './file/format.js';
import { isWellFormed } from './file/keys.js';
import { ObjectFiles, type StagedObject } from './file/objects.js';
import { FileTree, toStoreError } from './file/tree.js';
import { collectCandidates, decodeToken, encodeToken } from './file/walk.js';
import { removeIfStaleTemp, writeTempFile } from './file/write.js';
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
import type { ObjectHeader } from './file/format.js';

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

const DELETE_MANY_CONCURRENCY = 8;
const HEADER_READ_CONCURRENCY = 16;

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
  /** The directory tree under the root (file/tree.ts). */
  private readonly tree: FileTree;
  /** The mutations of one key under its lock (file/objects.ts). */
  private readonly objects: ObjectFiles;
  private readonly durable: boolean;
  private readonly tempStaleMs: number;
  private readonly inflight = new Set<Promise<unknown>>();
  private closed = false;

  constructor(rootDir: string, options: FileStoreOptions = {}) {
    const track = (work: Promise<unknown>) => this.track(work);
    this.durable = options.durable ?? true;
    this.tree = new FileTree(rootDir, this.durable, track);
    const lockOptions = { staleMs: options.lockStaleMs ?? 15_000, timeoutMs: options.lockTimeoutMs ?? 20_000 };
    this.objects = new ObjectFiles(
      this.tree,
      { durable: this.durable, lockOptions, now: options.now ?? (() => new Date()) },
      track,
    );
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
      const loc = this.tree.locate(key);
      const file = await this.tree.readObjectFile(loc);
      if (!file) return null;
      const { header, body } = decodeObject(file);
      return { ...this.info(key, header), body: new Uint8Array(body), metadata: { ...header.metadata } };
    });
  }

  head(key: string): Promise<ObjectInfo | null> {
    return this.run('HEAD', async () => {
      const loc = this.tree.locate(key);
      if ((await this.tree.directoryState(loc.dir)) === 'missing') return null;
      const header = await this.tree.readHeader(loc.file);
      return header ? this.info(key, header) : null;
    });
  }

  put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<{ etag: string }> {
    return this.run('PUT', async () => {
      const loc = this.tree.locate(key);
      await this.tree.prepareDirectory(loc.dir);
      if (options.ifNoneMatch === '*' && options.ifMatch === undefined) {
        return this.objects.createOnly(
          loc,
          key,
          body,
          { ...(options.metadata ?? {}) },
          { ...(options.tags ?? {}) },
          false,
        );
      }
      return this.objects.withKeyLock(loc, async () => {
        if (options.ifMatch !== undefined || options.ifNoneMatch === '*') {
          const current = await this.tree.readHeader(loc.file);
          if (options.ifNoneMatch === '*' && current) throw new PreconditionFailedError(key);
          if (options.ifMatch !== undefined && current?.etag !== options.ifMatch)
            throw new PreconditionFailedError(key);
        }
        return this.objects.write(loc, key, body, { ...(options.metadata ?? {}) }, { ...(options.tags ?? {}) });
      });
    });
  }

  copy(sourceKey: string, destinationKey: string, options: CopyOptions = {}): Promise<{ etag: string }> {
    return this.run('COPY', async () => {
      const source = this.tree.locate(sourceKey);
      const destination = this.tree.locate(destinationKey);
      await this.tree.prepareDirectory(destination.dir);
      return this.objects.withKeyLock(destination, async () => {
        // The source is read without its lock (unless it is the destination): a rename-replaced file
        // is a consistent snapshot, which is all S3 promises for a copy source too.
        const file = await this.tree.readObjectFile(source);
        if (!file) throw new MemvaultError('NOT_FOUND', 'the copy source does not exist');
        const { header, body } = decodeObject(file);
        if (options.ifSourceMatch !== undefined && header.etag !== options.ifSourceMatch)
          throw new PreconditionFailedError(sourceKey);
        const metadata = { ...(options.metadata ?? header.metadata) };
        if (options.ifNoneMatch !== '*')
          return this.objects.write(destination, destinationKey, body, metadata, { ...header.tags });
        // Create-only is decided as for put (a lock-free create could otherwise land between a look
        // and a rename over it, and be replaced unseen).
        if (sourceKey === destinationKey) throw new PreconditionFailedError(destinationKey);
        return this.objects.createOnly(destination, destinationKey, body, metadata, { ...header.tags }, true);
      });
    });
  }

  delete(key: string, options: { ifMatch?: string } = {}): Promise<void> {
    return this.run('DELETE', () => this.objects.deleteOne(key, options.ifMatch));
  }

  /**
   * The temp file written and fsync'd now (not counted: the request is the commit), linked to the
   * object's name by `commit` through createOnly, as a create-only `put` links it.
   */
  prepareCreate(
    key: string,
    body: Uint8Array,
    options: { metadata?: Record<string, string>; tags?: Record<string, string> } = {},
  ): Promise<PreparedCreate> {
    return this.run(
      'PUT',
      async () => {
        const loc = this.tree.locate(key);
        await this.tree.prepareDirectory(loc.dir);
        const metadata = { ...(options.metadata ?? {}) };
        const tags = { ...(options.tags ?? {}) };
        const header = this.objects.headerOf(key, body, metadata, tags);
        const staged: StagedObject | undefined = this.objects.hardLinks
          ? {
              header,
              temp: await writeTempFile(loc, encodeObject(header, body), this.durable, () =>
                this.tree.ensureDirectory(loc.dir),
              ),
            }
          : undefined;
        let settled = false;
        const once = (): void => {
          if (settled) throw new MemvaultError('INTERNAL', 'a prepared create is committed or discarded once');
          settled = true;
        };
        return {
          commit: async () => {
            once();
            return this.run('PUT', () => this.objects.createOnly(loc, key, body, metadata, tags, false, staged));
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
    return this.run('DELETE', () => this.objects.deleteOne(key, ifMatch, true));
  }

  deleteMany(keys: string[]): Promise<{ failed: string[] }> {
    // One S3 DeleteObjects request carries at most 1,000 keys; an empty batch needs no request.
    return this.run(
      'DELETE_MANY',
      async () => {
        const outcomes = await mapLimit(keys, DELETE_MANY_CONCURRENCY, async (key) => {
          try {
            await this.objects.deleteOne(key, undefined);
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
      if (typeof prefix !== 'string' || !isWellFormed(prefix))
        throw new MemvaultError('INVALID_INPUT', 'list prefix is not valid UTF-8');
      const requested =
        options.maxKeys !== undefined && Number.isFinite(options.maxKeys) ? Math.floor(options.maxKeys) : 1000;
      const maxKeys = Math.min(Math.max(requested, 1), 1000);
      const after =
        options.continuationToken !== undefined ? decodeToken(options.continuationToken) : options.startAfter;
      const candidates = await collectCandidates(
        this.tree.root,
        Buffer.from(prefix, 'utf8'),
        after === undefined ? undefined : Buffer.from(after, 'utf8'),
        (path, name) => removeIfStaleTemp(path, name, this.tempStaleMs),
        (dir) => this.tree.walkable(dir),
      );
      const page = candidates.slice(0, maxKeys);
      const infos = await mapLimit(page, HEADER_READ_CONCURRENCY, async (c) => {
        const header = await this.tree.readHeader(c.file);
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
      const loc = this.tree.locate(key);
      const header =
        (await this.tree.directoryState(loc.dir)) === 'missing' ? null : await this.tree.readHeader(loc.file);
      return header ? { ...header.tags } : undefined;
    } catch (e) {
      throw toStoreError(e);
    }
  }

  readTags(key: string): Promise<Record<string, string> | undefined> {
    return this.run('HEAD', () => this.tagsOf(key));
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
        await this.tree.resolveRoot();
        return await fn();
      } catch (e) {
        throw toStoreError(e);
      }
    })();
    this.track(operation);
    return operation;
  }

  private info(key: string, header: ObjectHeader): ObjectInfo {
    return { key, size: header.size, etag: header.etag, lastModified: new Date(header.lastModified) };
  }

  /** Work that runs on after a call has answered: close() waits for it. */
  private track(work: Promise<unknown>): void {
    this.inflight.add(work);
    const done = () => this.inflight.delete(work);
    work.then(done, done);
  }
}
