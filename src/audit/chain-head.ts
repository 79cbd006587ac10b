/**
 * Where a chain stands on disk: the head (last record) of an audit file and its sealed segments,
 * read when a writer opens (recovery after a crash) and, in shared mode, before every append.
 */
import { appendFileSync, existsSync, renameSync, truncateSync } from 'node:fs';
import { MemvaultError } from '../errors.js';
import { GENESIS_HASH, macMatches, recordHash } from './chain.js';
import { parseRecordLine } from './parse.js';
import { AUDIT_MAC_FORMAT_VERSION, type AuditRecord } from './record.js';
import { listSealedSegments, readFileTail, readFirstLineSync, sealedSegmentPath, type FileTail } from './segments.js';

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

/**
 * The head as the files hold it now: the last complete record of FILE, or of the newest sealed
 * segment. Reads only; a torn line or an unfinished rotation is left for `settleActiveFile`.
 */
export function readHead(file: string): FileHead {
  const tail = readFileTail(file);
  if (tail?.lastLine !== undefined) {
    const last = recordOrConfigError(tail.lastLine, 'the active audit file');
    return { last, segment: activeSegment(file, tail, last) };
  }
  const last = newestSealedRecord(file);
  return { last, segment: { firstSeq: (last?.seq ?? 0) + 1, records: 0, bytes: 0 } };
}

export interface SettledFile extends FileHead {
  /** Bytes of a torn last line that were cut off (0: none). */
  discardedBytes: number;
  /** Number of the segment whose unfinished rotation was finished here, if any. */
  rotated?: number;
}

/**
 * Repairs what a writer that died mid-append left at the end of FILE, then returns the head. A crash
 * mid-write leaves a line without its newline: if it is the very record this writer would accept
 * next (hash, MAC with the key, seq and prevHash after the head, instance, time) only the newline
 * is missing; otherwise it was never completely written, or was planted, and is cut off (the caller
 * notes how many bytes). A seal record at the end of FILE means its writer stopped between the seal
 * and the rename: the rotation is finished here. Run at open and, in shared mode, under the lock
 * before an append, since another process may have died mid-append.
 */
export function settleActiveFile(file: string, macKey?: Uint8Array): SettledFile {
  let tail = readFileTail(file);
  let discardedBytes = 0;
  if (tail?.tornTail !== undefined) {
    if (isNextRecord(tail.tornTail, tail.lastLine !== undefined ? tail.lastLine : newestSealedLine(file), macKey)) {
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
      return {
        last,
        segment: { firstSeq: last.seq + 1, records: 0, bytes: 0 },
        discardedBytes,
        rotated: last.segment.index,
      };
    }
    return { last, segment: activeSegment(file, tail, last), discardedBytes };
  }
  const last = newestSealedRecord(file, { required: true });
  return { last, segment: { firstSeq: (last?.seq ?? 0) + 1, records: 0, bytes: tail?.size ?? 0 }, discardedBytes };
}

export interface RecoveredFile extends FileHead {
  /** Number of the newest sealed segment (0: none). */
  sealedCount: number;
  /** Bytes of a torn last line that were cut off (0: none). */
  discardedBytes: number;
}

/** Resumes the chain from the files left by an earlier run (`settleActiveFile`, plus the newest segment's number). */
export function recoverActiveFile(file: string, macKey?: Uint8Array): RecoveredFile {
  const { last, segment, discardedBytes, rotated } = settleActiveFile(file, macKey);
  const sealedCount = Math.max(listSealedSegments(file).at(-1)?.index ?? 0, rotated ?? 0);
  return { last, segment, sealedCount, discardedBytes };
}

/**
 * Whether a torn line is a whole record that continues the chain after `previousLine` (undefined:
 * the chain's first record). The hash alone proves only that the line is whole, not who wrote it or
 * where it belongs: with the key its MAC must match, so write access to the file cannot plant a
 * record that the writer then chains genuine records onto.
 */
function isNextRecord(line: string, previousLine: string | undefined, macKey: Uint8Array | undefined): boolean {
  const parsed = parseRecordLine(line);
  if (!parsed.ok) return false;
  const record = parsed.record;
  if (recordHash(record as unknown as Record<string, unknown>) !== record.hash) return false;
  if (macKey && (record.v !== AUDIT_MAC_FORMAT_VERSION || !macMatches(macKey, 'record', record.hash, record.mac!)))
    return false;
  if (previousLine === undefined) return record.seq === 1 && record.prevHash === GENESIS_HASH;
  const previous = parseRecordLine(previousLine);
  if (!previous.ok) return false;
  return (
    record.seq === previous.record.seq + 1 &&
    record.prevHash === previous.record.hash &&
    record.instance === previous.record.instance &&
    Date.parse(record.time) >= Date.parse(previous.record.time) &&
    !(record.v !== AUDIT_MAC_FORMAT_VERSION && previous.record.v === AUDIT_MAC_FORMAT_VERSION)
  );
}

function activeSegment(file: string, tail: FileTail, last: AuditRecord): SegmentState {
  const firstLine = readFirstLineSync(file);
  const first = firstLine === undefined ? last : recordOrConfigError(firstLine, 'the active audit file');
  return { firstSeq: first.seq, records: last.seq - first.seq + 1, bytes: tail.size };
}

function newestSealedLine(file: string): string | undefined {
  const newest = listSealedSegments(file).at(-1);
  return newest ? readFileTail(newest.file)?.lastLine : undefined;
}

/** The last record of the newest sealed segment; `required`: an empty newest segment is an error. */
function newestSealedRecord(file: string, { required = false } = {}): AuditRecord | undefined {
  const newest = listSealedSegments(file).at(-1);
  if (!newest) return undefined;
  const line = readFileTail(newest.file)?.lastLine;
  if (line === undefined) {
    if (required) throw new MemvaultError('CONFIG', 'audit: the newest sealed segment is empty');
    return undefined;
  }
  return recordOrConfigError(line, 'the newest sealed segment');
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
