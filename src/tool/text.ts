/**
 * The line model of a text file. A trailing newline ends the last line rather than starting an
 * empty one, so "a\nb\n" has 2 lines (as an editor counts them) and inserting after the last line
 * adds no stray blank line. Files keep their line endings: a file written with CRLF stays CRLF.
 */
export interface TextFile {
  lines: string[];
  eol: '\n' | '\r\n';
  finalNewline: boolean;
}

export function parseText(text: string): TextFile {
  const eol = text.includes('\r\n') && !/(^|[^\r])\n/.test(text) ? '\r\n' : '\n';
  if (text === '') return { lines: [], eol, finalNewline: false };
  const finalNewline = text.endsWith('\n');
  const body = finalNewline ? text.slice(0, text.length - eol.length) : text;
  return { lines: body.split(eol), eol, finalNewline };
}

export function renderText(file: TextFile): string {
  if (file.lines.length === 0) return '';
  return file.lines.join(file.eol) + (file.finalNewline ? file.eol : '');
}

/** Lines of inserted text: one trailing newline is the end of its last line, not an extra line. */
export function textToLines(text: string): string[] {
  const normalized = text.replace(/\r\n/g, '\n');
  const body = normalized.endsWith('\n') ? normalized.slice(0, -1) : normalized;
  return body.split('\n');
}

export const LINE_NUMBER_WIDTH = 6;
export const MAX_LINES = 999_999;

export function numbered(line: string, n: number): string {
  return `${String(n).padStart(LINE_NUMBER_WIDTH, ' ')}\t${line}`;
}

/** 1-based line number of a character offset. */
export function lineOfOffset(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line += 1;
  return line;
}

/** Human-readable sizes as the reference tool prints them: 0B, 512B, 5.5K, 1.2M, 3G. */
export function formatSize(bytes: number): string {
  if (bytes <= 0) return '0B';
  const units = ['B', 'K', 'M', 'G', 'T'];
  const i = Math.min(Math.floor(Math.log(bytes) / Math.log(1024)), units.length - 1);
  const size = bytes / 1024 ** i;
  return (size % 1 === 0 ? size.toString() : size.toFixed(1)) + units[i];
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

/** Text of stored bytes, or null when they are not UTF-8 text (NUL bytes count as binary). */
export function decodeText(data: Uint8Array): string | null {
  if (data.includes(0)) return null;
  try {
    return utf8.decode(data);
  } catch {
    return null;
  }
}

export function encodeText(text: string): Uint8Array {
  return encoder.encode(text);
}
