/**
 * The TreeFiles a command sees when the host passed vault.run a signal: until the command's first
 * change, every change first checks the signal, so a command aborted while it waited (for its lock,
 * for a read) stops before it wrote anything and changes nothing. Once it has written, it finishes:
 * half a command would be worse than a late one.
 */
import { MemvaultError } from '../errors.js';
import { messages } from '../tool/messages.js';
import type { ListedFile, ReadOptions, WriteResult } from '../vault/user-files.js';
import type { HistoryTarget, HistoryUsage } from '../vault/history-usage.js';
import type {
  FencedFile,
  PathState,
  StatOptions,
  TreeFiles,
  TreeFileVersion,
  TreeWriteCondition,
} from '../vault/tree-files.js';

export function abortedError(): MemvaultError {
  return new MemvaultError('ABORTED', messages.aborted());
}

export class AbortableFiles implements TreeFiles {
  private changed = false;

  constructor(
    private readonly inner: TreeFiles,
    private readonly signal: AbortSignal,
  ) {}

  /** Called before each change: refuses the first one once the signal fired. */
  private beforeChange(): void {
    if (!this.changed && this.signal.aborted) throw abortedError();
    this.changed = true;
  }

  get uid(): string {
    return this.inner.uid;
  }

  read(path: string, options?: ReadOptions): Promise<TreeFileVersion | null> {
    return this.inner.read(path, options);
  }

  stat(path: string, options?: StatOptions): Promise<{ size: number; etag: string; lastModified: Date } | null> {
    return this.inner.stat(path, options);
  }

  isDirectory(path: string): Promise<boolean> {
    return this.inner.isDirectory(path);
  }

  assertStorable(path: string): void {
    this.inner.assertStorable(path);
  }

  listFiles(dir: string): AsyncIterable<ListedFile> {
    return this.inner.listFiles(dir);
  }

  inspect(path: string, options?: ReadOptions): Promise<PathState> {
    return this.inner.inspect(path, options);
  }

  async write(path: string, data: Uint8Array, condition?: TreeWriteCondition): Promise<WriteResult> {
    this.beforeChange();
    return this.inner.write(path, data, condition);
  }

  async fence(path: string, ifMatch: string, reason: 'moved' | 'deleted', op: string): Promise<FencedFile> {
    this.beforeChange();
    return this.inner.fence(path, ifMatch, reason, op);
  }

  async remove(path: string, condition?: { ifMatch?: string }): Promise<void> {
    this.beforeChange();
    return this.inner.remove(path, condition);
  }

  async removeMany(paths: string[]): Promise<{ failed: string[] }> {
    this.beforeChange();
    return this.inner.removeMany(paths);
  }

  async dropVersionsBefore(path: string, etag: string): Promise<void> {
    // Only ever after the edit's own write: never the first change.
    return this.inner.dropVersionsBefore?.(path, etag);
  }

  async historyUsage(pruneTo?: HistoryTarget): Promise<HistoryUsage | null> {
    if (pruneTo !== undefined) this.beforeChange();
    return this.inner.historyUsage ? this.inner.historyUsage(pruneTo) : null;
  }
}
