import { randomUUID } from 'node:crypto';
import { appendFileSync, existsSync, renameSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, resolve as resolvePath } from 'node:path';
import { MemvaultError } from '../errors.js';
import { observeAuditWrite } from '../telemetry/signals.js';
import { fsyncDirectorySync } from '../util/fs.js';
import { readHead, recoverActiveFile, settleActiveFile } from './chain-head.js';
import { ChainState } from './chain-state.js';
import { withFileLock } from './file-lock.js';
import { encodeCheckpoint } from './line.js';
import { AuditWriteError, sealTargetTaken } from './write-error.js';
import {
  sanitizeEntry,
  type AuditEntry,
  type AuditRecord,
  type AuditRecordType,
  type SegmentSummary,
} from './record.js';
import { SegmentShipper } from './segment-shipper.js';
import { listSealedSegments, sealedSegmentPath } from './segments.js';
import { appendLineSync, asError, openFileSink, stdoutSink, type LineSink } from './sink.js';
import { ObjectStoreSegmentUploader } from './uploader.js';
import {
  checkWriterOptions,
  DEFAULT_CHECKPOINT_EVERY,
  DEFAULT_MAX_SEGMENT_BYTES,
  type AuditWriterOptions,
} from './writer-options.js';

export { AuditWriteError } from './write-error.js';
export {
  DEFAULT_CHECKPOINT_EVERY,
  DEFAULT_MAX_SEGMENT_BYTES,
  type AuditUploadOptions,
  type AuditWriterOptions,
} from './writer-options.js';

/**
 * The audit writer: the order of its steps. The jobs around it each have a module: the chain's
 * state (chain-state.ts), line encoding (line.ts: the bytes written are the bytes hashed), the
 * appenders (sink.ts), the head on disk and crash recovery (chain-head.ts), the shared mode's lock
 * (file-lock.ts), the append's error (write-error.ts), segment paths (segments.ts) and shipping sealed segments (segment-shipper.ts).
 */

/**
 * The one writer of an instance's chain. `append` is synchronous: seq assignment, hashing and the
 * write happen in one turn of the event loop, so concurrent commands can never interleave inside
 * the chain, and in sync mode the record is written when `append` returns.
 */
export class AuditWriter {
  private readonly chain: ChainState;
  private sealedCount = 0;
  private fileSink: LineSink | undefined;
  private stdoutSink: LineSink | undefined;
  private failure: Error | undefined;
  private closed = false;
  private readonly pendingCloses = new Set<Promise<void>>();
  private readonly shipper: SegmentShipper | undefined;
  private readonly now: () => number;
  /** Shared mode: the active file as this process last left it. */
  private sharedFile: { ino: number; size: number } | undefined;
  private readonly maxSegmentBytes: number;

  private constructor(private readonly options: AuditWriterOptions) {
    this.now = options.now ?? Date.now;
    this.chain = new ChainState(this.now, options.macKey ? new Uint8Array(options.macKey) : undefined);
    this.maxSegmentBytes = options.maxSegmentBytes ?? DEFAULT_MAX_SEGMENT_BYTES;
    const upload = options.upload;
    const uploader = upload?.uploader ?? (upload?.store ? new ObjectStoreSegmentUploader(upload.store) : undefined);
    if (uploader && options.file) {
      this.shipper = new SegmentShipper({
        file: options.file,
        uploader,
        prefix: upload?.prefix ?? '',
        objectLock: upload?.objectLock,
        now: this.now,
        onError: options.onError,
      });
    }
  }

  static async open(options: AuditWriterOptions): Promise<AuditWriter> {
    checkWriterOptions(options);
    const writer = new AuditWriter(options);
    let discardedBytes = 0;
    const file = options.file;
    if (file) {
      // The audit directory may not exist yet on a fresh machine; records are private (0700).
      await mkdir(dirname(resolvePath(file)), { recursive: true, mode: 0o700 });
      // Shared: recovery (cutting a torn line, finishing a rotation) must not race another process's append.
      discardedBytes = options.shared ? withFileLock(file, () => writer.recover(file)) : writer.recover(file);
    } else {
      writer.chain.instance = options.instanceId ?? randomUUID();
    }
    writer.openSinks();
    writer.writeRecord('start', discardedBytes > 0 ? { recovered: { discardedBytes } } : {});
    writer.scheduleUploads();
    return writer;
  }

  get instanceId(): string {
    return this.chain.instance;
  }

  /** seq and hash of the last record written: the head of the chain. */
  get head(): { seq: number; hash: string } {
    return { seq: this.chain.seq, hash: this.chain.prevHash };
  }

  /** The last background upload failure, if the most recent attempt failed. */
  get uploadError(): Error | undefined {
    return this.shipper?.uploadError;
  }

  /** False after a write failure or close: no further command should run unaudited. */
  get writable(): boolean {
    return !this.closed && this.failure === undefined;
  }

