import { canonicalJson, GENESIS_HASH, macMatches, recordHash } from './chain.js';
import { parseRecordLine } from './parse.js';
import { AUDIT_MAC_FORMAT_VERSION, type AuditRecord } from './record.js';
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
  /** First seq of the authenticated (v2, MAC checked) part; records before it are legacy v1. */
  authenticatedFrom?: number;
  /** v2 records whose MAC could not be checked (no key given). */
  macsUnchecked: number;
  /** The latest witness (checkpoint or expected head) the chain was found to reach. */
  witnessedThrough?: { seq: number; time?: string; source: string };
}

/** A head of a chain recorded elsewhere: a checkpoint line, or what the operator passes to verify. */
export interface ChainWitness {
  instance?: string;
  seq: number;
  hash: string;
  time?: string;
  /** v2 checkpoints: HMAC under the audit key. */
  mac?: string;
  /**
   * A head the operator recorded and passes in (`--expect-head`): trusted as given, MAC or not.
   * Any other witness without a MAC is a checkpoint file's line, believed only at a legacy record.
   */
  givenByOperator?: boolean;
  /** Where it came from, for reports ("checkpoint file x line 3", "--expect-head"). */
  source: string;
}

export interface VerifyOptions {
  /** The audit key: every v2 record's MAC is checked, and a chain with none is a failure. */
  macKey?: Uint8Array;
  /**
   * Tail witnesses; the chain must reach the latest one of its instance, and the record at each
   * witness's seq must carry its hash.
   */
  witnesses?: readonly ChainWitness[];
}

export interface VerifyReport {
  ok: boolean;
  /** At most one per instance (the first break), plus any source not attributable to an instance. */
  failures: VerifyFailure[];
  chains: ChainSummary[];
  totals: { instances: number; segments: number; records: number; firstTime?: string; lastTime?: string };
}

