/**
 * Audit chains built record by record in memory, hashes and MACs as the writer makes them, for the
 * tests that hold verify to each of its rules (verify.mutation, witnesses.mutation).
 */
import { expect } from 'vitest';
import { auditMac, canonicalJson, GENESIS_HASH, recordHash } from '../../src/audit/chain.js';
import type { AuditRecord } from '../../src/audit/record.js';
import type { InstanceChain, SegmentSource } from '../../src/audit/sources.js';
import { verifyChain, type ChainWitness } from '../../src/audit/verify.js';

export const KEY = new Uint8Array(32).fill(7);
export const OTHER_KEY = new Uint8Array(32).fill(8);
const T0 = Date.UTC(2026, 0, 1);
export const timeOf = (seq: number) => new Date(T0 + seq * 1000).toISOString();

export type Draft = Partial<AuditRecord> & { seq: number };

/** Links drafts into a chain: prevHash, hash and (v2) MAC, as the writer computes them. */
export function link(
  instance: string,
  drafts: Draft[],
  options: { key?: Uint8Array; v1Until?: number } = {},
): AuditRecord[] {
  let prev = GENESIS_HASH;
  return drafts.map((draft) => {
    const v = options.v1Until !== undefined && draft.seq <= options.v1Until ? 1 : 2;
    const base = { v, time: timeOf(draft.seq), type: 'command', instance, prevHash: prev, ...draft } as Omit<
      AuditRecord,
      'hash'
    >;
    const hash = recordHash(base as unknown as Record<string, unknown>);
    const record = {
      ...base,
      hash,
      ...(v === 2 ? { mac: auditMac(options.key ?? KEY, 'record', hash) } : {}),
    } as AuditRecord;
    prev = hash;
    return record;
  });
}

export const drafts = (from: number, to: number, extra: Partial<AuditRecord> = {}): Draft[] =>
  Array.from({ length: to - from + 1 }, (_, i) => ({ seq: from + i, ...extra }));

export function segment(
  name: string,
  records: Array<AuditRecord | string>,
  options: Partial<SegmentSource> = {},
): SegmentSource {
  const lines = records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r)));
  return {
    name,
    sealed: false,
    firstSeq: 1,
    size: lines.join('\n').length,
    async *lines() {
      for (let i = 0; i < lines.length; i++) yield { lineNumber: i + 1, line: lines[i]!, bytes: 0 };
    },
    ...options,
  } as SegmentSource;
}

/** Records 1..n of instance 'a' in two segments: 1..k sealed (with its seal record k+1), the rest active. */
export function twoSegments(
  k: number,
  n: number,
  options: { key?: Uint8Array } = {},
): { chain: InstanceChain; records: AuditRecord[] } {
  const all = link(
    'a',
    [
      ...drafts(1, k),
      { seq: k + 1, type: 'seal', segment: { index: 1, firstSeq: 1, records: k } },
      ...drafts(k + 2, n),
    ],
    options,
  );
  return {
    records: all,
    chain: {
      instance: 'a',
      segments: [
        segment('seg-1', all.slice(0, k + 1), { sealed: true, index: 1 }),
        segment('active', all.slice(k + 1), { firstSeq: k + 2 }),
      ],
    },
  };
}

export async function failureOf(chain: InstanceChain, options: Parameters<typeof verifyChain>[1] = {}) {
  const { failure } = await verifyChain(chain, options);
  expect(failure).toBeDefined();
  return failure!;
}

/** A checkpoint line as the writer makes it: the head, and its MAC under `key`. */
export function checkpoint(instance: string, seq: number, hash: string, key = KEY): ChainWitness {
  const head = { instance, seq, hash, time: timeOf(seq) };
  return { ...head, mac: auditMac(key, 'checkpoint', canonicalJson(head)), source: `checkpoint ${instance} ${seq}` };
}
