import { describe, expect, it } from 'vitest';
import { conformanceMismatches, runConformance, seedConformance, viaToolRunner } from '../kit/conformance.js';
import { memoryVault } from '../kit/vault.js';

describe('the conformance conversation', () => {
  it('is answered with the protocol text by the handlers toolRunner calls', async () => {
    const { vault } = await memoryVault();
    await seedConformance(vault, 'user-c');
    const outcomes = await runConformance(viaToolRunner(vault, 'user-c'));
    expect(conformanceMismatches(outcomes)).toEqual([]);
    await vault.close();
  });
});
