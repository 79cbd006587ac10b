/**
 * The edit scan window bounded by blank lines (paragraphWindow in src/pii/edit.ts): what an edit
 * stores must be what a scan of the whole file after the edit finds around the change, never less
 * (a value that reads the change, across lines too) and never more (no artefact of the cut).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { changedSpan, CONTEXT_AFTER, CONTEXT_BEFORE, redactEdit } from '../../src/pii/edit.js';
import { scan } from '../../src/pii/engine.js';

// Fragments that make values, half-values, labels and the separators around them.
const FRAGMENTS = [
  'jane.roe@example.com',
  'jane.roe',
  '@example.com',
  'Phone:',
  '+49 30 1234567',
  '030 12345678',
  '4111 1111 1111 1111',
  '4111 1111',
  'IBAN',
  'DE89 3704 0044 0532 0130 00',
  'SSN',
  '078-05-1123',
  '078051121',
  'password:',
  'Tr0ut&Pine2023',
  'api_key =',
  'AKIAIOSFODNN7ABCDEFG',
  'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzKEYAB12cd',
  'ghp_R8x2Lm4Nq7Vt1Bz9Kc3Hw6Jy5Pd0Fs2Ga8Ue',
  'ip 8.8.4.4',
  'order #636521579',
  'the quote on Tuesday',
  ' ',
  ' ',
  '\n',
  '\n',
  '\n\n',
  '\n\n',
  ': ',
  '-',
  'x'.repeat(90),
  'word '.repeat(40),
];

const text = fc.array(fc.constantFrom(...FRAGMENTS), { minLength: 1, maxLength: 60 }).map((parts) => parts.join(''));
const key = (f: { type: string; start: number; end: number }) => `${f.type}:${f.start}:${f.end}`;

function checkEdit(before: string, after: string): void {
  const result = redactEdit(before, after);
  const whole = scan(after).findings;
  const span = changedSpan(before, after);
  const wholeKeys = new Set(whole.map(key));
  // Never more: every finding of the window is a finding of the whole file.
  for (const f of result.findings) expect(wholeKeys.has(key(f)), `${key(f)} in ${JSON.stringify(after)}`).toBe(true);
  // Never less: every finding of the whole file that touches the change, or whose context may read it, is there.
  const got = new Set(result.findings.map(key));
  for (const f of whole) {
    if (f.end + CONTEXT_AFTER < span.start || f.start > span.afterEnd + CONTEXT_BEFORE) continue;
    expect(got.has(key(f)), `${key(f)} missed in ${JSON.stringify(after)}`).toBe(true);
  }
}

describe('edit scan window bounded by blank lines', () => {
  it('agrees with a scan of the whole file after the edit (insertions, deletions, replacements)', () => {
    fc.assert(
      fc.property(text, fc.constantFrom(...FRAGMENTS), fc.nat(), fc.nat(), fc.nat(40), (base, piece, a, b, cut) => {
        const at = a % (base.length + 1);
        const end = Math.min(base.length, at + cut);
        const inserted = base.slice(0, at) + piece + base.slice(at);
        checkEdit(base, inserted);
        checkEdit(inserted, base);
        checkEdit(base, base.slice(0, at) + piece + base.slice(end));
        const other = b % (base.length + 1);
        checkEdit(base, base.slice(0, other) + base.slice(Math.min(base.length, other + cut)));
      }),
      { numRuns: 400, seed: 12 },
    );
  });

  it('a label before a blank line and its value after it: context that crosses paragraphs is read', () => {
    const filler = 'Notes about the week.\n'.repeat(40);
    const before = `${filler}\nSSN\n\n078-05-1123 was on the form\n\n${filler}`;
    const after = before.replace('078-05-1123', '078 05 1123');
    expect(redactEdit(before, after).findings.map((f) => after.slice(f.start, f.end))).toEqual(['078 05 1123']);
    checkEdit(before, after);
  });

  it('findings far from the change in other paragraphs are left to the scan that stored them', () => {
    const far = 'Mail jane.roe@example.com\n\n' + 'filler text\n'.repeat(100) + '\n';
    const before = `${far}Call Jane back.\n\n${'more filler\n'.repeat(100)}`;
    const after = before.replace('Call Jane back.', 'Call Jane back on +49 30 1234567.');
    const found = redactEdit(before, after).findings.map((f) => after.slice(f.start, f.end));
    expect(found).toEqual(['+49 30 1234567']);
    checkEdit(before, after);
  });

  it('a private key block, which may hold blank lines, is scanned whole (the margin rule)', () => {
    const body = 'MIIEowIBAAKCAQEA7V1uQ3m9Jv2yXo8bZ0qR5tP8wL3kN6sH1dF4gA9cE2jB7iK0\n'.repeat(4);
    const before = `intro\n\n-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0123\n\n${body}\n\n${'x\n'.repeat(300)}`;
    const after = before.replace('-----BEGIN RSA PRIVATE KEY-----\n', '-----BEGIN RSA PRIVATE KEY-----\n') + '-----END RSA PRIVATE KEY-----\n';
    const result = redactEdit(before, after);
    expect(result.findings.some((f) => f.type === 'SECRET' && after.slice(f.start, f.end).startsWith('-----BEGIN'))).toBe(true);
    checkEdit(before, after);
  });
});
