import { randomUUID } from 'node:crypto';
import {
  appendFileSync,
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
  writeSync,
  readSync,
  statSync,
  fstatSync,
} from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, resolve as resolvePath } from 'node:path';
import { pino, type DestinationStream, type Logger } from 'pino';
import { MemvaultError } from '../errors.js';
import type { ObjectStore } from '../store/port.js';
import { observeAuditWrite } from '../telemetry/signals.js';
import { AUDIT_KEY_BYTES, auditMac, canonicalJson, GENESIS_HASH, hashCanonical, recordHash } from './chain.js';
import {
  AUDIT_FORMAT_VERSION,
  AUDIT_MAC_FORMAT_VERSION,
  isValidInstanceId,
  sanitizeEntry,
  type AuditEntry,
  type AuditRecord,
  type AuditRecordType,
  type SegmentSummary,
} from './record.js';
import { parseRecordLine } from './parse.js';
import { listSealedSegments, readFileTail, readFirstLine, sealedSegmentPath } from './segments.js';
import { ObjectStoreSegmentUploader, segmentKey, type ObjectLockRetention, type SegmentUploader } from './uploader.js';

export interface AuditUploadOptions {
  /** Where sealed segments go. Give either an uploader or a store (wrapped in ObjectStoreSegmentUploader). */
  uploader?: SegmentUploader;
  store?: ObjectStore;
  /** Key prefix inside the store, before `audit/{instanceId}/...`. */
  prefix?: string;
  /** Object Lock retention for each uploaded segment; needs an uploader with `supportsRetention`. */
  objectLock?: ObjectLockRetention;
}

export interface AuditWriterOptions {
  /** Local file sink: records as JSON lines in this file, sealed segments beside it. */
  file?: string;
  /** Standard output sink (a chain per process run: it cannot be resumed after a restart). */
  stdout?: boolean;
  /**
   * true (default): each record is written with a blocking write(2) before `append` returns, so a
   * command's result is never returned before its record is in the operating system's page cache.
   * false: records are queued in pino's SonicBoom buffer and written asynchronously; a crash loses
   * the records still in the buffer (the tail of the chain; verify then reports a truncated segment).
   */
  sync?: boolean;
  /** fsync(2) after every write: the record survives a power loss, at the cost of a disk flush per command. */
  fsync?: boolean;
  /** Seal and rotate the active file once it reaches this size. Default 64 MiB. */
  maxSegmentBytes?: number;
  /**
   * Seal the active file on close, so a clean shutdown leaves a sealed, uploadable segment. Default:
   * true when `upload` is configured, false otherwise (the records then stay in FILE itself across
   * restarts until it reaches maxSegmentBytes, which is what a reader of FILE expects).
   */
  sealOnClose?: boolean;
  /** Stable id of this writer's chain; with a file sink it is read back from the file after a restart. */
  instanceId?: string;
  /** Keep the raw user id in records when a caller supplies it. Default false: only the pseudonymous uid. */
  includeUserId?: boolean;
  upload?: AuditUploadOptions;
  /**
   * The audit key (32 bytes): every record then carries `mac`, an HMAC of its hash, and is format
   * v2. createVault passes a key derived from the deployment secret (docs/audit.md).
   */
  macKey?: Uint8Array;
  /**
   * The tail witness: the head of the chain (instance, seq, hash, time, MAC) is appended to this
   * file every `every` records (default 100), at each seal and on close. Keep it where the audit
   * file's writers cannot rewrite it; `memvault audit verify --checkpoints FILE` then detects a
   * chain cut off before the last checkpoint.
   */
  checkpoint?: { file: string; every?: number };
  /**
   * Several processes append to one file (`memvault exec` runs side by side): each append takes
   * an exclusive lock file (FILE.lock), re-reads the head of the chain from the file and writes
   * under the lock, so all processes continue one chain. Costs a few file operations per record.
   */
  shared?: boolean;
  /** Background failures (segment uploads). Write failures are thrown from `append` instead. */
  onError?: (error: Error) => void;
  /** Clock, for tests. */
  now?: () => number;
}

/** pino's file destination (a SonicBoom); named through pino so we depend on pino's types only. */
type SonicBoom = ReturnType<typeof pino.destination>;

