import { closeSync, openSync, readdirSync, readSync, fstatSync, createReadStream } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';

/**
 * Segment files on disk. The active segment is PATH itself (what the acceptance checks read); a
 * full or closed segment is renamed beside it to PATH.NNNNNN.sealed.jsonl, numbered from 1.
 */

const SEALED_SUFFIX = '.sealed.jsonl';

export function sealedSegmentPath(activePath: string, index: number): string {
  return `${activePath}.${String(index).padStart(6, '0')}${SEALED_SUFFIX}`;
}

export interface SealedSegmentFile {
  index: number;
  file: string;
}

/** The sealed segments beside `activePath`, in index order (numeric, so 1000000 follows 999999). */
export function listSealedSegments(activePath: string): SealedSegmentFile[] {
  const dir = dirname(activePath);
  const base = basename(activePath);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const segments: SealedSegmentFile[] = [];
  for (const name of names) {
    const index = sealedIndexOf(name, base);
    if (index !== undefined) segments.push({ index, file: join(dir, name) });
  }
  return segments.sort((a, b) => a.index - b.index);
}

/** The segment number if `name` is a sealed segment of the active file named `activeBase`. */
export function sealedIndexOf(name: string, activeBase?: string): number | undefined {
  if (!name.endsWith(SEALED_SUFFIX)) return undefined;
  const stem = name.slice(0, -SEALED_SUFFIX.length);
  const dot = stem.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const digits = stem.slice(dot + 1);
  if (!/^\d{6,}$/.test(digits)) return undefined;
  if (activeBase !== undefined && stem.slice(0, dot) !== activeBase) return undefined;
  return Number(digits);
}

/** The active path a sealed segment file belongs to (PATH for PATH.000001.sealed.jsonl). */
export function activePathOfSealed(file: string): string | undefined {
  const index = sealedIndexOf(basename(file));
  if (index === undefined) return undefined;
  const stem = file.slice(0, -SEALED_SUFFIX.length);
  return stem.slice(0, stem.lastIndexOf('.'));
}

export interface FileTail {
  size: number;
  /** The last newline-terminated line, without its newline; undefined if there is none. */
  lastLine?: string;
  /** Byte length up to and including the last newline. */
  completeLength: number;
  /** Bytes after the last newline: a line the process was writing when it stopped, if any. */
  tornTail?: string;
}

const TAIL_CHUNK = 64 * 1024;

/** Reads only the end of a file: the writer resumes a chain of any length in constant time. */
export function readFileTail(file: string): FileTail | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const size = fstatSync(fd).size;
    let chunks: Buffer[] = [];
    let start = size;
    let newlines: number[] = [];
    // Read backwards until two newlines are in hand (the end of the last complete line and its start),
    // or the file's beginning is reached.
    while (start > 0) {
      const length = Math.min(TAIL_CHUNK, start);
      start -= length;
      const chunk = Buffer.alloc(length);
      readSync(fd, chunk, 0, length, start);
      chunks = [chunk, ...chunks];
      const buffer = Buffer.concat(chunks);
      newlines = [];
      for (let i = buffer.length - 1; i >= 0 && newlines.length < 2; i--) if (buffer[i] === 0x0a) newlines.push(i);
      if (newlines.length >= 2) break;
    }
    const buffer = Buffer.concat(chunks);
    const lastNewline = newlines[0];
    if (lastNewline === undefined) {
      return { size, completeLength: 0, ...(size > 0 ? { tornTail: buffer.toString('utf8') } : {}) };
    }
    const lineStart = newlines[1] === undefined ? 0 : newlines[1] + 1;
    const tail: FileTail = {
      size,
      lastLine: buffer.subarray(lineStart, lastNewline).toString('utf8'),
      completeLength: start + lastNewline + 1,
    };
    if (lastNewline < buffer.length - 1) tail.tornTail = buffer.subarray(lastNewline + 1).toString('utf8');
    return tail;
  } finally {
    closeSync(fd);
  }
}

/**
 * The first line of a file, read synchronously from its first 64 KiB (a record is far shorter);
 * undefined when the file has no complete first line there.
 */
export function readFirstLineSync(file: string): string | undefined {
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(TAIL_CHUNK);
    const n = readSync(fd, buffer, 0, buffer.length, 0);
    const end = buffer.subarray(0, n).indexOf(0x0a);
    return end < 0 ? undefined : buffer.subarray(0, end).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** The first line of a file (without newline), or undefined for an empty or missing file. */
export async function readFirstLine(file: string): Promise<string | undefined> {
  for await (const { line } of fileLines(file)) return line;
  return undefined;
}

export interface NumberedLine {
  /** 1-based line number. */
  lineNumber: number;
  line: string;
  /** Bytes consumed so far, for progress. */
  bytes: number;
}

/** Streams a file's lines; a file of any size is read in bounded memory. */
export async function* fileLines(file: string): AsyncGenerator<NumberedLine> {
  const stream = createReadStream(file, { encoding: 'utf8' });
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let lineNumber = 0;
  let bytes = 0;
  try {
    for await (const line of lines) {
      lineNumber++;
      bytes += Buffer.byteLength(line, 'utf8') + 1;
      yield { lineNumber, line, bytes };
    }
  } finally {
    lines.close();
    stream.destroy();
  }
}

/** Lines of an in-memory segment body (segments fetched from an object store are bounded in size). */
export function* bodyLines(body: Uint8Array): Generator<NumberedLine> {
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  let lineNumber = 0;
  let bytes = 0;
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const line = text.slice(start, end).replace(/\r$/, '');
    lineNumber++;
    bytes += Buffer.byteLength(line, 'utf8') + 1;
    yield { lineNumber, line, bytes };
    start = end + 1;
  }
}
