/**
 * The file store's mutations of one key: the key's lock (in the process and across processes), the
 * create-only write (link() where no name is, else under the lock), the atomic replace, and the
 * delete (conditional, or exactly one version), each durable when the store is.
 */
import { createHash, randomBytes } from 'node:crypto';
import { lstat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { errnoOf } from '../../util/errno.js';
import { fsyncDirectory } from '../../util/fs.js';
import { markerOf } from '../fence.js';
import { PreconditionFailedError } from '../port.js';
import { encodeObject, type ObjectHeader } from './format.js';
import { tempFileName } from './keys.js';
import { acquireFileLock, inProcessQueue, type LockOptions } from './lock.js';
import { linkRefused, type FileTree, type Location } from './tree.js';
import { createObjectFile, HardLinksUnsupportedError, linkTempIfAbsent, writeObjectFile } from './write.js';

/** An object written to its temp file and not yet published (prepareCreate). */
export interface StagedObject {
  header: ObjectHeader;
  temp: string;
}

function newEtag(body: Uint8Array): string {
  // The MD5 part is a checksum people can recognise; the random part makes every write a new version,
  // even of identical bytes and across processes, which conditional writers rely on.
  return createHash('md5').update(body).digest('hex').slice(0, 16) + randomBytes(8).toString('hex');
}

export class ObjectFiles {
  /**
   * Whether create-only writes may link() (file/write.ts); false once the file system refused a
   * hard link (FAT, some network and FUSE mounts), after which every create takes the key's lock.
   */
  hardLinks = true;

  constructor(
    private readonly tree: FileTree,
    private readonly options: { durable: boolean; lockOptions: LockOptions; now: () => Date },
    /** Work that runs on after a call has answered: the store's close() waits for it. */
    private readonly track: (work: Promise<unknown>) => void,
  ) {}

  /**
   * Run `fn` holding the key's lock. The caller has its answer as soon as `fn` has settled: what is
   * decided under the lock is decided by then. The lock file's removal runs after that, off the
   * caller's path, while this process's next call on the key still waits for it in the key's
   * queue (and close() waits for it). A removal that fails leaves a lock that goes stale
   * (`lockStaleMs`), as a crash would. `afterRelease` (a delete's pruning of the directories it
   * emptied, which must follow the lock file out) is on the caller's path: a create that follows
   * a delete must not meet its directory being pruned.
   */
  withKeyLock<T>(loc: Location, fn: () => Promise<T>, afterRelease?: () => Promise<void>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const queued = inProcessQueue(loc.lock, async () => {
        const staging = join(loc.dir, tempFileName(loc.name, process.pid, randomBytes(8).toString('hex')));
        const release = await acquireFileLock(
          loc.lock,
          loc.breaker,
          staging,
          () => this.tree.ensureDirectory(loc.dir),
          this.options.lockOptions,
        );
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

  /**
   * A create-only write (S3's If-None-Match: *), the one mechanism of put, copy and a prepared
   * create's commit: link() publishes the object only where no name is (file/write.ts), with no
   * lock. `locked`: the caller holds the key's lock already. `staged`: the object's temp file,
   * written already (prepareCreate). On a file system without hard links (found once, then remembered) every
   * create takes the lock and looks under it instead, so the look and the write are again one step.
   */
  async createOnly(
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
      if (await this.tree.readHeader(loc.file)) throw new PreconditionFailedError(key);
      return this.write(loc, key, body, metadata, tags);
    };
    return locked ? lookThenWrite() : this.withKeyLock(loc, lookThenWrite);
  }

  /**
   * The atomic writers of file/write.ts: 'replace' renames over whatever is there (under the key's
   * lock), 'create-only' links where nothing is (PreconditionFailedError when something is).
   */
  async write(
    loc: Location,
    key: string,
    body: Uint8Array,
    metadata: Record<string, string>,
    tags: Record<string, string>,
    mode: 'replace' | 'create-only' = 'replace',
    staged?: StagedObject,
  ): Promise<{ etag: string }> {
    const { durable } = this.options;
    const header = staged?.header ?? this.headerOf(key, body, metadata, tags);
    if (mode === 'replace') await writeObjectFile(loc, encodeObject(header, body), durable);
    else if (
      !(staged
        ? await linkTempIfAbsent(loc, staged.temp, durable)
        : await createObjectFile(loc, encodeObject(header, body), durable, () => this.tree.ensureDirectory(loc.dir)))
    ) {
      // Taken: by an object, or by a link planted in its place, which is refused as a read of it is.
      if ((await lstat(loc.file).catch(() => null))?.isSymbolicLink()) throw linkRefused();
      throw new PreconditionFailedError(key);
    }
    if (durable) await this.tree.directoriesDurable(loc.dir);
    return { etag: header.etag };
  }

  /** A new object's header: its ETag from its bytes, its time from the store's clock. */
  headerOf(
    key: string,
    body: Uint8Array,
    metadata: Record<string, string>,
    tags: Record<string, string>,
  ): ObjectHeader {
    return {
      key,
      etag: newEtag(body),
      lastModified: this.options.now().getTime(),
      size: body.byteLength,
      metadata,
      tags,
    };
  }

  /** `exactly`: a missing object is a lost condition (deleteExactly), not a delete already done. */
  async deleteOne(key: string, ifMatch: string | undefined, exactly = false): Promise<void> {
    const loc = this.tree.locate(key);
    const missing = (): void => {
      if (exactly) throw new PreconditionFailedError(key);
    };
    // A missing key needs no lock (and taking one would create directories only to prune them).
    // Only existence is checked here, so that a damaged object can still be deleted. A fence
    // (`exactly`) nearly always meets its object, so it skips the look and asks under the lock.
    if ((await this.tree.directoryState(loc.dir)) === 'missing') return missing();
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
        let durable = this.options.durable;
        if (ifMatch !== undefined) {
          const current = await this.tree.readHeader(loc.file);
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
      () => this.tree.pruneEmptyDirectories(loc.dir),
    );
  }
}
