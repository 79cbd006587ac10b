import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { csvHeader, recordToCsvRow } from './csv.js';
import { parseRecordLine } from './parse.js';
import { AUDIT_RECORD_TYPES, type AuditRecord, type AuditRecordType } from './record.js';
import type { InstanceChain } from './sources.js';

export type ExportFormat = 'jsonl' | 'csv';

export interface ExportOptions {
  /** Inclusive lower bound on record time. */
  from?: Date;
  /** Exclusive upper bound on record time. */
  to?: Date;
  /** Only records of this pseudonymous user id. */
  uid?: string;
  format: ExportFormat;
  output: Writable;
  /** Record types to export. Default: all but `seal`, which is chain bookkeeping. */
  types?: readonly AuditRecordType[];
  /** Start a CSV with a UTF-8 byte order mark, so Excel reads non-ASCII paths correctly. */
  bom?: boolean;
  /** Written before everything else (e.g. the mark of an export whose chain did not verify). */
  preamble?: string;
  /** Called as input is consumed, with the bytes read so far across all sources. */
  onProgress?: (bytesRead: number) => void;
}

export interface ExportSummary {
  records: number;
  instances: number;
  firstTime?: string;
  lastTime?: string;
  /** Lines that are not records (damage): skipped here, reported by verify. */
  skippedLines: number;
  bytesRead: number;
}

// Every type but the seals, which chain the segments rather than record an operation.
const DEFAULT_TYPES: readonly AuditRecordType[] = AUDIT_RECORD_TYPES.filter((type) => type !== 'seal');

interface Cursor {
  record: AuditRecord;
  timeMs: number;
  rest: AsyncIterator<AuditRecord>;
}

/**
 * Merges the instances' chains into one time-ordered stream. Each chain is already in time order
 * (the writer never lets time go backwards), so a k-way merge holding one record per instance
 * suffices: memory is O(instances), not O(records). Ties break by instance id, then seq, so the
 * output is deterministic.
 */
export async function exportRecords(chains: readonly InstanceChain[], options: ExportOptions): Promise<ExportSummary> {
  const fromMs = options.from?.getTime() ?? -Infinity;
  const toMs = options.to?.getTime() ?? Infinity;
  const types = new Set(options.types ?? DEFAULT_TYPES);
  const summary: ExportSummary = { records: 0, instances: 0, skippedLines: 0, bytesRead: 0 };
  const instancesSeen = new Set<string>();

  const readChain = async function* (chain: InstanceChain): AsyncGenerator<AuditRecord> {
    for (const segment of chain.segments) {
      let consumed = 0;
      for await (const { line, bytes } of segment.lines()) {
        summary.bytesRead += bytes - consumed;
        consumed = bytes;
        options.onProgress?.(summary.bytesRead);
        const parsed = parseRecordLine(line);
        if (!parsed.ok) {
          summary.skippedLines++;
          continue;
        }
        const timeMs = Date.parse(parsed.record.time);
        // Past the window: the rest of this chain is later still.
        if (timeMs >= toMs) return;
        if (timeMs < fromMs || !types.has(parsed.record.type)) continue;
        if (options.uid !== undefined && parsed.record.uid !== options.uid) continue;
        yield parsed.record;
      }
    }
  };

  const heap = new MinHeap<Cursor>(
    (a, b) => a.timeMs - b.timeMs || compare(a.record.instance, b.record.instance) || a.record.seq - b.record.seq,
  );
  const advance = async (rest: AsyncIterator<AuditRecord>): Promise<void> => {
    const next = await rest.next();
    if (!next.done) heap.push({ record: next.value, timeMs: Date.parse(next.value.time), rest });
  };
  for (const chain of chains) await advance(readChain(chain));

  const write = async (text: string): Promise<void> => {
    if (!options.output.write(text)) await once(options.output, 'drain');
  };
  if (options.format === 'csv' && options.bom) await write('\ufeff');
  if (options.preamble !== undefined) await write(options.preamble);
  if (options.format === 'csv') await write(csvHeader());
  for (let cursor = heap.pop(); cursor; cursor = heap.pop()) {
    const { record } = cursor;
    await write(options.format === 'csv' ? recordToCsvRow(record) : `${JSON.stringify(record)}\n`);
    summary.records++;
    instancesSeen.add(record.instance);
    summary.firstTime ??= record.time;
    summary.lastTime = record.time;
    await advance(cursor.rest);
  }
  summary.instances = instancesSeen.size;
  return summary;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A binary min-heap: O(log k) per record for k instances. */
class MinHeap<T> {
  private readonly items: T[] = [];
  constructor(private readonly order: (a: T, b: T) => number) {}

  push(item: T): void {
    const items = this.items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.order(items[i] as T, items[parent] as T) >= 0) break;
      [items[i], items[parent]] = [items[parent] as T, items[i] as T];
      i = parent;
    }
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < items.length && this.order(items[left] as T, items[smallest] as T) < 0) smallest = left;
        if (right < items.length && this.order(items[right] as T, items[smallest] as T) < 0) smallest = right;
        if (smallest === i) break;
        [items[i], items[smallest]] = [items[smallest] as T, items[i] as T];
        i = smallest;
      }
    }
    return top;
  }
}
