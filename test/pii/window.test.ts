/**
 * The edit scan window bounded by line breaks (lineWindow in src/pii/edit.ts): what an edit
 * stores must be what a scan of the whole file after the edit finds around the change, never less
 * (a value that reads the change, across lines too) and never more (no artefact of the cut).
 * Texts with blank lines, and texts with none (a note written as one block of lines, values
 * wrapped over a line break, lines that start with digits, long lines).
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
  'john at gmail.com',
  'jane [at] example [dot] com',
  ' at ',
  ' dot com',
  '07805-1121',
  'CA ',
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

// No blank lines: single line breaks only, values wrapped over one, digit runs over several, lines
// that open with digits, and lines long enough for the window to cut.
const FLAT_FRAGMENTS = [
  ...FRAGMENTS.filter((f) => f !== '\n\n'),
  '4111 1111\n1111 1111',
  '4111\n1111\n1111\n1111',
  '1234\n',
  '\n5678 ',
  'DE89 3704\n0044 0532 0130 00',
  'DE89\n3704\n0044\n0532\n0130\n00',
  '\r\n',
  '- ',
  'Notes about the week and the plans for it. '.repeat(8),
];
const flatText = fc
  .array(fc.constantFrom(...FLAT_FRAGMENTS), { minLength: 1, maxLength: 120 })
  .map((parts) => parts.join(''));
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
  // Without the context constants: every finding of the whole file after the edit that the whole
  // file before it did not have at the same place (the edit made it, however far its context reads) is there.
  const shift = span.beforeEnd - span.afterEnd;
  const had = new Set(scan(before).findings.map(key));
  for (const f of whole) {
    const old =
      f.end <= span.start
        ? key(f)
        : f.start >= span.afterEnd
          ? `${f.type}:${f.start + shift}:${f.end + shift}`
          : undefined;
    if (old !== undefined && had.has(old)) continue;
    expect(got.has(key(f)), `${key(f)}, made by the edit, missed in ${JSON.stringify(after)}`).toBe(true);
  }
}

const edits = (base: string, piece: string, a: number, b: number, cut: number): void => {
  const at = a % (base.length + 1);
  const end = Math.min(base.length, at + cut);
  const inserted = base.slice(0, at) + piece + base.slice(at);
  checkEdit(base, inserted);
  checkEdit(inserted, base);
  checkEdit(base, base.slice(0, at) + piece + base.slice(end));
  const other = b % (base.length + 1);
  checkEdit(base, base.slice(0, other) + base.slice(Math.min(base.length, other + cut)));
};

describe('edit scan window bounded by line breaks', () => {
  it('agrees with a scan of the whole file after the edit (insertions, deletions, replacements)', () => {
    fc.assert(
      fc.property(text, fc.constantFrom(...FRAGMENTS), fc.nat(), fc.nat(), fc.nat(40), (base, piece, a, b, cut) => {
        edits(base, piece, a, b, cut);
      }),
      { numRuns: 600, seed: 12 },
    );
  });

  it('agrees with a scan of the whole file on texts without a blank line (wrapped values, digit lines, long lines)', () => {
    fc.assert(
      fc.property(
        flatText,
        fc.constantFrom(...FLAT_FRAGMENTS),
        fc.nat(),
        fc.nat(),
        fc.nat(400),
        (base, piece, a, b, cut) => {
          edits(base, piece, a, b, cut);
        },
      ),
      { numRuns: 500, seed: 7 },
    );
  });

  it('a note without blank lines is scanned around the change, not whole', () => {
    const lines = 'Notes about the week and the plans for it.\n'.repeat(80);
    const before = `Mail jane.roe@example.com about it.\n${lines}Call Jane back.\n${lines}`;
    const after = before.replace('Call Jane back.', 'Call Jane back on +49 30 1234567.');
    // The e-mail address is 3 KiB away: checked when it was written, not read again.
    expect(redactEdit(before, after).findings.map((f) => after.slice(f.start, f.end))).toEqual(['+49 30 1234567']);
    checkEdit(before, after);
  });

  it('a column of digit groups carries nothing from line to line: a window that cuts it finds what the whole file does', () => {
    // One digit run over 300 lines: a card is read from where a run starts (at most 20 digits), and
    // a run that is no card ends at its first group, so each line starts a run of its own.
    const column = Array.from({ length: 300 }, (_, i) => String(1000 + ((i * 7919) % 9000))).join('\n');
    const before = `Codes:\n${column}\nend of the list.\n`;
    // The whole scan finds values in the column (cards of four lines, numbers read as phones): the
    // window must find the same ones near the edit, and no others.
    expect(scan(before).findings.length).toBeGreaterThan(0);
    for (const at of [100, 600, 1200]) {
      const lineStart = before.indexOf('\n', at) + 1;
      checkEdit(before, `${before.slice(0, lineStart)}9${before.slice(lineStart + 1)}`);
    }
    const after = before.replace('end of the list.', 'end of the list, card 4111 1111 1111 1111.');
    expect(redactEdit(before, after).findings.map((f) => after.slice(f.start, f.end))).toContain('4111 1111 1111 1111');
    checkEdit(before, after);
  });

  it('a value wrapped over a line break near the edge of the window is read whole', () => {
    const lines = 'Notes about the week and the plans for it.\n'.repeat(30);
    const before = `${lines}Account DE89 3704 0044\n0532 0130 00 for rent.\n${'x'.repeat(200)}\nCall Jane back.\n${lines}`;
    const after = before.replace('Call Jane back.', 'Call Jane back today.');
    checkEdit(before, after);
    const wrapped = before.replace('for rent.', 'for rent, card 4111 1111\n1111 1111 due.');
    checkEdit(before, wrapped);
    expect(redactEdit(before, wrapped).findings.map((f) => f.type)).toContain('CREDIT_CARD');
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
    const after =
      before.replace('-----BEGIN RSA PRIVATE KEY-----\n', '-----BEGIN RSA PRIVATE KEY-----\n') +
      '-----END RSA PRIVATE KEY-----\n';
    const result = redactEdit(before, after);
    expect(
      result.findings.some((f) => f.type === 'SECRET' && after.slice(f.start, f.end).startsWith('-----BEGIN')),
    ).toBe(true);
    checkEdit(before, after);
  });
});
