/**
 * Where one writer's chain stands: its instance, the last record's seq, hash and time, the active
 * segment and the records since the last checkpoint. It encodes the record after the head
 * (line.ts: the bytes written are the bytes hashed) and advances past it once the writer
 * (writer.ts) has written it.
 */
import { GENESIS_HASH } from './chain.js';
import type { SegmentState } from './chain-head.js';
import { encodeRecord, type EncodedRecord } from './line.js';
import { AUDIT_FORMAT_VERSION, AUDIT_MAC_FORMAT_VERSION, type AuditRecord, type AuditRecordType } from './record.js';

export class ChainState {
  instance = '';
  seq = 0;
  prevHash = GENESIS_HASH;
  lastTimeMs = 0;
  segment: SegmentState = { firstSeq: 1, records: 0, bytes: 0 };
  recordsSinceCheckpoint = 0;

  constructor(
    private readonly now: () => number,
    readonly macKey: Uint8Array | undefined,
  ) {}

  get version(): AuditRecord['v'] {
    return this.macKey ? AUDIT_MAC_FORMAT_VERSION : AUDIT_FORMAT_VERSION;
  }

  /** The next record after the current head, encoded (not yet written). */
  encodeNext(type: AuditRecordType, fields: Partial<AuditRecord>): EncodedRecord {
    // Records of one instance must be in time order for the export's merge; a clock stepping back
    // (NTP) would break that, so time never goes backwards within a chain.
    const timeMs = Math.max(this.now(), this.lastTimeMs);
    return encodeRecord(
      {
        v: this.version,
        seq: this.seq + 1,
        time: new Date(timeMs).toISOString(),
        type,
        instance: this.instance,
        ...fields,
        prevHash: this.prevHash,
      },
      this.macKey,
    );
  }

  /** The record is written: it is the head now. */
  advance({ record, bytes }: EncodedRecord): void {
    this.seq = record.seq;
    this.prevHash = record.hash;
    this.lastTimeMs = Date.parse(record.time);
    this.segment.records++;
    this.segment.bytes += bytes;
    this.recordsSinceCheckpoint++;
  }

  /** Continue the chain after `last`, a record the files hold (an earlier run's or another process's). */
  resumeAfter(last: AuditRecord, lastTimeMs: number): void {
    this.instance = last.instance;
    this.seq = last.seq;
    this.prevHash = last.hash;
    this.lastTimeMs = lastTimeMs;
  }

  /** A sealed segment is behind the head: the next record starts a new one. */
  startSegment(): void {
    this.segment = { firstSeq: this.seq + 1, records: 0, bytes: 0 };
  }

  /** The head as a checkpoint records it. */
  get head(): { instance: string; seq: number; hash: string; time: string } {
    return {
      instance: this.instance,
      seq: this.seq,
      hash: this.prevHash,
      time: new Date(this.lastTimeMs).toISOString(),
    };
  }
}