/** Verifies every chain; a chain is read once, streaming, and stops at its first break. */
export async function verifyChains(collected: CollectedChains, options: VerifyOptions = {}): Promise<VerifyReport> {
  const failures: VerifyFailure[] = collected.unreadable.map((u) => ({
    source: u.name,
    line: u.line,
    reason: u.reason,
  }));
  const chains: ChainSummary[] = [];
  const witnesses = witnessesByInstance(options.witnesses ?? [], collected.chains, options.macKey, failures);
  for (const chain of collected.chains) {
    const { summary, failure } = await verifyChain(chain, {
      ...(options.macKey ? { macKey: options.macKey } : {}),
      witnesses: witnesses.get(chain.instance) ?? [],
    });
    chains.push(summary);
    if (failure) failures.push(failure);
    witnesses.delete(chain.instance);
  }
  for (const [instance, list] of witnesses) {
    const witness = latestOf(list)!;
    failures.push({
      instance,
      source: witness.source,
      line: 0,
      reason: `a witness records seq ${witness.seq} of instance ${instance}, but none of its records are here: the whole chain was removed`,
    });
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
 * Every witness (`witness`, `witnesses`) must agree with the record at its seq, not only the latest:
 * a chain deleted and restarted under the same instance id contradicts the older checkpoints; the
 * chain must reach the latest one.
 */
export async function verifyChain(
  chain: InstanceChain,
  options: { macKey?: Uint8Array; witness?: ChainWitness; witnesses?: readonly ChainWitness[] } = {},
): Promise<{ summary: ChainSummary; failure?: VerifyFailure }> {
  const summary: ChainSummary = {
    instance: chain.instance,
    segments: chain.segments.length,
    records: 0,
    lastSeq: 0,
    macsUnchecked: 0,
  };
  const { macKey } = options;
  const allWitnesses = [...(options.witnesses ?? []), ...(options.witness ? [options.witness] : [])];
  const witness = latestOf(allWitnesses);
  // seq -> the witnesses at that seq: bounded by the number of witnesses, not the chain's length.
  const witnessesAt = new Map<number, ChainWitness[]>();
  for (const w of allWitnesses) witnessesAt.set(w.seq, [...(witnessesAt.get(w.seq) ?? []), w]);
  let expectedSeq = 1;
  let expectedPrev = GENESIS_HASH;
  let lastTimeMs = -Infinity;
  const fail = (
    source: string,
    line: number,
    reason: string,
    record?: AuditRecord,
  ): { summary: ChainSummary; failure: VerifyFailure } => ({
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
      if (record.instance !== chain.instance)
        return fail(segment.name, lineNumber, `record of instance ${record.instance} in this instance's chain`, record);
      if (record.seq !== expectedSeq) {
        const why =
          record.seq > expectedSeq
            ? `${record.seq - expectedSeq} record(s) missing before this one`
            : 'record out of order or duplicated';
        return fail(segment.name, lineNumber, `seq ${record.seq} where ${expectedSeq} was expected: ${why}`, record);
      }
      if (record.prevHash !== expectedPrev) {
        return fail(
          segment.name,
          lineNumber,
          'prevHash does not match the previous record: a record before it was replaced or inserted',
          record,
        );
      }
      if (recordHash(record as unknown as Record<string, unknown>) !== record.hash) {
        return fail(
          segment.name,
          lineNumber,
          "hash does not match the record's content: the record was edited",
          record,
        );
      }
      if (record.v === AUDIT_MAC_FORMAT_VERSION) {
        if (macKey) {
          if (!macMatches(macKey, 'record', record.hash, record.mac!)) {
            return fail(
              segment.name,
              lineNumber,
              "MAC does not match: the record was not written by this deployment's audit writer (forged, or another key)",
              record,
            );
          }
        } else {
          summary.macsUnchecked++;
        }
        summary.authenticatedFrom ??= record.seq;
      } else if (summary.authenticatedFrom !== undefined) {
        return fail(
          segment.name,
          lineNumber,
          'a record without MAC follows authenticated records: forged or downgraded',
          record,
        );
      }
      for (const seen of witnessesAt.get(record.seq) ?? []) {
        // The writer MACs its checkpoints whenever it MACs its records: a MAC-less checkpoint of an
        // authenticated record was stripped or forged. It is refused where it would pass a cut tail
        // off as witnessed (the latest); an earlier one is not believed, and so not compared.
        const unauthenticated =
          seen.mac === undefined && !seen.givenByOperator && record.v === AUDIT_MAC_FORMAT_VERSION;
        if (unauthenticated && seen !== witness) continue;
        if (record.hash !== seen.hash) {
          return fail(
            segment.name,
            lineNumber,
            `the record differs from the one ${seen.source} witnessed at seq ${seen.seq}: the chain was rewritten`,
            record,
          );
        }
        if (unauthenticated) {
          return fail(
            segment.name,
            lineNumber,
            `${seen.source} carries no MAC but witnesses an authenticated record: the checkpoint was forged or its MAC stripped`,
            record,
          );
        }
      }
      const timeMs = Date.parse(record.time);
      if (timeMs < lastTimeMs) return fail(segment.name, lineNumber, 'time goes backwards', record);
      if (segmentFirstSeq === undefined) {
        segmentFirstSeq = record.seq;
        if (segment.keyFirstSeq !== undefined && segment.keyFirstSeq !== record.seq) {
          return fail(
            segment.name,
            lineNumber,
            `segment stored under first seq ${segment.keyFirstSeq} starts at seq ${record.seq}`,
            record,
          );
        }
      }
      if (record.type === 'seal') {
        const s = record.segment;
        if (!s || s.firstSeq !== segmentFirstSeq || s.records !== recordsInSegment) {
          return fail(segment.name, lineNumber, "seal record does not describe its segment's records", record);
        }
        if (segment.index !== undefined && s.index !== segment.index) {
          return fail(
            segment.name,
            lineNumber,
            `seal record is for segment ${s.index}, found in the file of segment ${segment.index}`,
            record,
          );
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
  const lastSegment = chain.segments.at(-1)?.name ?? chain.instance;
  if (macKey && summary.records > 0 && summary.authenticatedFrom === undefined) {
    return fail(
      lastSegment,
      0,
      'none of the records is authenticated (no MAC): the chain was written without the audit key, or rewritten',
    );
  }
  if (witness) {
    if (summary.lastSeq < witness.seq) {
      return fail(
        lastSegment,
        0,
        `the chain ends at seq ${summary.lastSeq}, but ${witness.source} witnessed seq ${witness.seq}${witness.time ? ` (${witness.time})` : ''}: ${witness.seq - summary.lastSeq} record(s) were cut off the end`,
      );
    }
    summary.witnessedThrough = {
      seq: witness.seq,
      ...(witness.time ? { time: witness.time } : {}),
      source: witness.source,
    };
  }
  return { summary };
}

/** The witness with the highest seq (the one the chain must reach). */
function latestOf(witnesses: readonly ChainWitness[]): ChainWitness | undefined {
  let latest: ChainWitness | undefined;
  for (const w of witnesses) if (!latest || w.seq > latest.seq) latest = w;
  return latest;
}

/**
 * The witnesses per instance. With a key, a checkpoint whose MAC does not match is reported
 * (someone wrote it without the key) and not used; a witness naming no instance applies to the
 * only chain there is.
 */
function witnessesByInstance(
  witnesses: readonly ChainWitness[],
  chains: readonly InstanceChain[],
  macKey: Uint8Array | undefined,
  failures: VerifyFailure[],
): Map<string, ChainWitness[]> {
  const byInstance = new Map<string, ChainWitness[]>();
  for (const witness of witnesses) {
    const instance = witness.instance ?? (chains.length === 1 ? chains[0]!.instance : undefined);
    if (instance === undefined) {
      failures.push({
        source: witness.source,
        line: 0,
        reason: 'the witness names no instance and there are several chains: give INSTANCE:SEQ:HASH',
      });
      continue;
    }
    if (macKey && witness.mac !== undefined) {
      const head = { instance, seq: witness.seq, hash: witness.hash, time: witness.time };
      if (!macMatches(macKey, 'checkpoint', canonicalJson(head), witness.mac)) {
        failures.push({
          instance,
          source: witness.source,
          line: 0,
          reason: 'checkpoint MAC does not match: it was not written by this deployment',
        });
        continue;
      }
    }
    const list = byInstance.get(instance) ?? [];
    list.push({ ...witness, instance });
    byInstance.set(instance, list);
  }
  return byInstance;
}