export const DEFAULT_MAX_SEGMENT_BYTES = 64 * 1024 * 1024;
export const DEFAULT_CHECKPOINT_EVERY = 100;

/**
 * Async mode: SonicBoom gathers records until 4 KiB are pending (one write(2) per ~10 records
 * instead of one thread-pool write each) and flushes whatever is pending every second, so at most
 * about a second of records (or 4 KiB) is at risk in a crash.
 */
const ASYNC_BUFFERING = { minLength: 4096, periodicFlush: 1000 };
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Thrown by `append` when the record could not be written. The message is what the model would
 * read; it says the command's fate is unknown because the command ran before its record failed.
 */
export class AuditWriteError extends MemvaultError {
  constructor(cause: unknown) {
    super(
      'INTERNAL',
      'Error: The memory store could not record this command in its audit log, so the result cannot be confirmed. Please view the affected path before retrying.',
      { cause },
    );
    this.name = 'AuditWriteError';
  }
}

interface SegmentState {
  firstSeq: number;
  records: number;
  bytes: number;
}

interface UploadState {
  uploadedThrough: number;
}

/**
 * The one writer of an instance's chain. `append` is synchronous: seq assignment, hashing and the
 * write happen in one turn of the event loop, so concurrent commands can never interleave inside
 * the chain, and in sync mode the record is written when `append` returns.
 */
export class AuditWriter {
  private instance = '';
  private seq = 0;
  private prevHash = GENESIS_HASH;
  private lastTimeMs = 0;
  private segment: SegmentState = { firstSeq: 1, records: 0, bytes: 0 };
  private sealedCount = 0;
  private fileDestination: SonicBoom | undefined;
  private stdoutDestination: SonicBoom | undefined;
  private logger: Logger | undefined;
  private failure: Error | undefined;
  private closed = false;
  private readonly pendingCloses = new Set<Promise<void>>();
  private uploads: Promise<void> = Promise.resolve();
  private readonly uploader: SegmentUploader | undefined;
  private readonly now: () => number;
  private lastUploadError: Error | undefined;
  private recordsSinceCheckpoint = 0;
  /** Shared mode: the active file as this process last left it. */
  private sharedFile: { ino: number; size: number } | undefined;
  private readonly macKey: Uint8Array | undefined;

  private constructor(private readonly options: AuditWriterOptions) {
    this.now = options.now ?? Date.now;
    this.macKey = options.macKey ? new Uint8Array(options.macKey) : undefined;
    const upload = options.upload;
    this.uploader = upload?.uploader ?? (upload?.store ? new ObjectStoreSegmentUploader(upload.store) : undefined);
  }

  static async open(options: AuditWriterOptions): Promise<AuditWriter> {
    if (!options.file && !options.stdout) throw new MemvaultError('CONFIG', 'audit: give a file or stdout sink');
    if (options.instanceId !== undefined && !isValidInstanceId(options.instanceId)) {
      throw new MemvaultError('CONFIG', 'audit: instanceId must be 1-64 characters of A-Z a-z 0-9 . _ -');
    }
    if (options.maxSegmentBytes !== undefined && !(options.maxSegmentBytes > 0)) {
      throw new MemvaultError('CONFIG', 'audit: maxSegmentBytes must be positive');
    }
    if (options.macKey !== undefined && options.macKey.byteLength !== AUDIT_KEY_BYTES) {
      throw new MemvaultError('CONFIG', `audit: macKey must be ${AUDIT_KEY_BYTES} bytes`);
    }
    if (options.shared && !options.file) throw new MemvaultError('CONFIG', 'audit: shared needs a file sink');
    if (options.checkpoint && options.file && resolvePath(options.checkpoint.file) === resolvePath(options.file)) {
      throw new MemvaultError('CONFIG', 'audit: the checkpoint file must not be the audit file');
    }
    if (options.upload) {
      if (!options.file) throw new MemvaultError('CONFIG', 'audit: segment upload needs a file sink (segments are sealed files)');
      if (!options.upload.uploader && !options.upload.store) throw new MemvaultError('CONFIG', 'audit: upload needs an uploader or a store');
      if (options.upload.objectLock) {
        const uploader = options.upload.uploader;
        if (!uploader?.supportsRetention) {
          // Refuse rather than store segments without the retention the operator asked for.
          throw new MemvaultError('CONFIG', 'audit: objectLock needs an uploader that supports Object Lock retention');
        }
        if (!(options.upload.objectLock.days > 0)) throw new MemvaultError('CONFIG', 'audit: objectLock.days must be positive');
      }
    }
    const writer = new AuditWriter(options);
    let discardedBytes = 0;
    // The audit directory may not exist yet on a fresh machine; records are private (0700).
    if (options.file) await mkdir(dirname(resolvePath(options.file)), { recursive: true, mode: 0o700 });
    if (options.file && options.shared) {
      // Recovery (cutting a torn line, finishing a rotation) must not race another process's append.
      const release = acquireFileLock(`${options.file}.lock`);
      try {
        discardedBytes = await writer.recoverFile(options.file);
      } finally {
        release();
      }
    } else if (options.file) discardedBytes = await writer.recoverFile(options.file);
    else writer.instance = options.instanceId ?? randomUUID();
    writer.openDestinations();
    writer.writeRecord('start', discardedBytes > 0 ? { recovered: { discardedBytes } } : {});
    if (writer.uploader) writer.scheduleUploads();
    return writer;
  }

