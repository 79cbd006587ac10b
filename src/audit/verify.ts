import { GENESIS_HASH, recordHash } from './chain.js';
import { parseRecordLine } from './parse.js';
import type { AuditRecord } from './record.js';
import type { CollectedChains, InstanceChain } from './sources.js';

/** The first broken record of a chain: where it is and what is wrong with it. */
export interface VerifyFailure {
  instance?: string;
  /** Segment file path or object key. */
  source: string;
  /** 1-based line in the segment. */
  line: number;
  /** The seq the record carries, if it could be read. */
  seq?: number;
  /** The seq the chain expected at that position. */
  expectedSeq?: number;
  reason: string;
}

export interface ChainSummary {
  instance: string;
  segments: number;
  records: number;
  lastSeq: number;
  firstTime?: string;
  lastTime?: string;
}

export interface VerifyReport {
  ok: boolean;
  /** At most one per instance (the first break), plus any source not attributable to an instance. */
  failures: VerifyFailure[];
  chains: ChainSummary[];
  totals: { instances: number; segments: number; records: number; firstTime?: string; lastTime?: string };
}

/** Verifies every chain; a chain is read once, streaming, and stops at its first break. */
export async function verifyChains(collected: CollectedChains): Promise<VerifyReport> {
  const failures: VerifyFailure[] = collected.unreadable.map((u) => ({ source: u.name, line: u.line, reason: u.reason }));
  const chains: ChainSummary[] = [];
  for (const chain of collected.chains) {
    const { summary, failure } = await verifyChain(chain);
    chains.push(summary);
    if (failure) failures.push(failure);
  }
  const times = chains.flatMap((c) => [c.firstTime, c.lastTime]).filter((t): t is string => t !== undefined);
  times.sort((a, b) => Date.parse(a) - Date.parse(b));
  return {
    ok: failures.length === 0,
    failures,
    chains,
    totals: {
      instances: chains.length,
      segments: chains.reduce((n, c) => n + c.segments, 0),
      records: chains.reduce((n, c) => n + c.records, 0),
      ...(times[0] !== undefined ? { firstTime: times[0] } : {}),
      ...(times.length > 0 ? { lastTime: times[times.length - 1] } : {}),
    },
  };
}

/**
 * Walks one instance's chain from seq 1 (whose prevHash is the genesis hash). Each record must
 * carry the next seq, the previous record's hash, a hash matching its own content, and a time not
 * before its predecessor's; each sealed segment must end with a seal record that describes it.
 */
export async function verifyChain(chain: InstanceChain): Promise<{ summary: ChainSummary; failure?: VerifyFailure }> {
  const summary: ChainSummary = { instance: chain.instance, segments: chain.segments.length, records: 0, lastSeq: 0 };
  let expectedSeq = 1;
  let expectedPrev = GENESIS_HASH;
  let lastTimeMs = -Infinity;
  const fail = (source: string, line: number, reason: string, record?: AuditRecord): { summary: ChainSummary; failure: VerifyFailure } => ({
    summary,
    failure: {
      instance: chain.instance,
      source,
      line,
      ...(record ? { seq: record.seq } : {}),
      expectedSeq,
      reason,
    },
  });

  for (const segment of chain.segments) {
    let recordsInSegment = 0;
    let segmentFirstSeq: number | undefined;
    let sealed = false;
    let lastLine = 0;
    for await (const { lineNumber, line } of segment.lines()) {
      lastLine = lineNumber;
      if (sealed) return fail(segment.name, lineNumber, 'a record follows the seal record of its segment');
      const parsed = parseRecordLine(line);
      if (!parsed.ok) return fail(segment.name, lineNumber, `unreadable record: ${parsed.reason}`);
      const record = parsed.record;
      if (record.instance !== chain.instance) return fail(segment.name, lineNumber, `record of instance ${record.instance} in this instance's chain`, record);
      if (record.seq !== expectedSeq) {
        const why =
          record.seq > expectedSeq
            ? `${record.seq - expectedSeq} record(s) missing before this one`
            : 'record out of order or duplicated';
        return fail(segment.name, lineNumber, `seq ${record.seq} where ${expectedSeq} was expected: ${why}`, record);
      }
      if (record.prevHash !== expectedPrev) {
        return fail(segment.name, lineNumber, 'prevHash does not match the previous record: a record before it was replaced or inserted', record);
      }
      if (recordHash(record as unknown as Record<string, unknown>) !== record.hash) {
        return fail(segment.name, lineNumber, "hash does not match the record's content: the record was edited", record);
      }
      const timeMs = Date.parse(record.time);
      if (timeMs < lastTimeMs) return fail(segment.name, lineNumber, 'time goes backwards', record);
      if (segmentFirstSeq === undefined) {
        segmentFirstSeq = record.seq;
        if (segment.keyFirstSeq !== undefined && segment.keyFirstSeq !== record.seq) {
          return fail(segment.name, lineNumber, `segment stored under first seq ${segment.keyFirstSeq} starts at seq ${record.seq}`, record);
        }
      }
      if (record.type === 'seal') {
        const s = record.segment;
        if (!s || s.firstSeq !== segmentFirstSeq || s.records !== recordsInSegment) {
          return fail(segment.name, lineNumber, "seal record does not describe its segment's records", record);
        }
        if (segment.index !== undefined && s.index !== segment.index) {
          return fail(segment.name, lineNumber, `seal record is for segment ${s.index}, found in the file of segment ${segment.index}`, record);
        }
        sealed = true;
      } else {
        recordsInSegment++;
      }
      summary.records++;
      summary.lastSeq = record.seq;
      summary.firstTime ??= record.time;
      summary.lastTime = record.time;
      expectedSeq++;
      expectedPrev = record.hash;
      lastTimeMs = timeMs;
    }
    if (segment.sealed && !sealed) {
      return fail(segment.name, lastLine + 1, 'sealed segment ends without its seal record: it was truncated');
    }
  }
  return { summary };
}
