/**
 * The versions screen's line diff (src/serve/page/diff.ts): every answer rebuilds both texts, is
 * shortest within the budget (checked against a quadratic LCS on random texts), and stays bounded.
 */
import { describe, expect, it } from 'vitest';
import { diffLines, MAX_DIFF_LINES, splitLines, type DiffLine } from '../../src/serve/page/diff.js';

function sides(lines: DiffLine[]): { before: string[]; after: string[]; changes: number } {
  const before = lines.filter((l) => l.kind !== 'added').map((l) => l.text);
  const after = lines.filter((l) => l.kind !== 'removed').map((l) => l.text);
  return { before, after, changes: lines.filter((l) => l.kind !== 'same').length };
}

function lcsLength(a: string[], b: string[]): number {
  let row = new Array<number>(b.length + 1).fill(0);
  for (const x of a) {
    const next = [0];
    for (let j = 0; j < b.length; j++) next.push(x === b[j] ? row[j]! + 1 : Math.max(row[j + 1]!, next[j]!));
    row = next;
  }
  return row[b.length]!;
}

function diffOf(before: string, after: string, budget?: number) {
  const result = diffLines(before, after, budget);
  if ('tooLong' in result) throw new Error('unexpectedly too long');
  return result;
}

describe('diffLines', () => {
  it('marks removed, added and kept lines in order', () => {
    const { lines, shortest } = diffOf('a\nb\nc\nd\n', 'a\nc\nx\nd\n');
    expect(shortest).toBe(true);
    expect(lines).toEqual([
      { kind: 'same', text: 'a' },
      { kind: 'removed', text: 'b' },
      { kind: 'same', text: 'c' },
      { kind: 'added', text: 'x' },
      { kind: 'same', text: 'd' },
    ]);
    expect(splitLines('')).toEqual([]);
    expect(splitLines('x\r\ny')).toEqual(['x', 'y']);
    expect(diffOf('', 'new\n').lines).toEqual([{ kind: 'added', text: 'new' }]);
    expect(diffOf('gone', '').lines).toEqual([{ kind: 'removed', text: 'gone' }]);
  });

  it('is a shortest diff that rebuilds both texts, on random texts', () => {
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 6;
    for (let round = 0; round < 300; round++) {
      const a = Array.from({ length: Math.floor(random() * 8) }, () => String.fromCharCode(97 + Math.floor(random())));
      const b = Array.from({ length: Math.floor(random() * 8) }, () => String.fromCharCode(97 + Math.floor(random())));
      const { lines, shortest } = diffOf(a.join('\n'), b.join('\n'));
      const got = sides(lines);
      expect([got.before, got.after]).toEqual([a, b]);
      expect(shortest).toBe(true);
      expect(got.changes).toBe(a.length + b.length - 2 * lcsLength(a, b));
    }
  });

  it('refuses texts over the line bound, and past its budget still answers a correct diff', () => {
    expect(diffLines('x\n'.repeat(MAX_DIFF_LINES + 1), 'y')).toEqual({ tooLong: true });
    const a = Array.from({ length: 1500 }, (_, i) => `line ${i % 7 === 0 ? 'x' : i}`);
    const b = Array.from({ length: 1500 }, (_, i) => `line ${i % 5 === 0 ? 'y' : i}`);
    const started = performance.now();
    const bounded = diffOf(a.join('\n'), b.join('\n'), 10_000);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(bounded.shortest).toBe(false);
    const got = sides(bounded.lines);
    expect([got.before, got.after]).toEqual([a, b]);
    const full = diffOf(a.join('\n'), b.join('\n'));
    expect(full.shortest).toBe(true);
    expect(sides(full.lines).changes).toBe(a.length + b.length - 2 * lcsLength(a, b));
  });
});
