/**
 * verify's witnesses: checkpoints and --expect-head, how much of a
 * chain each proves, and which are refused: a checkpoint whose MAC does not match, and one that
 * carries no MAC but witnesses an authenticated record (a cut tail passed off as witnessed).
 */
import { describe, expect, it } from 'vitest';
import { parseExpectedHead } from '../../src/audit/checkpoints.js';
import type { InstanceChain } from '../../src/audit/sources.js';
import { verifyChain, verifyChains, type ChainWitness } from '../../src/audit/verify.js';
import { checkpoint, drafts, failureOf, KEY, link, OTHER_KEY, segment, timeOf } from './chain-kit.js';

describe('witnesses: how much of the chain is proven', () => {
  const chainOf = (n: number): InstanceChain => ({ instance: 'a', segments: [segment('s', link('a', drafts(1, n)))] });
  /** The hash of record `seq` of chainOf(n), for any n >= seq (the chain is deterministic). */
  const headOf = (seq: number) => link('a', drafts(1, seq))[seq - 1]!.hash;

  it('a chain that reaches the witness is witnessed through it', async () => {
    const chain = chainOf(5);
    const witness: ChainWitness = { ...checkpoint('a', 3, headOf(3)), source: 'checkpoint x line 1' };
    expect((await verifyChain(chain, { witness })).summary.witnessedThrough).toEqual({
      seq: 3,
      time: timeOf(3),
      source: 'checkpoint x line 1',
    });
    expect(
      (
        await verifyChain(chain, {
          witness: { seq: 5, hash: headOf(5), source: '--expect-head', givenByOperator: true },
        })
      ).summary.witnessedThrough,
    ).toEqual({
      seq: 5,
      source: '--expect-head',
    });
  });

  it('a chain that ends before the witness was cut: how many records, with or without the time', async () => {
    const chain = chainOf(3);
    expect(
      await failureOf(chain, { witness: { seq: 5, hash: 'f'.repeat(64), time: timeOf(5), source: 'checkpoint c' } }),
    ).toEqual({
      instance: 'a',
      source: 's',
      line: 0,
      expectedSeq: 4,
      reason: `the chain ends at seq 3, but checkpoint c witnessed seq 5 (${timeOf(5)}): 2 record(s) were cut off the end`,
    });
    expect(
      (
        await failureOf(chain, {
          witness: { seq: 4, hash: 'f'.repeat(64), source: '--expect-head', givenByOperator: true },
        })
      ).reason,
    ).toBe('the chain ends at seq 3, but --expect-head witnessed seq 4: 1 record(s) were cut off the end');
  });

  it('a record that differs from the witnessed one: the chain was rewritten', async () => {
    const chain = chainOf(4);
    expect(
      await failureOf(chain, {
        witness: { seq: 2, hash: 'e'.repeat(64), source: '--expect-head', givenByOperator: true },
      }),
    ).toEqual({
      instance: 'a',
      source: 's',
      line: 2,
      seq: 2,
      expectedSeq: 2,
      reason: 'the record differs from the one --expect-head witnessed at seq 2: the chain was rewritten',
    });
  });

  it('verifyChains: the latest witness per instance; a checkpoint MAC is checked with the key; a chain gone whole is reported', async () => {
    const a = chainOf(4);
    const b: InstanceChain = { instance: 'b', segments: [segment('sb', link('b', drafts(1, 2)))] };
    const report = await verifyChains(
      { chains: [a, b], unreadable: [], duplicates: [], totalBytes: 0 },
      {
        macKey: KEY,
        witnesses: [
          checkpoint('a', 2, headOf(2)),
          checkpoint('a', 4, headOf(4)),
          checkpoint('a', 3, headOf(3)),
          checkpoint('c', 7, 'd'.repeat(64)),
        ],
      },
    );
    expect(report.chains.map((c) => c.witnessedThrough)).toEqual([
      { seq: 4, time: timeOf(4), source: 'checkpoint a 4' },
      undefined,
    ]);
    expect(report.failures).toEqual([
      {
        instance: 'c',
        source: 'checkpoint c 7',
        line: 0,
        reason: 'a witness records seq 7 of instance c, but none of its records are here: the whole chain was removed',
      },
    ]);
    expect(report.ok).toBe(false);

    const forged = await verifyChains(
      { chains: [a], unreadable: [], duplicates: [], totalBytes: 0 },
      { macKey: KEY, witnesses: [checkpoint('a', 4, headOf(4), OTHER_KEY)] },
    );
    expect(forged.failures).toEqual([
      {
        instance: 'a',
        source: 'checkpoint a 4',
        line: 0,
        reason: 'checkpoint MAC does not match: it was not written by this deployment',
      },
    ]);
    expect(forged.chains[0]!.witnessedThrough).toBeUndefined();
    // Without the key a checkpoint's MAC cannot be checked; its head still is.
    const unkeyed = await verifyChains(
      { chains: [a], unreadable: [], duplicates: [], totalBytes: 0 },
      { witnesses: [checkpoint('a', 4, headOf(4), OTHER_KEY)] },
    );
    expect(unkeyed.ok).toBe(true);
    expect(unkeyed.chains[0]!.witnessedThrough).toMatchObject({ seq: 4 });
  });

  it('with the key, a witness without a MAC (--expect-head) is used as it is; of two at the same seq the first counts', async () => {
    const a = chainOf(3);
    const report = await verifyChains(
      { chains: [a], unreadable: [], duplicates: [], totalBytes: 0 },
      {
        macKey: KEY,
        witnesses: [
          { instance: 'a', seq: 3, hash: headOf(3), source: '--expect-head', givenByOperator: true },
          { instance: 'a', seq: 3, hash: headOf(3), source: 'checkpoint later' },
        ],
      },
    );
    expect(report.ok).toBe(true);
    expect(report.chains[0]!.witnessedThrough).toEqual({ seq: 3, source: '--expect-head' });
  });

  it('a checkpoint without a MAC at an authenticated record is refused, with the key or without: a cut tail is not witnessed', async () => {
    const cut = chainOf(3); // records 4 and 5 cut off, the checkpoint file replaced by one naming seq 3
    const stripped: ChainWitness = {
      instance: 'a',
      seq: 3,
      hash: headOf(3),
      time: timeOf(3),
      source: 'checkpoint cp line 1',
    };
    for (const options of [{ macKey: KEY }, {}]) {
      const report = await verifyChains(
        { chains: [cut], unreadable: [], duplicates: [], totalBytes: 0 },
        { ...options, witnesses: [stripped] },
      );
      expect(report.ok).toBe(false);
      expect(report.failures).toEqual([
        {
          instance: 'a',
          source: 's',
          line: 3,
          seq: 3,
          expectedSeq: 3,
          reason:
            'checkpoint cp line 1 carries no MAC but witnesses an authenticated record: the checkpoint was forged or its MAC stripped',
        },
      ]);
      expect(report.chains[0]!.witnessedThrough).toBeUndefined();
    }
    // The same head with its MAC witnesses the chain.
    const signed = await verifyChains(
      { chains: [cut], unreadable: [], duplicates: [], totalBytes: 0 },
      { macKey: KEY, witnesses: [checkpoint('a', 3, headOf(3))] },
    );
    expect(signed.ok).toBe(true);
    expect(signed.chains[0]!.witnessedThrough).toMatchObject({ seq: 3 });
  });

  it('a checkpoint without a MAC witnesses a legacy record (v1, before the first authenticated one), and no further', async () => {
    const legacy = link('a', drafts(1, 5), { v1Until: 2 });
    const chain: InstanceChain = { instance: 'a', segments: [segment('s', legacy)] };
    const unsigned = (seq: number): ChainWitness => ({
      instance: 'a',
      seq,
      hash: legacy[seq - 1]!.hash,
      source: `checkpoint v1 ${seq}`,
    });
    const atLegacy = await verifyChain(chain, { macKey: KEY, witness: unsigned(2) });
    expect(atLegacy.failure).toBeUndefined();
    expect(atLegacy.summary.witnessedThrough).toEqual({ seq: 2, source: 'checkpoint v1 2' });
    expect((await failureOf(chain, { macKey: KEY, witness: unsigned(3) })).reason).toBe(
      'checkpoint v1 3 carries no MAC but witnesses an authenticated record: the checkpoint was forged or its MAC stripped',
    );
  });

  it('an operator head carries no MAC and is trusted as given, at any record', async () => {
    const head = parseExpectedHead(`a:4:${headOf(4)}`)!;
    expect(head).toEqual({ instance: 'a', seq: 4, hash: headOf(4), source: '--expect-head', givenByOperator: true });
    const { summary, failure } = await verifyChain(chainOf(4), { macKey: KEY, witness: head });
    expect(failure).toBeUndefined();
    expect(summary.witnessedThrough).toEqual({ seq: 4, source: '--expect-head' });
  });

  it('a witness naming no instance applies to the only chain, and is refused when there are several', async () => {
    const a = chainOf(3);
    const only = await verifyChains(
      { chains: [a], unreadable: [], duplicates: [], totalBytes: 0 },
      { witnesses: [{ seq: 3, hash: headOf(3), source: '--expect-head', givenByOperator: true }] },
    );
    expect(only.ok).toBe(true);
    expect(only.chains[0]!.witnessedThrough).toEqual({ seq: 3, source: '--expect-head' });
    const b: InstanceChain = { instance: 'b', segments: [segment('sb', link('b', drafts(1, 1)))] };
    const several = await verifyChains(
      { chains: [a, b], unreadable: [], duplicates: [], totalBytes: 0 },
      { witnesses: [{ seq: 3, hash: headOf(3), source: '--expect-head', givenByOperator: true }] },
    );
    expect(several.failures).toEqual([
      {
        source: '--expect-head',
        line: 0,
        reason: 'the witness names no instance and there are several chains: give INSTANCE:SEQ:HASH',
      },
    ]);
  });
});
