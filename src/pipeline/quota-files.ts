import { isMemvaultError, type ErrorCode } from '../errors.js';
import { MEMORY_ROOT } from '../vault/paths.js';
import { PreconditionFailedError, type ListedFile, type ReadOptions, type WriteResult } from '../vault/user-files.js';
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

/** The size a write replaces (QuotaFiles.sizeBefore); `assumedNew`: taken as a new file, not looked at. */
interface Sized {
  oldBytes: number | null;
  assumedNew: boolean;
}

/** Failures of the store after which a write may or may not have landed. */
const OUTCOME_UNKNOWN = new Set<ErrorCode>(['STORE_UNAVAILABLE', 'INTERNAL']);

/** memvault's bookkeeping (rename journals): no history, so no tombstone. */
const RESERVED_PREFIX = `${MEMORY_ROOT}/.memvault/`;

/**
 * The TreeFiles a command sees under the quota middleware: reads, stats and listings remember the
 * sizes they saw (for free), writes and deletes are checked and accounted with them.
 */
export class QuotaFiles implements TreeFiles {
  /** If-Match writes that lost their condition, by path, until a read tells whether they landed. */
  private readonly inDoubt = new Map<string, { data: Uint8Array; reservation: Reservation }>();

  constructor(
    private readonly inner: TreeFiles,
    private readonly run: QuotaRun,
  ) {}

  get uid(): string {
    return this.inner.uid;
  }

  async read(path: string, options?: ReadOptions): Promise<TreeFileVersion | null> {
    const file = await this.inner.read(path, options);
    this.settle(path, file);
    this.run.seen(path, file ? file.data.byteLength : null);
    return file;
  }

  /**
   * An If-Match write of `path` whose outcome was unknown (`failed`), now read: the file holds its
   * bytes, so the usage takes its delta from the version it replaced, whoever wrote them; a file
   * that holds anything else was changed by someone else as well, and only a listing can tell.
   */
  private settle(path: string, file: TreeFileVersion | null): void {
    const doubt = this.inDoubt.get(path);
    if (!doubt) return;
    this.inDoubt.delete(path);
    if (file && Buffer.from(file.data.buffer, file.data.byteOffset, file.data.byteLength).equals(doubt.data))
      this.run.landed(doubt.reservation);
    else this.run.outcomeUnknown();
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
    const newBytes = data.byteLength;
    // A failed command changes nothing: the checks no pruning can pass come first, then room in the
    // history (docs/versions.md, "Quotas": a write that would overflow its allowance drops the
    // oldest versions first; a rename's copy too, which is then accounted, never refused), then the
    // admission, which checks again with what other writes reserved while the history was listed.
    const size = await this.sizeBefore(path, newBytes, condition);
    this.run.check(path, newBytes, size.oldBytes);
    if (this.run.historyOverflows(newBytes)) await this.run.pruneHistory(this.inner, newBytes);
    const { reservation, assumedNew } = await this.admit(path, newBytes, size);
    let result: WriteResult;
    try {
      result = await this.inner.write(path, data, condition);
    } catch (error) {
      this.run.release(reservation);
      this.failed(path, data, condition, reservation, error);
      throw error;
    }
    // Admitted as a new file: the write says what it replaced, and the usage takes the exact figure.
    this.run.commit(
      assumedNew && typeof result.replaced === 'number'
        ? this.run.resettle(reservation, newBytes, result.replaced)
        : reservation,
    );
    this.run.seen(path, newBytes);
    return result;
  }

  /**
   * The size of the version a write replaces: none for an If-None-Match write (it only succeeds
   * where no file was), the size this command saw of the path (an If-Match write replaces the
   * version it read; one it did not read takes a HEAD). Otherwise, instead of a HEAD before every
   * create, it is taken as a new file, the most it can add (all its bytes and one file): what passes
   * so would pass with the exact figure too. Only a write refused so (near a limit) pays the HEAD,
   * and is decided again with the size found, so an overwrite at the limit is still admitted.
   */
  private async sizeBefore(path: string, newBytes: number, condition: TreeWriteCondition): Promise<Sized> {
    if (condition.ifNoneMatch) return { oldBytes: null, assumedNew: false };
    if (this.run.known.has(path)) return { oldBytes: this.run.known.get(path)!, assumedNew: false };
    if (condition.ifMatch === undefined && this.passes(path, newBytes)) return { oldBytes: null, assumedNew: true };
    return { oldBytes: (await this.inner.stat(path))?.size ?? null, assumedNew: false };
  }

  private passes(path: string, newBytes: number): boolean {
    try {
      this.run.check(path, newBytes, null);
      return true;
    } catch (error) {
      if (error instanceof QuotaExceededError) return false;
      throw error;
    }
  }

  /** Admit with the size found; one taken as new that other writes' reservations now refuse is sized exactly. */
  private async admit(
    path: string,
    newBytes: number,
    size: Sized,
  ): Promise<{ reservation: Reservation; assumedNew: boolean }> {
    try {
      return { reservation: this.run.admit(path, newBytes, size.oldBytes), assumedNew: size.assumedNew };
    } catch (error) {
      if (!size.assumedNew || !(error instanceof QuotaExceededError)) throw error;
    }
    return {
      reservation: this.run.admit(path, newBytes, (await this.inner.stat(path))?.size ?? null),
      assumedNew: false,
    };
  }

  /**
   * A write failed. Most failures say nothing was written (a refused condition on a create-only
   * write: a file is there; a name conflict, taken back; an error raised before any request). An
   * If-Match write that lost its condition may have landed, its answer lost (the SDK's retry then
   * met it): an edit recognises that by reading the file again and answers success without
   * writing again (commands/edit.ts), so that read settles it here too (`read`). Any other failure
   * of the store leaves the outcome unknown: the usage is listed again before the next check.
   */
  private failed(
    path: string,
    data: Uint8Array,
    condition: TreeWriteCondition,
    reservation: Reservation,
    error: unknown,
  ): void {
    if (error instanceof PreconditionFailedError) {
      if (condition.ifMatch !== undefined) this.inDoubt.set(path, { data, reservation });
      return;
    }
    if (!isMemvaultError(error) || OUTCOME_UNKNOWN.has(error.code)) this.run.outcomeUnknown();
  }

  /**
   * The command is over: a write whose outcome no read settled (quota.ts calls this), and usage
   * listed again before the next check.
   */
  finish(): void {
    if (this.inDoubt.size > 0) this.run.outcomeUnknown();
    this.inDoubt.clear();
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