  get instanceId(): string {
    return this.instance;
  }

  /** seq and hash of the last record written: the head of the chain. */
  get head(): { seq: number; hash: string } {
    return { seq: this.seq, hash: this.prevHash };
  }

  /** The last background upload failure, if the most recent attempt failed. */
  get uploadError(): Error | undefined {
    return this.lastUploadError;
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
    const record = this.writeRecord(entry.type, sanitizeEntry(entry, { includeUserId: this.options.includeUserId ?? false }));
    if (this.options.file && !this.options.shared && this.segment.bytes >= (this.options.maxSegmentBytes ?? DEFAULT_MAX_SEGMENT_BYTES)) {
      this.rotate();
    }
    return record;
  }

  /** Waits until buffered records are written (async mode) and pending uploads have run. */
  async flush(): Promise<void> {
    for (const destination of [this.fileDestination, this.stdoutDestination]) {
      if (destination) await flushDestination(destination);
    }
    await Promise.all([...this.pendingCloses]);
    await this.uploads;
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
      const release = acquireFileLock(`${file}.lock`);
      try {
        this.syncHeadFromFile(file);
        this.maybeCheckpoint('close');
      } catch {
        // a failed witness on close is reported by verify
      } finally {
        release();
      }
    }
    if (file && this.fileDestination && this.failure === undefined && (this.options.sealOnClose ?? this.options.upload !== undefined)) {
      this.rotate({ reopen: false });
    } else if (this.fileDestination) {
      this.trackClose(endDestination(this.fileDestination));
    }
    this.fileDestination = undefined;
    if (this.stdoutDestination) this.trackClose(endDestination(this.stdoutDestination));
    this.stdoutDestination = undefined;
    this.logger = undefined;
    this.closed = true;
    await Promise.all([...this.pendingCloses]);
    if (this.uploader) this.scheduleUploads();
    await this.uploads;
  }

  private writeRecord(type: AuditRecordType, fields: Partial<AuditRecord>): AuditRecord {
    if (this.closed) throw new AuditWriteError(new Error('audit writer is closed'));
    if (this.failure) throw new AuditWriteError(this.failure);
    if (this.options.shared) return this.writeShared(type, fields);
    const logger = this.logger;
    if (!logger) throw new AuditWriteError(new Error('audit writer has no sink'));
    const { record, canonical } = this.buildRecord(type, fields);
    try {
      // `v` is emitted by the level formatter (see openDestinations), so it is not in the line.
      const { v: _v, ...line } = record;
      observeAuditWrite(type, () => logger.info(line));
    } catch (error) {
      this.failure = asError(error);
    }
    if (this.failure) throw new AuditWriteError(this.failure);
    this.advance(record, canonical);
    this.maybeCheckpoint(type);
    return record;
  }

  /** The next record after the current head (not yet written). */
  private buildRecord(type: AuditRecordType, fields: Partial<AuditRecord>): { record: AuditRecord; canonical: string } {
    // Records of one instance must be in time order for the export's merge; a clock stepping back
    // (NTP) would break that, so time never goes backwards within a chain.
    const timeMs = Math.max(this.now(), this.lastTimeMs);
    const body = {
      seq: this.seq + 1,
      time: new Date(timeMs).toISOString(),
      type,
      instance: this.instance,
      ...fields,
      prevHash: this.prevHash,
    };
    const canonical = canonicalJson({ v: this.version, ...body });
    const hash = hashCanonical(canonical);
    const record: AuditRecord = { v: this.version, ...body, hash, ...(this.macKey ? { mac: auditMac(this.macKey, 'record', hash) } : {}) };
    return { record, canonical };
  }

  private advance(record: AuditRecord, canonical: string): void {
    this.seq = record.seq;
    this.prevHash = record.hash;
    this.lastTimeMs = Date.parse(record.time);
    this.segment.records++;
    // The canonical form has the same characters as the line in another key order; add the
    // `"hash":"<64 hex>"` field (and `"mac"`), a comma each and the newline.
    this.segment.bytes += Buffer.byteLength(canonical) + 75 + (record.mac ? 73 : 0);
    this.recordsSinceCheckpoint++;
  }

  private get version(): AuditRecord['v'] {
    return this.macKey ? AUDIT_MAC_FORMAT_VERSION : AUDIT_FORMAT_VERSION;
  }

  /** Appends the head to the checkpoint file: periodically, at each seal, and on close. */
  private maybeCheckpoint(type: AuditRecordType | 'close'): void {
    const checkpoint = this.options.checkpoint;
    if (!checkpoint || this.seq === 0) return;
    if (type !== 'seal' && type !== 'close' && this.recordsSinceCheckpoint < (checkpoint.every ?? DEFAULT_CHECKPOINT_EVERY)) return;
    const head = { instance: this.instance, seq: this.seq, hash: this.prevHash, time: new Date(this.lastTimeMs).toISOString() };
    const line = { v: this.version, type: 'checkpoint', ...head, ...(this.macKey ? { mac: auditMac(this.macKey, 'checkpoint', canonicalJson(head)) } : {}) };
    try {
      appendFileSync(checkpoint.file, `${JSON.stringify(line)}\n`, { mode: 0o600 });
    } catch (error) {
      // The operator asked for a witness: without it, records would be written unwitnessed.
      this.failure = asError(error);
      throw new AuditWriteError(this.failure);
    }
    this.recordsSinceCheckpoint = 0;
  }

  /**
   * Shared mode: under FILE.lock, read the chain's head from the file (another process may have
   * appended or rotated since), write the record with one write(2), and rotate if the segment is full.
   */
  private writeShared(type: AuditRecordType, fields: Partial<AuditRecord>): AuditRecord {
    const file = this.options.file!;
    const release = acquireFileLock(`${file}.lock`);
    try {
      this.syncHeadFromFile(file);
      const { record, canonical } = this.buildRecord(type, fields);
      observeAuditWrite(type, () => {
        const fd = openSync(file, 'a', 0o600);
        try {
          writeSync(fd, `${JSON.stringify(record)}\n`);
          if (this.options.fsync) fsyncSync(fd);
          const after = fstatSync(fd);
          this.sharedFile = { ino: after.ino, size: after.size };
        } finally {
          closeSync(fd);
        }
      });
      this.advance(record, canonical);
      if (type !== 'seal' && this.segment.bytes >= (this.options.maxSegmentBytes ?? DEFAULT_MAX_SEGMENT_BYTES)) {
        this.sealedCount = listSealedSegments(file).at(-1)?.index ?? 0;
        const index = this.sealedCount + 1;
        const seal = this.buildRecord('seal', { segment: { index, firstSeq: this.segment.firstSeq, records: this.segment.records } });
        const sealFd = openSync(file, 'a', 0o600);
        try {
          writeSync(sealFd, `${JSON.stringify(seal.record)}\n`);
          if (this.options.fsync) fsyncSync(sealFd);
        } finally {
          closeSync(sealFd);
        }
        this.advance(seal.record, seal.canonical);
        renameSync(file, sealedSegmentPath(file, index));
        this.sharedFile = undefined;
        this.sealedCount = index;
        this.segment = { firstSeq: this.seq + 1, records: 0, bytes: 0 };
        this.maybeCheckpoint('seal');
        if (this.uploader) this.scheduleUploads();
      }
      this.maybeCheckpoint(type);
      return record;
    } catch (error) {
      if (error instanceof AuditWriteError) throw error;
      this.failure = asError(error);
      throw new AuditWriteError(this.failure);
    } finally {
      release();
    }
  }

  /** The head as the file holds it now (shared mode): the last record of FILE or of the newest sealed segment. */
  private syncHeadFromFile(file: string): void {
    // Unchanged since this process's last append (same inode, same size): the head is ours already.
    const now = statOrUndefined(file);
    const known = this.sharedFile;
    if (now && known && now.ino === known.ino && now.size === known.size) return;
    this.syncHeadFromFileContents(file);
  }

  private syncHeadFromFileContents(file: string): void {
    const tail = readFileTail(file);
    let last: AuditRecord | undefined;
    if (tail?.lastLine !== undefined) {
      last = recordOrConfigError(tail.lastLine, 'the active audit file');
      const first = recordOrConfigError(readFirstLineSync(file) ?? tail.lastLine, 'the active audit file');
      this.segment = { firstSeq: first.seq, records: last.seq - first.seq + 1, bytes: tail.size };
    } else {
      const newest = listSealedSegments(file).at(-1);
      const sealedTail = newest ? readFileTail(newest.file) : undefined;
      if (sealedTail?.lastLine !== undefined) last = recordOrConfigError(sealedTail.lastLine, 'the newest sealed segment');
      this.segment = { firstSeq: (last?.seq ?? 0) + 1, records: 0, bytes: 0 };
    }
    if (last) {
      this.instance = last.instance;
      this.seq = last.seq;
      this.prevHash = last.hash;
      this.lastTimeMs = Math.max(this.lastTimeMs, Date.parse(last.time) || 0);
    }
  }

  /**
   * Resumes the chain from the file left by an earlier run: the last record of the active file, or
   * of the newest sealed segment. Returns the byte count of a torn last line that was cut off.
   */
  private async recoverFile(file: string): Promise<number> {
    const sealed = listSealedSegments(file);
    this.sealedCount = sealed.at(-1)?.index ?? 0;
    let tail = readFileTail(file);
    let discardedBytes = 0;
    if (tail?.tornTail !== undefined) {
      // A crash mid-write leaves a line without its newline. If it is a whole, self-consistent
      // record only the newline is missing; otherwise the record was never completely written and
      // is cut off (the start record notes how many bytes).
      const torn = parseRecordLine(tail.tornTail);
      if (torn.ok && recordHash(torn.record as unknown as Record<string, unknown>) === torn.record.hash) {
        appendFileSync(file, '\n');
      } else {
        discardedBytes = tail.size - tail.completeLength;
        truncateSync(file, tail.completeLength);
      }
      tail = readFileTail(file);
    }
    let last: AuditRecord | undefined;
    if (tail?.lastLine !== undefined) {
      last = recordOrConfigError(tail.lastLine, 'the active audit file');
      if (last.type === 'seal' && last.segment) {
        // The previous run sealed this file but stopped before renaming it: finish that rotation.
        const target = sealedSegmentPath(file, last.segment.index);
        if (existsSync(target)) throw new MemvaultError('CONFIG', 'audit: a sealed segment with the same number already exists');
        renameSync(file, target);
        this.sealedCount = Math.max(this.sealedCount, last.segment.index);
        this.segment = { firstSeq: last.seq + 1, records: 0, bytes: 0 };
      } else {
        const firstLine = await readFirstLine(file);
        const first = firstLine === undefined ? last : recordOrConfigError(firstLine, 'the active audit file');
        this.segment = { firstSeq: first.seq, records: last.seq - first.seq + 1, bytes: tail?.size ?? 0 };
      }
    } else {
      const newest = sealed.at(-1);
      if (newest) {
        const sealedTail = readFileTail(newest.file);
        if (sealedTail?.lastLine === undefined) throw new MemvaultError('CONFIG', 'audit: the newest sealed segment is empty');
        last = recordOrConfigError(sealedTail.lastLine, 'the newest sealed segment');
      }
      this.segment = { firstSeq: (last?.seq ?? 0) + 1, records: 0, bytes: tail?.size ?? 0 };
    }
    if (last) {
      if (this.options.instanceId !== undefined && this.options.instanceId !== last.instance) {
        throw new MemvaultError('CONFIG', 'audit: this audit file belongs to another instance id; give each instance its own file');
      }
      this.instance = last.instance;
      this.seq = last.seq;
      this.prevHash = last.hash;
      this.lastTimeMs = Date.parse(last.time) || 0;
    } else {
      this.instance = this.options.instanceId ?? randomUUID();
    }
    return discardedBytes;
  }

  private openDestinations(): void {
    const streams: DestinationStream[] = [];
    const sync = this.options.sync ?? true;
    if (this.options.file && !this.fileDestination && !this.options.shared) {
      // Opened here rather than by SonicBoom so the file is created synchronously and owner-only.
      const fd = openSync(this.options.file, 'a', 0o600);
      this.fileDestination = pino.destination({ fd, sync, fsync: this.options.fsync ?? false, ...(sync ? {} : ASYNC_BUFFERING) });
      this.watchErrors(this.fileDestination);
    }
    if (this.options.stdout && !this.stdoutDestination) {
      this.stdoutDestination = pino.destination({ fd: 1, sync, ...(sync ? {} : ASYNC_BUFFERING) });
      this.watchErrors(this.stdoutDestination);
    }
    if (this.fileDestination) streams.push(this.fileDestination);
    if (this.stdoutDestination) streams.push(this.stdoutDestination);
    if (streams.length === 0) return; // shared mode writes the file itself
    const destination = streams.length === 1 && streams[0] ? streams[0] : pino.multistream(streams);
    const version = this.version;
    this.logger = pino(
      {
        base: null,
        timestamp: false,
        // pino always writes the level first; emitting the format version there instead makes each
        // line exactly the audit record, with no logger fields outside the hash.
        formatters: { level: () => ({ v: version }) },
      },
      destination,
    );
  }

  private watchErrors(destination: SonicBoom): void {
    destination.on('error', (error: unknown) => {
      this.failure ??= asError(error);
    });
  }

  /** Seals the active segment: a seal record, then the rename; the old file is closed in the background. */
  private rotate({ reopen = true }: { reopen?: boolean } = {}): void {
    const file = this.options.file;
    const destination = this.fileDestination;
    if (!file || !destination) return;
    const index = this.sealedCount + 1;
    const summary: SegmentSummary = { index, firstSeq: this.segment.firstSeq, records: this.segment.records };
    this.writeRecord('seal', { segment: summary });
    // Renaming an open file is safe on POSIX: buffered writes (async mode) still reach it through
    // its descriptor, so the seal record lands in the sealed file.
    renameSync(file, sealedSegmentPath(file, index));
    if (this.options.fsync) fsyncDirectory(dirname(file));
    this.sealedCount = index;
    this.segment = { firstSeq: this.seq + 1, records: 0, bytes: 0 };
    this.maybeCheckpoint('seal');
    this.fileDestination = undefined;
    this.trackClose(endDestination(destination));
    if (reopen) {
      this.openDestinations();
      if (this.uploader) this.scheduleUploads();
    }
  }

  private trackClose(closing: Promise<void>): void {
    const tracked = closing.catch((error: unknown) => {
      this.failure ??= asError(error);
    });
    this.pendingCloses.add(tracked);
    void tracked.finally(() => this.pendingCloses.delete(tracked));
  }

  private scheduleUploads(): void {
    this.uploads = this.uploads.then(() =>
      this.uploadPending().then(
        () => {
          this.lastUploadError = undefined;
        },
        (error: unknown) => {
          this.lastUploadError = asError(error);
          this.options.onError?.(this.lastUploadError);
        },
      ),
    );
  }

  /**
   * Uploads every sealed segment not yet shipped, oldest first, stopping at the first failure (the
   * next seal or close retries). Progress lives in FILE.upload-state.json so a restart does not
   * re-send everything; create-only puts make a lost progress file harmless.
   */
  private async uploadPending(): Promise<void> {
    const file = this.options.file;
    const uploader = this.uploader;
    if (!file || !uploader) return;
    await Promise.all([...this.pendingCloses]);
    const statePath = `${file}.upload-state.json`;
    const state = readUploadState(statePath);
    for (const segment of listSealedSegments(file)) {
      if (segment.index <= state.uploadedThrough) continue;
      const body = readFileSync(segment.file);
      const firstLine = body.subarray(0, Math.max(0, body.indexOf(0x0a))).toString('utf8');
      const first = recordOrConfigError(firstLine, 'a sealed segment');
      const lock = this.options.upload?.objectLock;
      const retention = lock ? { mode: lock.mode, retainUntil: new Date(this.now() + lock.days * DAY_MS) } : undefined;
      await uploader.upload(segmentKey(first.instance, first.seq, this.options.upload?.prefix ?? ''), body, retention);
      state.uploadedThrough = segment.index;
      const temporary = `${statePath}.tmp`;
      writeFileSync(temporary, JSON.stringify(state), { mode: 0o600 });
      renameSync(temporary, statePath);
    }
  }
}

