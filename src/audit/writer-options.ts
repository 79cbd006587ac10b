/**
 * The audit writer's options and their checks at open (the writer itself is writer.ts).
 */
import { resolve as resolvePath } from 'node:path';
import { MemvaultError } from '../errors.js';
import type { ObjectStore } from '../store/port.js';
import { AUDIT_KEY_BYTES } from './chain.js';
import { isValidInstanceId } from './record.js';
import type { ObjectLockRetention, SegmentUploader } from './uploader.js';

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
   * false: records are queued in the appender's buffer (sink.ts) and written asynchronously; a crash
   * loses the records still in the buffer (the tail of the chain; verify then reports a truncated segment).
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

export const DEFAULT_MAX_SEGMENT_BYTES = 64 * 1024 * 1024;
export const DEFAULT_CHECKPOINT_EVERY = 100;

/** Refuses options that cannot work together, before any file is touched. */
export function checkWriterOptions(options: AuditWriterOptions): void {
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
    if (!options.file)
      throw new MemvaultError('CONFIG', 'audit: segment upload needs a file sink (segments are sealed files)');
    if (!options.upload.uploader && !options.upload.store)
      throw new MemvaultError('CONFIG', 'audit: upload needs an uploader or a store');
    if (options.upload.objectLock) {
      const uploader = options.upload.uploader;
      if (!uploader?.supportsRetention) {
        // Refuse rather than store segments without the retention the operator asked for.
        throw new MemvaultError('CONFIG', 'audit: objectLock needs an uploader that supports Object Lock retention');
      }
      if (!(options.upload.objectLock.days > 0))
        throw new MemvaultError('CONFIG', 'audit: objectLock.days must be positive');
    }
  }
}
