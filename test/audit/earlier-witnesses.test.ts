// verify checks every (believed) witness of an instance against its chain, not only the latest: a
// log deleted and restarted under the same instance id contradicts the older checkpoints once it
// grows past them, and must not verify as "tail witnessed".
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readCheckpointFile } from '../../src/audit/checkpoints.js';
import type { InstanceChain } from '../../src/audit/sources.js';
import { collectFileChains } from '../../src/audit/sources.js';
import { verifyChain, verifyChains, type ChainWitness } from '../../src/audit/verify.js';
import { AuditWriter } from '../../src/audit/writer.js';
import { checkpoint, drafts, failureOf, KEY, link, OTHER_KEY, segment } from './chain-kit.js';
import { tempDir } from './helpers.js';

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

const chainOf = (n: number, extra = {}): InstanceChain => ({
  instance: 'a',
  segments: [segment('s', link('a', drafts(1, n, extra)))],
});
const headOf = (seq: number, extra = {}) => link('a', drafts(1, seq, extra))[seq - 1]!.hash;

describe('earlier witnesses', () => {
  it('a log deleted and restarted under the same instance id fails at the first checkpoint it contradicts', async () => {
    const temp = tempDir();
    cleanup = temp.cleanup;
    const file = join(temp.dir, 'audit.jsonl');
    const checkpoints = join(temp.dir, 'cp.jsonl');
    const writeLog = async (count: number) => {
      const writer = await AuditWriter.open({
        file,
        instanceId: 'node-a',
        macKey: KEY,
        checkpoint: { file: checkpoints, every: 5 },
      });
      for (let i = 0; i < count; i++) writer.append({ type: 'command', command: 'view', outcome: 'ok' });
      await writer.close();
    };
    await writeLog(10); // seq 1-11, checkpointed at 5, 10 and 11
    rmSync(file);
    await writeLog(30); // a new chain, seq 1-31, past every old checkpoint
    const witnesses = await readCheckpointFile(checkpoints);
    const report = await verifyChains(await collectFileChains([file]), { macKey: KEY, witnesses });
    expect(report.ok).toBe(false);
    expect(report.failures).toEqual([
      expect.objectContaining({
        instance: 'node-a',
        seq: 5,
        reason: expect.stringContaining(`${witnesses[0]!.source} witnessed at seq 5: the chain was rewritten`),
      }),
    ]);
  });

  it('an earlier checkpoint with another hash fails even when the latest agrees', async () => {
    const chain = chainOf(6);
    const other = headOf(3, { command: 'create' });
    expect(other).not.toBe(headOf(3));
    const failure = await failureOf(chain, {
      witnesses: [checkpoint('a', 3, other), checkpoint('a', 6, headOf(6))],
    });
    expect(failure).toMatchObject({ seq: 3, reason: expect.stringContaining('witnessed at seq 3') });
  });

  it('agreeing checkpoints all pass; the chain is witnessed through the latest', async () => {
    const { summary, failure } = await verifyChain(chainOf(6), {
      macKey: KEY,
      witnesses: [checkpoint('a', 6, headOf(6)), checkpoint('a', 2, headOf(2)), checkpoint('a', 4, headOf(4))],
    });
    expect(failure).toBeUndefined();
    expect(summary.witnessedThrough).toMatchObject({ seq: 6, source: 'checkpoint a 6' });
  });

  it('a checkpoint whose MAC does not match is refused and not compared', async () => {
    const forged = checkpoint('a', 3, headOf(3, { command: 'create' }), OTHER_KEY);
    const report = await verifyChains(
      { chains: [chainOf(6)], unreadable: [], duplicates: [], totalBytes: 0 },
      { macKey: KEY, witnesses: [forged, checkpoint('a', 6, headOf(6))] },
    );
    expect(report.failures).toEqual([
      expect.objectContaining({ reason: expect.stringContaining('checkpoint MAC does not match') }),
    ]);
  });

  it('the latest witness beyond the chain’s end is still a cut tail', async () => {
    const witnesses: ChainWitness[] = [checkpoint('a', 2, headOf(2)), checkpoint('a', 9, 'f'.repeat(64))];
    const failure = await failureOf(chainOf(5), { witnesses });
    expect(failure.reason).toContain('4 record(s) were cut off the end');
  });
});
