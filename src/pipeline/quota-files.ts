import { MEMORY_ROOT } from '../vault/paths.js';
import type { ListedFile, ReadOptions, WriteResult } from '../vault/user-files.js';
import type {
  FencedFile,
  PathState,
  StatOptions,
  TreeFiles,
  TreeFileVersion,
  TreeWriteCondition,
} from '../vault/tree-files.js';
import { QuotaExceededError } from './quota-messages.js';
import type { QuotaRun, Reservation } from './quota-run.js';

/** memvault's bookkeeping (rename journals): no history, so no tombstone. */
const RESERVED_PREFIX = `${MEMORY_ROOT}/.memvault/`;

/**
 * The TreeFiles a command sees under the quota middleware: reads, stats and listings remember the
 * sizes they saw (for free), writes and deletes are checked and accounted with them.
 */
export class QuotaFiles implements TreeFiles {
  constructor(
    private readonly inner: TreeFiles,
    private readonly run: QuotaRun,
  ) {}

  get uid(): string {
    return this.inner.uid;
  }

  async read(path: string, options?: ReadOptions): Promise<TreeFileVersion | null> {
    const file = await this.inner.read(path, options);
    this.run.seen(path, file ? file.data.byteLength : null);
    return file;
  }

  async stat(path: string, options?: StatOptions): Promise<{ size: number; etag: string; lastModified: Date } | null> {
    const info = await this.inner.stat(path, options);
    if (path !== MEMORY_ROOT) this.run.seen(path, info ? info.size : null);
    return info;
  }

  isDirectory(path: string): Promise<boolean> {
    return this.inner.isDirectory(path);
  }

  assertStorable(path: string): void {
    this.inner.assertStorable(path);
  }

  async *listFiles(dir: string): AsyncIterable<ListedFile> {
    for await (const file of this.inner.listFiles(dir)) {
      this.run.seen(file.path, file.size);
      yield file;
    }
  }

  async write(path: string, data: Uint8Array, condition: TreeWriteCondition = {}): Promise<WriteResult> {
    // Versions count apart (docs/versions.md, "Quotas"): a write that would overflow the history's
    // allowance drops the oldest first (a rename's copy too, which is then accounted, never refused).
    if (this.run.historyOverflows(data.byteLength)) await this.run.pruneHistory(this.inner, data.byteLength);
    const { reservation, assumedNew } = await this.admit(path, data.byteLength, condition);
    let result: WriteResult;
    try {
      result = await this.inner.write(path, data, condition);
    } catch (error) {
      this.run.release(reservation);
      throw error;
    }
    // Admitted as a new file: the write says what it replaced, and the usage takes the exact figure.
    this.run.commit(
      assumedNew && typeof result.replaced === 'number'
        ? this.run.resettle(reservation, data.byteLength, result.replaced)
        : reservation,
    );
    this.run.seen(path, data.byteLength);
    return result;
  }

  /**
   * Admit a write with the size of the version it replaces: none for an If-None-Match write (it
   * only succeeds where no file was), the size this command saw of the path (an If-Match write
   * replaces the version it read; one it did not read takes a HEAD). Otherwise, instead of a HEAD before every create, it is admitted as a
   * new file, the most it can add (all its bytes and one file): what passes so would pass with the
   * exact figure too. Only a write refused so (near a limit) pays the HEAD, and is decided again
   * with the size found, so an overwrite at the limit is still admitted.
   */
  private async admit(
    path: string,
    newBytes: number,
    condition: TreeWriteCondition,
  ): Promise<{ reservation: Reservation; assumedNew: boolean }> {
    if (condition.ifNoneMatch) return { reservation: this.run.admit(path, newBytes, null), assumedNew: false };
    if (this.run.known.has(path))
      return { reservation: this.run.admit(path, newBytes, this.run.known.get(path)!), assumedNew: false };
    if (condition.ifMatch === undefined) {
      try {
        return { reservation: this.run.admit(path, newBytes, null), assumedNew: true };
      } catch (error) {
        if (!(error instanceof QuotaExceededError)) throw error;
      }
    }
    return {
      reservation: this.run.admit(path, newBytes, (await this.inner.stat(path))?.size ?? null),
      assumedNew: false,
    };
  }

  inspect(path: string, options?: ReadOptions): Promise<PathState> {
    return this.inner.inspect(path, options);
  }

  /**
   * A fenced file is gone for the user (its marker is not a file): accounted as a delete. Its
   * tombstone counts against the history's allowance once it has settled (the command waits for
   * that), and prunes what it ended when it takes the history past the allowance.
   */
  async fence(path: string, ifMatch: string, reason: 'moved' | 'deleted', op: string): Promise<FencedFile> {
    const result = await this.inner.fence(path, ifMatch, reason, op);
    this.run.removed(path);
    if (path.startsWith(RESERVED_PREFIX)) return result; // memvault's bookkeeping keeps no history
    return { ...result, settled: result.settled.then(() => this.run.tombstoneKept(this.inner)) };
  }

  async remove(path: string, condition: { ifMatch?: string } = {}): Promise<void> {
    await this.inner.remove(path, condition);
    this.run.removed(path);
  }

  async removeMany(paths: string[]): Promise<{ failed: string[] }> {
    const result = await this.inner.removeMany(paths);
    const failed = new Set(result.failed);
    for (const path of paths) if (!failed.has(path)) this.run.removed(path);
    return result;
  }

  /** Not metered: the history's count drops at its next listing (until then it is counted high). */
  async dropVersionsBefore(path: string, etag: string): Promise<void> {
    await this.inner.dropVersionsBefore?.(path, etag);
  }
}