  /** Writes one record; returns it as written. Throws AuditWriteError if it could not be written. */
  append(entry: AuditEntry): AuditRecord {
    if (entry.type === ('start' as string) || entry.type === ('seal' as string)) {
      throw new TypeError('start and seal records are written by the audit writer itself');
    }
    const record = this.writeRecord(
      entry.type,
      sanitizeEntry(entry, { includeUserId: this.options.includeUserId ?? false }),
    );
    if (this.options.file && !this.options.shared && this.chain.segment.bytes >= this.maxSegmentBytes) this.rotate();
    return record;
  }

  /** Waits until buffered records are written (async mode) and pending uploads have run. */
  async flush(): Promise<void> {
    for (const sink of [this.fileSink, this.stdoutSink]) if (sink) await sink.flush();
    await Promise.all([...this.pendingCloses]);
    await this.shipper?.idle();
  }

  /** Seals the active segment (unless `sealOnClose: false`), closes the sinks and finishes uploads. */
  async close(): Promise<void> {
    if (this.closed) return;
    if (this.failure === undefined && !this.options.shared) {
      try {
        this.maybeCheckpoint('close');
      } catch {
        // recorded in this.failure; the close goes on
      }
    }
    const file = this.options.file;
    if (file && this.options.shared && this.failure === undefined) {
      // One process closing does not end the others' segment: the shared file is sealed by size only.
      try {
        withFileLock(file, () => {
          this.syncHeadFromFile(file);
          this.maybeCheckpoint('close');
        });
      } catch {
        // a failed witness on close is reported by verify
      }
    }
    let sealError: Error | undefined;
    if (
      file &&
      this.fileSink &&
      this.failure === undefined &&
      (this.options.sealOnClose ?? this.options.upload !== undefined)
    ) {
      try {
        this.rotate({ reopen: false });
      } catch (error) {
        sealError = asError(error); // reported once the sinks are closed
      }
    }
    if (this.fileSink) this.trackClose(this.fileSink.end());
    this.fileSink = undefined;
    if (this.stdoutSink) this.trackClose(this.stdoutSink.end());
    this.stdoutSink = undefined;
    this.closed = true;
    await Promise.all([...this.pendingCloses]);
    this.scheduleUploads();
    await this.shipper?.idle();
    if (sealError !== undefined) throw sealError;
  }

  private writeRecord(type: AuditRecordType, fields: Partial<AuditRecord>): AuditRecord {
    if (this.closed) throw new AuditWriteError(new Error('audit writer is closed'));
    if (this.failure) throw new AuditWriteError(this.failure);
    if (this.options.shared) return this.writeShared(type, fields);
    if (!this.fileSink && !this.stdoutSink) throw new AuditWriteError(new Error('audit writer has no sink'));
    const encoded = this.chain.encodeNext(type, fields);
    try {
      observeAuditWrite(type, () => {
        this.fileSink?.write(encoded.line);
        this.stdoutSink?.write(encoded.line);
      });
    } catch (error) {
      this.failure = asError(error);
    }
    // In sync mode a failed write(2) has reported itself (onError) before write returned.
    if (this.failure) throw new AuditWriteError(this.failure);
    this.chain.advance(encoded);
    this.maybeCheckpoint(type);
    return encoded.record;
  }

  /** Appends the head to the checkpoint file: periodically, at each seal, and on close. */
  private maybeCheckpoint(type: AuditRecordType | 'close'): void {
    const checkpoint = this.options.checkpoint;
    if (!checkpoint || this.chain.seq === 0) return;
    if (
      type !== 'seal' &&
      type !== 'close' &&
      this.chain.recordsSinceCheckpoint < (checkpoint.every ?? DEFAULT_CHECKPOINT_EVERY)
    )
      return;
    try {
      appendFileSync(checkpoint.file, encodeCheckpoint(this.chain.version, this.chain.head, this.chain.macKey), {
        mode: 0o600,
      });
    } catch (error) {
      // The operator asked for a witness: without it, records would be written unwitnessed.
      this.failure = asError(error);
      throw new AuditWriteError(this.failure);
    }
    this.chain.recordsSinceCheckpoint = 0;
  }

  /**
   * Shared mode: under FILE.lock, read the chain's head from the file (another process may have
   * appended or rotated since), write the record with one append, and rotate if the segment is full.
   */
  private writeShared(type: AuditRecordType, fields: Partial<AuditRecord>): AuditRecord {
    const file = this.options.file!;
    try {
      return withFileLock(file, () => {
        const discardedBytes = this.syncHeadFromFile(file, { settle: true }) + (fields.recovered?.discardedBytes ?? 0);
        const encoded = this.chain.encodeNext(
          type,
          discardedBytes > 0 ? { ...fields, recovered: { discardedBytes } } : fields,
        );
        const fsync = this.options.fsync ?? false;
        observeAuditWrite(type, () => {
          this.sharedFile = appendLineSync(file, encoded.line, fsync);
        });
        this.chain.advance(encoded);
        if (type !== 'seal' && this.chain.segment.bytes >= this.maxSegmentBytes) {
          this.sealedCount = listSealedSegments(file).at(-1)?.index ?? 0;
          const index = this.sealedCount + 1;
          // Fail closed before the seal: a seal that cannot be renamed would have records follow it.
          if (existsSync(sealedSegmentPath(file, index))) throw sealTargetTaken(index);
          const seal = this.chain.encodeNext('seal', {
            segment: { index, firstSeq: this.chain.segment.firstSeq, records: this.chain.segment.records },
          });
          appendLineSync(file, seal.line, fsync);
          this.chain.advance(seal);
          renameSync(file, sealedSegmentPath(file, index));
          this.sharedFile = undefined;
          this.sealedCount = index;
          this.chain.startSegment();
          this.maybeCheckpoint('seal');
          this.scheduleUploads();
        }
        this.maybeCheckpoint(type);
        return encoded.record;
      });
    } catch (error) {
      if (error instanceof AuditWriteError) throw error;
      this.failure = asError(error);
      throw new AuditWriteError(this.failure);
    }
  }

