/**
 * The TreeFiles a command sees behind a gate: the command's first change (a write, a fence, a
 * delete, a prune) first passes `gate`, once, and every change after it waits for that; reads never
 * do. A gate that throws stops the command before it changed anything, so it changes nothing. Two
 * gates: vault.run's signal (a command aborted while it waited for its lock or a read stops there;
 * once it has written, it finishes: half a command would be worse than a late one), and the pause
 * (pause.ts: the one read of the user's settings, only for a command that is about to write).
 */
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
import { usageOf, type FilesUsage } from '../vault/tree-files.js';

export class GatedFiles implements TreeFiles {
  private passed: Promise<void> | undefined;

  constructor(
    private readonly inner: TreeFiles,
    private readonly gate: () => void | Promise<void>,
  ) {}

  /** Before each change: the gate, run at the first one and shared by every later one. */
  private beforeChange(): Promise<void> {
    this.passed ??= (async () => this.gate())();
    return this.passed;
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
    await this.beforeChange();
    return this.inner.write(path, data, condition);
  }

  async fence(path: string, ifMatch: string, reason: 'moved' | 'deleted', op: string): Promise<FencedFile> {
    await this.beforeChange();
    return this.inner.fence(path, ifMatch, reason, op);
  }

  async remove(path: string, condition?: { ifMatch?: string }): Promise<void> {
    await this.beforeChange();
    return this.inner.remove(path, condition);
  }

  async removeMany(paths: string[]): Promise<{ failed: string[] }> {
    await this.beforeChange();
    return this.inner.removeMany(paths);
  }

  async dropVersionsBefore(path: string, etag: string): Promise<void> {
    // Only ever after the edit's own write: never the first change.
    return this.inner.dropVersionsBefore?.(path, etag);
  }

  /** A read: no gate. */
  usage(): Promise<FilesUsage> {
    return usageOf(this.inner);
  }

  async historyUsage(pruneTo?: HistoryTarget): Promise<HistoryUsage | null> {
    if (pruneTo !== undefined) await this.beforeChange();
    return this.inner.historyUsage ? this.inner.historyUsage(pruneTo) : null;
  }
}
