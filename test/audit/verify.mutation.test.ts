/**
 * verify at every rule: chains built record by record in memory (hashes and MACs as the
 * writer makes them), each broken in one way, and the exact failure verify reports: where (source,
 * line), which seq it read and expected, and the reason an operator reads. Also the summaries
 * and totals; the witnesses are in witnesses.mutation.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { recordHash } from '../../src/audit/chain.js';
import type { AuditRecord } from '../../src/audit/record.js';
import type { InstanceChain, SegmentSource } from '../../src/audit/sources.js';
import { verifyChain, verifyChains } from '../../src/audit/verify.js';
import { drafts, failureOf, KEY, link, OTHER_KEY, segment, timeOf, twoSegments } from './chain-kit.js';

describe('an intact chain', () => {
  it('verifies, and its summary counts segments, records, times and MACs', async () => {
    const { chain } = twoSegments(3, 6);
    expect(await verifyChain(chain, { macKey: KEY })).toEqual({
      summary: {
        instance: 'a',
        segments: 2,
        records: 6,
        lastSeq: 6,
        firstTime: timeOf(1),
        lastTime: timeOf(6),
        authenticatedFrom: 1,
        macsUnchecked: 0,
      },
    });
    expect((await verifyChain(chain)).summary).toMatchObject({ macsUnchecked: 6, authenticatedFrom: 1 });
  });

  it('legacy v1 records before authenticated ones: authenticated from the first v2 record', async () => {
    const records = link('a', drafts(1, 5), { v1Until: 2 });
    const { summary, failure } = await verifyChain(
      { instance: 'a', segments: [segment('s', records)] },
      { macKey: KEY },
    );
    expect(failure).toBeUndefined();
    expect(summary).toMatchObject({ records: 5, authenticatedFrom: 3, macsUnchecked: 0 });
  });

  it('records with the same time are in order', async () => {
    const records = link('a', drafts(1, 3, { time: timeOf(1) }));
    expect((await verifyChain({ instance: 'a', segments: [segment('s', records)] })).failure).toBeUndefined();
  });

  it('an empty chain verifies with the key (nothing to authenticate)', async () => {
    expect(await verifyChain({ instance: 'a', segments: [] }, { macKey: KEY })).toEqual({
      summary: { instance: 'a', segments: 0, records: 0, lastSeq: 0, macsUnchecked: 0 },
    });
  });
});

describe('each break, where it is and why', () => {
  const single = (records: Array<AuditRecord | string>, options: Partial<SegmentSource> = {}): InstanceChain => ({
    instance: 'a',
    segments: [segment('s', records, options)],
  });

  it('an unreadable line', async () => {
    const records = link('a', drafts(1, 2));
    expect(await failureOf(single([records[0]!, '{not json']))).toEqual({
      instance: 'a',
      source: 's',
      line: 2,
      expectedSeq: 2,
      reason: 'unreadable record: not valid JSON',
    });
  });

  it("another instance's record", async () => {
    const records = [...link('a', drafts(1, 1)), ...link('b', drafts(2, 2))];
    expect(await failureOf(single(records))).toEqual({
      instance: 'a',
      source: 's',
      line: 2,
      seq: 2,
      expectedSeq: 2,
      reason: "record of instance b in this instance's chain",
    });
  });

  it('records missing, counted; a record repeated or out of order', async () => {
    const records = link('a', drafts(1, 6));
    expect(await failureOf(single([records[0]!, records[3]!]))).toEqual({
      instance: 'a',
      source: 's',
      line: 2,
      seq: 4,
      expectedSeq: 2,
      reason: 'seq 4 where 2 was expected: 2 record(s) missing before this one',
    });
    expect(await failureOf(single([records[0]!, records[1]!, records[1]!]))).toMatchObject({
      line: 3,
      seq: 2,
      expectedSeq: 3,
      reason: 'seq 2 where 3 was expected: record out of order or duplicated',
    });
  });

  it('a replaced record: its successor no longer links to it', async () => {
    const records = link('a', drafts(1, 3));
    const replaced = link('a', [{ seq: 1, outcome: 'error' }]);
    expect(await failureOf(single([replaced[0]!, records[1]!, records[2]!]))).toEqual({
      instance: 'a',
      source: 's',
      line: 2,
      seq: 2,
      expectedSeq: 2,
      reason: 'prevHash does not match the previous record: a record before it was replaced or inserted',
    });
  });

  it('an edited record', async () => {
    const records = link('a', drafts(1, 2));
    expect(await failureOf(single([records[0]!, { ...records[1]!, bytesRead: 5 }]))).toEqual({
      instance: 'a',
      source: 's',
      line: 2,
      seq: 2,
      expectedSeq: 2,
      reason: "hash does not match the record's content: the record was edited",
    });
  });

  it('a MAC under another key, checked only when the key is given', async () => {
    const records = link('a', drafts(1, 3), { key: OTHER_KEY });
    expect(await failureOf(single(records), { macKey: KEY })).toEqual({
      instance: 'a',
      source: 's',
      line: 1,
      seq: 1,
      expectedSeq: 1,
      reason:
        "MAC does not match: the record was not written by this deployment's audit writer (forged, or another key)",
    });
    expect((await verifyChain(single(records))).failure).toBeUndefined();
  });

  it('a record without MAC after authenticated ones is a downgrade, with or without the key', async () => {
    const v2 = link('a', drafts(1, 2));
    const v1 = link('a', drafts(1, 3), { v1Until: 3 });
    // Record 3 as v1, linked to the v2 record 2.
    const downgraded = { ...v1[2]!, prevHash: v2[1]!.hash };
    const relinked = { ...downgraded, hash: recordHash({ ...downgraded } as unknown as Record<string, unknown>) };
    for (const options of [{}, { macKey: KEY }]) {
      expect(await failureOf(single([...v2, relinked]), options)).toEqual({
        instance: 'a',
        source: 's',
        line: 3,
        seq: 3,
        expectedSeq: 3,
        reason: 'a record without MAC follows authenticated records: forged or downgraded',
      });
    }
  });

  it('a chain with no authenticated record fails with the key, at the last segment', async () => {
    const records = link('a', drafts(1, 2), { v1Until: 2 });
    expect(
      await failureOf(
        { instance: 'a', segments: [segment('first', records.slice(0, 1)), segment('last', records.slice(1))] },
        { macKey: KEY },
      ),
    ).toEqual({
      instance: 'a',
      source: 'last',
      line: 0,
      expectedSeq: 3,
      reason:
        'none of the records is authenticated (no MAC): the chain was written without the audit key, or rewritten',
    });
    expect((await verifyChain({ instance: 'a', segments: [segment('s', records)] })).failure).toBeUndefined();
  });

  it('time going backwards', async () => {
    const records = link('a', [{ seq: 1 }, { seq: 2, time: timeOf(0) }]);
    expect(await failureOf(single(records))).toEqual({
      instance: 'a',
      source: 's',
      line: 2,
      seq: 2,
      expectedSeq: 2,
      reason: 'time goes backwards',
    });
  });

  it('a store segment whose key names another first seq', async () => {
    const { records } = twoSegments(2, 5);
    const chain: InstanceChain = {
      instance: 'a',
      segments: [
        segment('seg-1', records.slice(0, 3), { sealed: true, index: 1, keyFirstSeq: 1 }),
        segment('k/4', records.slice(3), { keyFirstSeq: 5 }),
      ],
    };
    expect(await failureOf(chain)).toEqual({
      instance: 'a',
      source: 'k/4',
      line: 1,
      seq: 4,
      expectedSeq: 4,
      reason: 'segment stored under first seq 5 starts at seq 4',
    });
    chain.segments[1] = segment('k/4', records.slice(3), { keyFirstSeq: 4 });
    expect((await verifyChain(chain)).failure).toBeUndefined();
  });

  it('seal records must describe their segment: first seq, record count, segment number', async () => {
    const bad = async (summary: { index: number; firstSeq: number; records: number }, index = 1) => {
      const records = link('a', [...drafts(1, 2), { seq: 3, type: 'seal', segment: summary }]);
      return failureOf(single(records, { sealed: true, index }));
    };
    const expected = { instance: 'a', source: 's', line: 3, seq: 3, expectedSeq: 3 };
    expect(await bad({ index: 1, firstSeq: 2, records: 2 })).toEqual({
      ...expected,
      reason: "seal record does not describe its segment's records",
    });
    expect(await bad({ index: 1, firstSeq: 1, records: 3 })).toEqual({
      ...expected,
      reason: "seal record does not describe its segment's records",
    });
    expect(await bad({ index: 2, firstSeq: 1, records: 2 })).toEqual({
      ...expected,
      reason: 'seal record is for segment 2, found in the file of segment 1',
    });
    const missing = link('a', [...drafts(1, 2), { seq: 3, type: 'seal' }]);
    expect(await failureOf(single(missing, { sealed: true }))).toMatchObject({
      line: 3,
      reason: "seal record does not describe its segment's records",
    });
    // Without a number from the file name, any index is accepted.
    const unnumbered = link('a', [
      ...drafts(1, 2),
      { seq: 3, type: 'seal', segment: { index: 9, firstSeq: 1, records: 2 } },
    ]);
    expect((await verifyChain(single(unnumbered, { sealed: true }))).failure).toBeUndefined();
  });

  it('a record after the seal, and a sealed segment without its seal', async () => {
    const records = link('a', [
      ...drafts(1, 2),
      { seq: 3, type: 'seal', segment: { index: 1, firstSeq: 1, records: 2 } },
      { seq: 4 },
    ]);
    expect(await failureOf(single(records, { sealed: true, index: 1 }))).toEqual({
      instance: 'a',
      source: 's',
      line: 4,
      expectedSeq: 4,
      reason: 'a record follows the seal record of its segment',
    });
    expect(await failureOf(single(records.slice(0, 2), { sealed: true, index: 1 }))).toEqual({
      instance: 'a',
      source: 's',
      line: 3,
      expectedSeq: 3,
      reason: 'sealed segment ends without its seal record: it was truncated',
    });
  });
});

describe('verifyChains totals and unreadable sources', () => {
  it('sums segments and records, takes the earliest and latest time over every chain, lists unreadable sources first', async () => {
    // Chain 'late' comes first but holds the later times.
    const late: InstanceChain = {
      instance: 'late',
      segments: [
        segment(
          'l',
          link(
            'late',
            drafts(1, 3).map((d) => ({ ...d, time: timeOf(d.seq + 9) })),
          ),
        ),
      ],
    };
    const early: InstanceChain = {
      instance: 'early',
      segments: [segment('e1', link('early', drafts(1, 2))), segment('e2', link('early', drafts(1, 3)).slice(2))],
    };
    const report = await verifyChains({
      chains: [late, early],
      unreadable: [{ name: 'junk.jsonl', line: 1, reason: 'not a record' }],
      duplicates: [],
      totalBytes: 0,
    });
    expect(report.failures).toEqual([{ source: 'junk.jsonl', line: 1, reason: 'not a record' }]);
    expect(report.ok).toBe(false);
    expect(report.totals).toEqual({
      instances: 2,
      segments: 3,
      records: 6,
      firstTime: timeOf(1),
      lastTime: timeOf(12),
    });
    const clean = await verifyChains({ chains: [late, early], unreadable: [], duplicates: [], totalBytes: 0 });
    expect(clean.ok).toBe(true);
    expect(clean.failures).toEqual([]);
  });

  it('no records: no times in the totals, not even as undefined', async () => {
    const empty: InstanceChain = { instance: 'e', segments: [segment('e', [])] };
    for (const chains of [[], [empty]]) {
      const { totals } = await verifyChains({ chains, unreadable: [], duplicates: [], totalBytes: 0 });
      expect(totals).toStrictEqual({ instances: chains.length, segments: chains.length, records: 0 });
    }
  });

  it("a chain without records beside one with records: the times are the latter's", async () => {
    const empty: InstanceChain = { instance: 'e', segments: [segment('e', [])] };
    const full: InstanceChain = { instance: 'f', segments: [segment('f', link('f', drafts(1, 3)))] };
    for (const chains of [
      [empty, full],
      [full, empty],
    ]) {
      const { totals } = await verifyChains({ chains, unreadable: [], duplicates: [], totalBytes: 0 });
      expect(totals).toStrictEqual({
        instances: 2,
        segments: 2,
        records: 3,
        firstTime: timeOf(1),
        lastTime: timeOf(3),
      });
    }
  });

  it('one failure per chain, the first; the other chains are still verified', async () => {
    const broken: InstanceChain = { instance: 'x', segments: [segment('x', ['{', '{'])] };
    const fine: InstanceChain = { instance: 'y', segments: [segment('y', link('y', drafts(1, 2)))] };
    const report = await verifyChains({ chains: [broken, fine], unreadable: [], duplicates: [], totalBytes: 0 });
    expect(report.failures).toHaveLength(1);
    expect(report.failures[0]).toMatchObject({ instance: 'x', line: 1 });
    expect(report.chains.map((c) => [c.instance, c.records])).toEqual([
      ['x', 0],
      ['y', 2],
    ]);
  });
});