  /**
   * Shared mode: take the head from the file unless it is as this process left it (same inode, same
   * size). `settle` (before an append): first repair what a process that died mid-append left, as
   * open does; returns the bytes of a torn line cut off, which the next record notes.
   */
  private syncHeadFromFile(file: string, { settle = false } = {}): number {
    const now = statOrUndefined(file);
    const known = this.sharedFile;
    if (now && known && now.ino === known.ino && now.size === known.size) return 0;
    const { last, segment, discardedBytes, rotated } = settle
      ? settleActiveFile(file, this.chain.macKey)
      : { ...readHead(file), discardedBytes: 0, rotated: undefined };
    this.chain.segment = segment;
    if (last) this.chain.resumeAfter(last, Math.max(this.chain.lastTimeMs, Date.parse(last.time) || 0));
    if (rotated !== undefined) this.scheduleUploads();
    return discardedBytes;
  }

  /** Resumes the chain from the files of an earlier run; returns the bytes of a torn line cut off. */
  private recover(file: string): number {
    const { last, segment, sealedCount, discardedBytes } = recoverActiveFile(file, this.chain.macKey);
    this.sealedCount = sealedCount;
    this.chain.segment = segment;
    if (last) {
      if (this.options.instanceId !== undefined && this.options.instanceId !== last.instance) {
        throw new MemvaultError(
          'CONFIG',
          'audit: this audit file belongs to another instance id; give each instance its own file',
        );
      }
      this.chain.resumeAfter(last, Date.parse(last.time) || 0);
    } else {
      this.chain.instance = this.options.instanceId ?? randomUUID();
    }
    return discardedBytes;
  }

  private openSinks(): void {
    const sync = this.options.sync ?? true;
    const onError = (error: Error) => {
      this.failure ??= error;
    };
    // Shared mode appends to the file itself, under the lock, record by record.
    if (this.options.file && !this.fileSink && !this.options.shared) {
      this.fileSink = openFileSink(this.options.file, { sync, fsync: this.options.fsync ?? false }, onError);
    }
    if (this.options.stdout && !this.stdoutSink) this.stdoutSink = stdoutSink({ sync }, onError);
  }

  /** Seals the active segment: a seal record, then the rename; the old file is closed in the background. */
  private rotate({ reopen = true }: { reopen?: boolean } = {}): void {
    const file = this.options.file;
    const sink = this.fileSink;
    if (!file || !sink) return;
    const index = this.sealedCount + 1;
    const summary: SegmentSummary = {
      index,
      firstSeq: this.chain.segment.firstSeq,
      records: this.chain.segment.records,
    };
    const target = sealedSegmentPath(file, index);
    // Fail closed: a seal left in FILE unrenamed would have the next records follow it. A taken name
    // is found before the seal is written; a rename that fails anyway stops the writer.
    if (existsSync(target)) this.fail(sealTargetTaken(index));
    this.writeRecord('seal', { segment: summary });
    try {
      // Renaming an open file is safe on POSIX: buffered writes (async mode) still reach it through
      // its descriptor, so the seal record lands in the sealed file.
      renameSync(file, target);
      if (this.options.fsync) fsyncDirectorySync(dirname(file));
    } catch (error) {
      this.fail(error);
    }
    this.sealedCount = index;
    this.chain.startSegment();
    this.maybeCheckpoint('seal');
    this.fileSink = undefined;
    this.trackClose(sink.end());
    if (reopen) {
      this.openSinks();
      this.scheduleUploads();
    }
  }

  /** Stops the writer: every later append throws. */
  private fail(error: unknown): never {
    this.failure ??= asError(error);
    throw new AuditWriteError(this.failure);
  }

  private trackClose(closing: Promise<void>): void {
    const tracked = closing.catch((error: unknown) => {
      this.failure ??= asError(error);
    });
    this.pendingCloses.add(tracked);
    void tracked.finally(() => this.pendingCloses.delete(tracked));
  }

  /** Ships sealed segments once the files being closed are closed (their last bytes written). */
  private scheduleUploads(): void {
    this.shipper?.schedule(() => Promise.all([...this.pendingCloses]));
  }
}

function statOrUndefined(file: string): { ino: number; size: number } | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}
