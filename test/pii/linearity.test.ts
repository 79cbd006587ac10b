import { describe, expect, it } from 'vitest';
import { redact } from '../../src/pii/index.js';
import { ADVERSARIAL_INPUTS, ADVERSARIAL_SIZE } from './adversarial.js';

/**
 * No timing assertion (speed is measured in bench/pii.ts): a detector with catastrophic
 * backtracking or a quadratic rescan would not finish 1 MB within vitest's timeout. Each case
 * also checks that the output is sane: offsets inside the input, non-overlapping, and the
 * redacted text is exactly the input with the findings replaced.
 */
describe('1 MB adversarial inputs complete and give sane results', () => {
  it.each(ADVERSARIAL_INPUTS.map((c) => [c.name, c.make] as const))('%s', (_name, make) => {
    const text = make();
    expect(text.length).toBeGreaterThanOrEqual(ADVERSARIAL_SIZE - 16);
    const result = redact(text);
    // Plain checks in the loop (tens of thousands of findings), one assertion at the end.
    let last = 0;
    let rebuilt = '';
    const broken: string[] = [];
    for (const f of result.findings) {
      if (f.start < last || f.end <= f.start || f.end > text.length) broken.push(`${f.type} ${f.start}-${f.end}`);
      rebuilt += text.slice(last, f.start) + `[REDACTED:${f.type}]`;
      last = f.end;
    }
    expect(broken).toEqual([]);
    expect(result.text).toBe(rebuilt + text.slice(last));
  });

  it('a run of letters ending in @example.com is one bounded address, not the whole run', () => {
    const text = ADVERSARIAL_INPUTS.find((c) => c.name === 'local-part run then @')!.make();
    expect(redact(text).findings).toEqual([]); // local part longer than 64: not an address
  });

  it('nothing is found in runs that contain no PII', () => {
    for (const name of ['digits', "'@' run", 'dots', 'colons', 'keyword run', 'dotted digits']) {
      const text = ADVERSARIAL_INPUTS.find((c) => c.name === name)!.make();
      expect(redact(text).findings, name).toEqual([]);
    }
  });
});
