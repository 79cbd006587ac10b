/**
 * Where a chain stands on disk: the head (last record) of an audit file and its sealed segments,
 * read when a writer opens (recovery after a crash) and, in shared mode, before every append.
 */
import { appendFileSync, existsSync, renameSync, truncateSync } from 'node:fs';
import { MemvaultError } from '../errors.js';
import { recordHash } from './chain.js';
import { parseRecordLine } from './parse.js';
import type { AuditRecord } from './record.js';
import { listSealedSegments, readFileTail, readFirstLineSync, sealedSegmentPath } from './segments.js';

/** The active segment: its first seq, how many records and how many bytes it holds. */
export interface SegmentState {
  firstSeq: number;
  records: number;
  bytes: number;
}

export interface FileHead {
  /** The chain's last record (undefined: no record anywhere yet). */
  last: AuditRecord | undefined;
  segment: SegmentState;
}

/** The head as the files hold it now: the last record of FILE, or of the newest sealed segment. */
export function readHead(file: string): FileHead {
  const tail = readFileTail(file);
  if (tail?.lastLine !== undefined) {
    const last = recordOrConfigError(tail.lastLine, 'the active audit file');
    const first = recordOrConfigError(readFirstLineSync(file) ?? tail.lastLine, 'the active audit file');
    return { last, segment: { firstSeq: first.seq, records: last.seq - first.seq + 1, bytes: tail.size } };
  }
  const newest = listSealedSegments(file).at(-1);
  const sealedTail = newest ? readFileTail(newest.file) : undefined;
  const last =
    sealedTail?.lastLine !== undefined
      ? recordOrConfigError(sealedTail.lastLine, 'the newest sealed segment')
      : undefined;
  return { last, segment: { firstSeq: (last?.seq ?? 0) + 1, records: 0, bytes: 0 } };
}

export interface RecoveredFile extends FileHead {
  /** Number of the newest sealed segment (0: none). */
  sealedCount: number;
  /** Bytes of a torn last line that were cut off (0: none). */
  discardedBytes: number;
}

/**
 * Resumes the chain from the files left by an earlier run. A crash mid-write leaves a line without
 * its newline: if it is a whole, self-consistent record only the newline is missing; otherwise the
 * record was never completely written and is cut off (the caller's start record notes how many
 * bytes). A seal record at the end of FILE means the previous run stopped between the seal and the
 * rename: the rotation is finished here.
 */
export function recoverActiveFile(file: string): RecoveredFile {
  const sealed = listSealedSegments(file);
  let sealedCount = sealed.at(-1)?.index ?? 0;
  let tail = readFileTail(file);
  let discardedBytes = 0;
  if (tail?.tornTail !== undefined) {
    const torn = parseRecordLine(tail.tornTail);
    if (torn.ok && recordHash(torn.record as unknown as Record<string, unknown>) === torn.record.hash) {
      appendFileSync(file, '\n');
    } else {
      discardedBytes = tail.size - tail.completeLength;
      truncateSync(file, tail.completeLength);
    }
    tail = readFileTail(file);
  }
  if (tail?.lastLine !== undefined) {
    const last = recordOrConfigError(tail.lastLine, 'the active audit file');
    if (last.type === 'seal' && last.segment) {
      const target = sealedSegmentPath(file, last.segment.index);
      if (existsSync(target))
        throw new MemvaultError('CONFIG', 'audit: a sealed segment with the same number already exists');
      renameSync(file, target);
      sealedCount = Math.max(sealedCount, last.segment.index);
      return { last, segment: { firstSeq: last.seq + 1, records: 0, bytes: 0 }, sealedCount, discardedBytes };
    }
    const firstLine = readFirstLineSync(file);
    const first = firstLine === undefined ? last : recordOrConfigError(firstLine, 'the active audit file');
    return {
      last,
      segment: { firstSeq: first.seq, records: last.seq - first.seq + 1, bytes: tail.size },
      sealedCount,
      discardedBytes,
    };
  }
  const newest = sealed.at(-1);
  let last: AuditRecord | undefined;
  if (newest) {
    const sealedTail = readFileTail(newest.file);
    if (sealedTail?.lastLine === undefined)
      throw new MemvaultError('CONFIG', 'audit: the newest sealed segment is empty');
    last = recordOrConfigError(sealedTail.lastLine, 'the newest sealed segment');
  }
  return {
    last,
    segment: { firstSeq: (last?.seq ?? 0) + 1, records: 0, bytes: tail?.size ?? 0 },
    sealedCount,
    discardedBytes,
  };
}

export function recordOrConfigError(line: string, where: string): AuditRecord {
  const parsed = parseRecordLine(line);
  if (!parsed.ok) {
    throw new MemvaultError(
      'CONFIG',
      `audit: ${where} ends with an unreadable record (${parsed.reason}); run memvault audit verify`,
    );
  }
  return parsed.record;
}
