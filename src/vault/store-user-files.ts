import type { CommandStats } from '../pipeline/context.js';
import { listAll, type ObjectStore } from '../store/port.js';
import type { UserCodec } from './codec.js';
import { MEMORY_ROOT } from './paths.js';
import type { FileVersion, ListedFile, PathKind, UserFiles, WriteCondition } from './user-files.js';

const DELETE_BATCH = 1000;

/** UserFiles over an ObjectStore: the codec decides keys and bytes, this class the S3-style semantics. */
export class StoreUserFiles implements UserFiles {
  constructor(
    private readonly store: ObjectStore,
    private readonly codec: UserCodec,
    private readonly stats?: CommandStats,
  ) {}

  get uid(): string {
    return this.codec.uid;
  }

  withStats(stats: CommandStats): UserFiles {
    return new StoreUserFiles(this.store, this.codec, stats);
  }

  async read(path: string): Promise<FileVersion | null> {
    const object = await this.store.get(this.codec.keyFor(path));
    if (!object) return null;
    const data = this.codec.open(path, object.body);
    if (this.stats) this.stats.bytesRead += data.byteLength;
    return { data, etag: object.etag, lastModified: object.lastModified };
  }

  async write(path: string, data: Uint8Array, condition: WriteCondition = {}): Promise<{ etag: string }> {
    const body = this.codec.seal(path, data);
    const result = await this.store.put(this.codec.keyFor(path), body, {
      ...(condition.ifMatch !== undefined ? { ifMatch: condition.ifMatch } : {}),
      ...(condition.ifNoneMatch ? { ifNoneMatch: '*' as const } : {}),
    });
    if (this.stats) this.stats.bytesWritten += data.byteLength;
    return result;
  }

  async stat(path: string): Promise<{ size: number; etag: string; lastModified: Date } | null> {
    if (path === MEMORY_ROOT) return null;
    const head = await this.store.head(this.codec.keyFor(path));
    return head ? { size: this.codec.plaintextSize(head.size), etag: head.etag, lastModified: head.lastModified } : null;
  }

  async kind(path: string): Promise<PathKind> {
    const file = await this.stat(path);
    if (file) return { kind: 'file', size: file.size };
    return (await this.isDirectory(path)) ? { kind: 'directory' } : null;
  }

  /** One LIST of at most one key. */
  async isDirectory(path: string): Promise<boolean> {
    if (path === MEMORY_ROOT) return true;
    const page = await this.store.list(this.codec.prefixFor(path), { maxKeys: 1 });
    return page.objects.length > 0;
  }

  async *listFiles(dir: string): AsyncIterable<ListedFile> {
    for await (const object of listAll(this.store, this.codec.prefixFor(dir))) {
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
