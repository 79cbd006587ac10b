import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import { MemoryStore } from '../../src/store/memory.js';
import { forEachOccurrence, LineCounter, lineCount, lineOfOffset, parseText, SCAN_SLICE } from '../../src/tool/text.js';

/** Every overlapping occurrence, the obvious quadratic way (the reference). */
function naiveOccurrences(text: string, needle: string): number[] {
  const out: number[] = [];
  for (let i = 0; i + needle.length <= text.length; i++) if (text.startsWith(needle, i)) out.push(i);
  return out;
}

async function occurrences(text: string, needle: string, limit = Infinity): Promise<number[]> {
  const out: number[] = [];
  await forEachOccurrence(text, needle, (offset) => {
    out.push(offset);
    return out.length < limit;
  });
  return out;
}

// Small alphabets make repeats, overlaps and near misses (the cases that break string search) common.
const small = (chars: string[], maxLength: number) =>
  fc.array(fc.constantFrom(...chars), { maxLength }).map((a) => a.join(''));

describe('forEachOccurrence (linear matching)', () => {
  it('finds exactly the overlapping occurrences a naive search finds, in order', async () => {
    await fc.assert(
      fc.asyncProperty(
        small(['a', 'b', '\n', '\r'], 200),
        small(['a', 'b', '\n'], 8).filter((s) => s.length > 0),
        async (text, needle) => {
          expect(await occurrences(text, needle)).toEqual(naiveOccurrences(text, needle));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('also with surrogate pairs and other UTF-16 text, and stops when asked', async () => {
    await fc.assert(
      fc.asyncProperty(
        small(['😀', 'é', 'e\u0301', 'x', '\ud83d'], 60),
        small(['😀', 'x', '\ude00', '\ud83d'], 4).filter((s) => s.length > 0),
        fc.integer({ min: 1, max: 3 }),
        async (text, needle, limit) => {
          expect(await occurrences(text, needle, limit)).toEqual(naiveOccurrences(text, needle).slice(0, limit));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('handles the inputs that make native indexOf quadratic, and one long line of overlapping matches', async () => {
    const text = 'a'.repeat(1 << 20);
    const needle = `${'a'.repeat(100_000)}b${'a'.repeat(100_000)}`;
    expect(await occurrences(text, needle)).toEqual([]);
    expect(await occurrences(text, 'a'.repeat(500_000), 2)).toEqual([0, 1]);
    expect(await occurrences(`${text}b`, `${'a'.repeat(300_000)}b`)).toEqual([(1 << 20) - 300_000]);
    let count = 0;
    await forEachOccurrence(text, 'aa', () => ++count > 0);
    expect(count).toBe((1 << 20) - 1);
  });

  it('yields to the event loop while it scans a big text (other commands are not held up)', async () => {
    const text = `${'x'.repeat(4 * SCAN_SLICE)}needle`;
    let ticks = 0;
    let done = false;
    const tick = () => {
      ticks += 1;
      if (!done) setImmediate(tick);
    };
    setImmediate(tick);
    const found = await occurrences(text, 'xneedle');
    done = true;
    expect(found).toEqual([4 * SCAN_SLICE - 1]);
    // A scan that never yielded would finish before the first tick.
    expect(ticks).toBeGreaterThanOrEqual(3);
  });
});

describe('line numbers in one pass', () => {
  it('LineCounter agrees with lineOfOffset for increasing offsets; lineCount with parseText', () => {
    fc.assert(
      fc.property(small(['a', '\n', '\r'], 100), fc.array(fc.nat(), { maxLength: 20 }), (text, raw) => {
        const offsets = raw.map((o) => o % (text.length + 1)).sort((x, y) => x - y);
        const counter = new LineCounter(text);
        expect(offsets.map((o) => counter.lineOf(o))).toEqual(offsets.map((o) => lineOfOffset(text, o)));
        expect(lineCount(text)).toBe(parseText(text).lines.length);
      }),
      { numRuns: 500 },
    );
  });
});

async function vaultWith(files: Record<string, string>): Promise<Vault> {
  // No PII redactor: these tests are about the edit itself, on texts far bigger than usual.
  const vault = await createVault({ store: new MemoryStore(), pii: false });
  for (const [path, file_text] of Object.entries(files)) {
    const created = await vault.run('u', { command: 'create', path, file_text });
    expect(created.isError).toBe(false);
  }
  return vault;
}

describe('str_replace and insert on big files', () => {
  it('the multiple-occurrences error lists the first 20 lines and counts the rest (20,000 lines)', async () => {
    const text = Array.from({ length: 20_000 }, (_, i) => `line ${i} TODO`).join('\n');
    const vault = await vaultWith({ '/memories/big.md': text });
    const result = await vault.run('u', {
      command: 'str_replace',
      path: '/memories/big.md',
      old_str: 'TODO',
      new_str: 'done',
    });
    const listed = Array.from({ length: 20 }, (_, i) => i + 1).join(', ');
    expect(result).toEqual({
      isError: true,
      code: 'AMBIGUOUS_MATCH',
      content: `No replacement was performed. Multiple occurrences of old_str \`TODO\` in lines: ${listed} and 19,980 more. Please ensure it is unique`,
    });
  });

  it('lines are counted once each (several matches on one line), and lines after the cap are counted, not listed', async () => {
    const text = ['xx x', 'y', 'x', ...Array.from({ length: 30 }, () => 'x x'), 'x'].join('\n');
    const vault = await vaultWith({ '/memories/f.md': text });
    const result = await vault.run('u', { command: 'str_replace', path: '/memories/f.md', old_str: 'x', new_str: 'z' });
    // lines 1, 3, 4..33 and 34: 33 distinct lines, 20 listed.
    const listed = [1, ...Array.from({ length: 19 }, (_, i) => i + 3)].join(', ');
    expect(result.content).toBe(
      `No replacement was performed. Multiple occurrences of old_str \`x\` in lines: ${listed} and 13 more. Please ensure it is unique`,
    );
  });

  it('a long old_str against one long line: overlapping matches are ambiguous, a near miss is no match, a unique one is replaced', async () => {
    const line = 'a'.repeat(1_000_000);
    const vault = await vaultWith({ '/memories/line.md': line, '/memories/tail.md': `${line}b` });
    const many = await vault.run('u', {
      command: 'str_replace',
      path: '/memories/line.md',
      old_str: 'a'.repeat(500_000),
      new_str: '',
    });
    expect(many.code).toBe('AMBIGUOUS_MATCH');
    expect(many.content).toMatch(/in lines: 1\. Please ensure it is unique$/);
    const miss = await vault.run('u', {
      command: 'str_replace',
      path: '/memories/line.md',
      old_str: `${'a'.repeat(200_000)}b${'a'.repeat(200_000)}`,
      new_str: '',
    });
    expect(miss.code).toBe('NO_MATCH');
    const unique = await vault.run('u', {
      command: 'str_replace',
      path: '/memories/tail.md',
      old_str: `${'a'.repeat(400_000)}b`,
      new_str: 'c',
    });
    expect(unique.isError).toBe(false);
    const files = await vault.files('u');
    expect(new TextDecoder().decode((await files.read('/memories/tail.md'))!.data)).toBe(`${'a'.repeat(600_000)}c`);
  });

  it('the snippet shows the changed lines with two lines of context, at the start, the middle and the end of a big file', async () => {
    const text = `${Array.from({ length: 50_000 }, (_, i) => `l${i + 1}`).join('\n')}\n`;
    const vault = await vaultWith({ '/memories/f.md': text });
    const edit = async (old_str: string, new_str: string) =>
      String((await vault.run('u', { command: 'str_replace', path: '/memories/f.md', old_str, new_str })).content);
    const snippetOf = (out: string) =>
      out
        .split('\n')
        .slice(1)
        .map((l) => l.trim().replace(/\s+/, ' '));
    expect(snippetOf(await edit('l1\n', 'first\n'))).toEqual(['1 first', '2 l2', '3 l3']);
    expect(snippetOf(await edit('l25000\n', 'mid\ndle\n'))).toEqual([
      '24998 l24998',
      '24999 l24999',
      '25000 mid',
      '25001 dle',
      '25002 l25001',
      '25003 l25002',
    ]);
    // A match that starts with the previous line's break starts on that line (one line later now: mid/dle split a line).
    expect(snippetOf(await edit('\nl30000\n', '\nx\n'))).toEqual([
      '29998 l29997',
      '29999 l29998',
      '30000 l29999',
      '30001 x',
      '30002 l30001',
      '30003 l30002',
    ]);
    expect(snippetOf(await edit('l50000\n', 'last\n'))).toEqual(['49999 l49998', '50000 l49999', '50001 last']);
  });

  it('insert of 300,000 lines works (no call-argument overflow) and keeps the line model', async () => {
    const vault = await vaultWith({ '/memories/f.md': 'a\nb\n' });
    const insertText = 'x\n'.repeat(300_000);
    const result = await vault.run('u', {
      command: 'insert',
      path: '/memories/f.md',
      insert_line: 1,
      insert_text: insertText,
    });
    expect(result).toEqual({ content: 'The file /memories/f.md has been edited.', isError: false });
    const files = await vault.files('u');
    expect(new TextDecoder().decode((await files.read('/memories/f.md'))!.data)).toBe(`a\n${insertText}b\n`);
  });
});
