import type { CommandStats } from '../pipeline/context.js';
import { listAll, PreconditionFailedError, type ObjectInfo, type ObjectStore } from '../store/port.js';
import type { UserCodec } from '../crypto/user-codec.js';
import { writeRetried } from '../telemetry/signals.js';
import { MEMORY_ROOT } from './paths.js';
import type { FileVersion, ListedFile, UserFiles, WriteCondition } from './user-files.js';

const DELETE_BATCH = 1000;
/** Attempts to replace an expired object that still occupies a path a create-only write targets. */
const EXPIRED_REPLACE_TRIES = 3;

/**
 * Optional idle-expiry behaviour (implemented in src/expiry/access.ts): a file idle past its TTL is
 * absent (reads, stats and listings skip it, so a read never resurrects what the sweeper is about to
 * delete), a read of a live file may touch it (copy in place) to restart its lifecycle age, and every
 * write carries the TTL-class tag.
 */
export interface FileAccessPolicy {
  isExpired(lastModified: Date): boolean;
  /** After a read of a live file; best effort (never throws). */
  afterRead(key: string, object: { lastModified: Date; metadata: Record<string, string> }): Promise<void>;
  /** Before every write (records the user's TTL class once). */
  beforeWrite(): Promise<void>;
  readonly writeTags: Record<string, string>;
}

/** UserFiles over an ObjectStore: the codec decides keys and bytes, this class the S3-style semantics. */
export class StoreUserFiles implements UserFiles {
  constructor(
    private readonly store: ObjectStore,
    private readonly codec: UserCodec,
    private readonly stats?: CommandStats,
    private readonly access?: FileAccessPolicy,
  ) {}

  get uid(): string {
    return this.codec.uid;
  }

  withStats(stats: CommandStats): UserFiles {
    return new StoreUserFiles(this.store, this.codec, stats, this.access);
  }

  async read(path: string): Promise<FileVersion | null> {
    const key = this.codec.keyFor(path);
    const object = await this.store.get(key);
    if (!object || this.access?.isExpired(object.lastModified)) return null;
    const data = this.codec.open(path, object.body);
    if (this.stats) this.stats.bytesRead += data.byteLength;
    await this.access?.afterRead(key, object);
    return { data, etag: object.etag, lastModified: object.lastModified };
  }

  async write(path: string, data: Uint8Array, condition: WriteCondition = {}): Promise<{ etag: string }> {
    const body = this.codec.seal(path, data);
    const key = this.codec.keyFor(path);
    await this.access?.beforeWrite();
    const tags = this.access?.writeTags;
    const put = (conditions: { ifMatch?: string; ifNoneMatch?: '*' }) => this.store.put(key, body, { ...conditions, ...(tags ? { tags } : {}) });
    let result: { etag: string } | undefined;
    if (condition.ifNoneMatch && condition.ifMatch === undefined && this.access) {
      result = await this.createReplacingExpired(key, put);
    } else {
      result = await put({
        ...(condition.ifMatch !== undefined ? { ifMatch: condition.ifMatch } : {}),
        ...(condition.ifNoneMatch ? { ifNoneMatch: '*' as const } : {}),
      });
    }
    if (this.stats) this.stats.bytesWritten += data.byteLength;
    return result;
  }

  /**
   * Create-only while an expired object (absent for the user, not yet swept) may still sit at the
   * key: replace exactly that expired version (If-Match its ETag), never a live one.
   */
  private async createReplacingExpired(key: string, put: (c: { ifMatch?: string; ifNoneMatch?: '*' }) => Promise<{ etag: string }>): Promise<{ etag: string }> {
    for (let attempt = 1; ; attempt++) {
      if (attempt > 1) writeRetried('expired_replace');
      try {
        return await put({ ifNoneMatch: '*' });
      } catch (error) {
        if (!(error instanceof PreconditionFailedError) || attempt >= EXPIRED_REPLACE_TRIES) throw error;
      }
      const existing = await this.store.head(key);
      if (existing && !this.access?.isExpired(existing.lastModified)) throw new PreconditionFailedError(key);
      if (!existing) continue;
      try {
        return await put({ ifMatch: existing.etag });
      } catch (error) {
        // Swept or rewritten in between: look again.
        if (!(error instanceof PreconditionFailedError) || attempt >= EXPIRED_REPLACE_TRIES) throw error;
      }
    }
  }

  async stat(path: string): Promise<{ size: number; etag: string; lastModified: Date } | null> {
    if (path === MEMORY_ROOT) return null;
    const head = await this.store.head(this.codec.keyFor(path));
    return head && !this.access?.isExpired(head.lastModified) ? { size: this.codec.plaintextSize(head.size), etag: head.etag, lastModified: head.lastModified } : null;
  }


  /** One LIST of at most one key. */
  async isDirectory(path: string): Promise<boolean> {
    if (path === MEMORY_ROOT) return true;
    const prefix = this.codec.prefixFor(path);
    const page = await this.store.list(prefix, { maxKeys: 1 });
    const first = page.objects[0];
    if (!first || !this.access?.isExpired(first.lastModified)) return first !== undefined;
    // Only expired files so far: a directory exists while one live file lies below it.
    for await (const object of this.listAfter(prefix, first.key)) if (!this.access.isExpired(object.lastModified)) return true;
    return false;
  }

  private async *listAfter(prefix: string, startAfter: string): AsyncGenerator<ObjectInfo> {
    let page = await this.store.list(prefix, { startAfter });
    yield* page.objects;
    while (page.continuationToken) {
      page = await this.store.list(prefix, { continuationToken: page.continuationToken });
      yield* page.objects;
    }
  }

  async *listFiles(dir: string): AsyncIterable<ListedFile> {
    for await (const object of listAll(this.store, this.codec.prefixFor(dir))) {
      if (this.access?.isExpired(object.lastModified)) continue;
      yield { path: this.codec.pathFor(object.key), size: this.codec.plaintextSize(object.size), lastModified: object.lastModified };
    }
  }

  async remove(path: string, condition: { ifMatch?: string } = {}): Promise<void> {
    await this.store.delete(this.codec.keyFor(path), condition.ifMatch !== undefined ? { ifMatch: condition.ifMatch } : {});
  }

  async removeMany(paths: string[]): Promise<{ failed: string[] }> {
    const failed: string[] = [];
    for (let i = 0; i < paths.length; i += DELETE_BATCH) {
      const batch = paths.slice(i, i + DELETE_BATCH);
      const byKey = new Map(batch.map((p) => [this.codec.keyFor(p), p]));
      const result = await this.store.deleteMany([...byKey.keys()]);
      for (const key of result.failed) failed.push(byKey.get(key) ?? key);
    }
    return { failed };
  }
}