function readUploadState(path: string): UploadState {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<UploadState>;
    return { uploadedThrough: typeof parsed.uploadedThrough === 'number' ? parsed.uploadedThrough : 0 };
  } catch {
    return { uploadedThrough: 0 };
  }
}

function recordOrConfigError(line: string, where: string): AuditRecord {
  const parsed = parseRecordLine(line);
  if (!parsed.ok) {
    throw new MemvaultError('CONFIG', `audit: ${where} ends with an unreadable record (${parsed.reason}); run memvault audit verify`);
  }
  return parsed.record;
}

function endDestination(destination: SonicBoom): Promise<void> {
  return new Promise((resolve, reject) => {
    destination.once('close', () => resolve());
    destination.once('error', reject);
    destination.end();
  });
}

function flushDestination(destination: SonicBoom): Promise<void> {
  return new Promise((resolve, reject) => {
    destination.flush((error?: Error) => (error ? reject(error) : resolve()));
  });
}

function fsyncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** The first line of a file, read synchronously from its first 64 KiB (a record is far shorter). */
function statOrUndefined(file: string): { ino: number; size: number } | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}

function readFirstLineSync(file: string): string | undefined {
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(64 * 1024);
    const n = readSync(fd, buffer, 0, buffer.length, 0);
    const end = buffer.subarray(0, n).indexOf(0x0a);
    return end < 0 ? undefined : buffer.subarray(0, end).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

const LOCK_STALE_MS = 10_000;
const LOCK_TIMEOUT_MS = 20_000;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * An exclusive lock between processes on one host: create FILE.lock with O_EXCL (holding our pid),
 * unlink it to release. A lock whose holder is gone (no such pid) or that is older than 10 s (a
 * record takes microseconds) is broken. The append it guards is synchronous, so the wait is too:
 * it sleeps in 1 ms steps without spinning the CPU.
 */
function acquireFileLock(lockPath: string): () => void {
  const deadline = Date.now() + LOCK_TIMEOUT_MS;
  for (;;) {
    try {
      const fd = openSync(lockPath, 'wx', 0o600);
      try {
        writeSync(fd, String(process.pid));
      } finally {
        closeSync(fd);
      }
      return () => {
        try {
          unlinkSync(lockPath);
        } catch {
          // already broken as stale by another process
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (lockIsStale(lockPath)) {
      try {
        unlinkSync(lockPath);
      } catch {
        // someone else broke it first
      }
      continue;
    }
    if (Date.now() > deadline) throw new Error('audit: timed out waiting for the audit file lock');
    Atomics.wait(sleeper, 0, 0, 1);
  }
}

function lockIsStale(lockPath: string): boolean {
  try {
    const age = Date.now() - statSync(lockPath).mtimeMs;
    if (age > LOCK_STALE_MS) return true;
    const pid = Number(readFileSync(lockPath, 'utf8'));
    if (!Number.isInteger(pid) || pid <= 0) return age > 1000; // being written, or garbage
    try {
      process.kill(pid, 0);
      return false;
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'ESRCH';
    }
  } catch {
    return false; // gone already: retry the create
  }
}
