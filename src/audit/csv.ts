import type { AuditRecord } from './record.js';

/**
 * CSV per RFC 4180 (comma-separated, CRLF line ends, fields with quotes, commas or line breaks
 * quoted with inner quotes doubled), plus the spreadsheet formula-injection guard: a text cell
 * starting with = + - @ tab or carriage return is prefixed with an apostrophe, so a path such as
 * `/memories/x` is shown as text and a crafted `=HYPERLINK(...)` is never evaluated.
 */
export const CSV_COLUMNS = [
  'time',
  'instance',
  'seq',
  'type',
  'requestId',
  'uid',
  'userId',
  'command',
  'path',
  'newPath',
  'outcome',
  'code',
  'bytesRead',
  'bytesWritten',
  'requests',
  'latencyMs',
  'decisions',
  'counts',
  'actor',
  'hash',
  'mac',
] as const;

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

export function csvCell(value: string | number | boolean | undefined): string {
  if (value === undefined) return '';
  if (typeof value !== 'string') return String(value);
  const guarded = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(guarded) ? `"${guarded.replace(/"/g, '""')}"` : guarded;
}

export function csvRow(cells: ReadonlyArray<string | number | boolean | undefined>): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}

export function csvHeader(): string {
  return csvRow(CSV_COLUMNS);
}

export function recordToCsvRow(record: AuditRecord): string {
  const json = (value: object | undefined) => (value === undefined ? undefined : JSON.stringify(value));
  const cells: Record<(typeof CSV_COLUMNS)[number], string | number | undefined> = {
    time: record.time,
    instance: record.instance,
    seq: record.seq,
    type: record.type,
    requestId: record.requestId,
    uid: record.uid,
    userId: record.userId,
    command: record.command,
    path: record.path,
    newPath: record.newPath,
    outcome: record.outcome,
    code: record.code,
    bytesRead: record.bytesRead,
    bytesWritten: record.bytesWritten,
    requests: json(record.requests),
    latencyMs: record.latencyMs,
    decisions: json(record.decisions),
    counts: json(record.counts),
    actor: record.actor,
    hash: record.hash,
    mac: record.mac,
  };
  return csvRow(CSV_COLUMNS.map((column) => cells[column]));
}
