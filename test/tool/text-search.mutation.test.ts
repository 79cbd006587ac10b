/**
 * The occurrence search under str_replace (the KMP border table, the slices between
 * yields and the stop had gone unasserted). Every answer is compared with a plain quadratic search:
 * needles with borders that force the table's fall-back, needles and texts longer than one slice
 * (SCAN_SLICE characters) with matches across slice boundaries, a stop on the first match, and the
 * event loop turning between slices (another user's command is not held up by one long scan).
 */
import { describe, expect, it } from 'vitest';
import { forEachOccurrence, LineCounter, SCAN_SLICE } from '../../src/tool/text.js';

/** Every offset of `needle` in `text`, overlapping ones included, the slow obvious way. */
function naive(text: string, needle: string): number[] {
  const found: number[] = [];
  if (needle.length === 0) return found;
  for (let i = 0; i + needle.length <= text.length; i++) if (text.startsWith(needle, i)) found.push(i);
  return found;
}

async function occurrences(text: string, needle: string): Promise<number[]> {
  const found: number[] = [];
  await forEachOccurrence(text, needle, (offset) => {
    found.push(offset);
    return true;
  });
  return found;
}

/** Every string over `alphabet` of length 0..max. */
function allStrings(alphabet: string, max: number): string[] {
  const out = [''];
  let level = [''];
  for (let n = 1; n <= max; n++) {
    level = level.flatMap((s) => [...alphabet].map((c) => s + c));
    out.push(...level);
  }
  return out;
}

describe('forEachOccurrence finds exactly the occurrences a plain search finds', () => {
  it('every text of up to 7 characters over {a, b} against every needle of up to 4', async () => {
    const texts = allStrings('ab', 7);
    const needles = allStrings('ab', 4).filter((n) => n !== '');
    for (const needle of needles) {
      for (const text of texts) {
        const got = await occurrences(text, needle);
        if (got.join() !== naive(text, needle).join())
          expect(got, `${JSON.stringify(needle)} in ${JSON.stringify(text)}`).toEqual(naive(text, needle));
      }
    }
  });

  it('needles whose border table falls back more than once (periodic and Fibonacci words)', async () => {
    // A fixed pseudo-random text over {a, b, c} mostly made of the needles' own pieces.
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    const needles = ['aabaaab', 'abaababaab', 'abcabcabd', 'aaaab', 'abab', 'aabaabaa', 'abacabab'];
    for (const needle of needles) {
      let text = '';
      while (text.length < 400) text += next() % 3 === 0 ? needle.slice(0, next() % needle.length) : 'abc'[next() % 3];
      text += needle + needle.slice(1) + needle;
      expect(await occurrences(text, needle), needle).toEqual(naive(text, needle));
      expect(naive(text, needle).length, needle).toBeGreaterThan(1);
    }
  });

  it('a needle as long as the text matches once; a longer one and the empty one never', async () => {
    expect(await occurrences('abc', 'abc')).toEqual([0]);
    expect(await occurrences('a', 'a')).toEqual([0]);
    expect(await occurrences('abc', 'abcd')).toEqual([]);
    expect(await occurrences('abc', '')).toEqual([]);
    expect(await occurrences('', 'a')).toEqual([]);
  });

  it('stops at the first occurrence when told to, and never calls again', async () => {
    const seen: number[] = [];
    await forEachOccurrence('xaxaxa', 'a', (offset) => {
      seen.push(offset);
      if (seen.length > 1) throw new Error('called again after it said stop');
      return false;
    });
    expect(seen).toEqual([1]);
    // Stopping at the second of overlapping matches.
    const two: number[] = [];
    await forEachOccurrence('aaaa', 'aa', (offset) => {
      two.push(offset);
      if (two.length > 2) throw new Error('called again after it said stop');
      return two.length < 2;
    });
    expect(two).toEqual([0, 1]);
  });
});

describe('texts and needles longer than one slice', () => {
  it('matches after the first slice and across slice boundaries are all found', async () => {
    const text = 'abc'.repeat(SCAN_SLICE);
    const found = await occurrences(text, 'cab');
    expect(found).toHaveLength(SCAN_SLICE - 1);
    expect(found.every((offset, i) => offset === 3 * i + 2)).toBe(true);
    // One match exactly across the first boundary, one far past it.
    const sparse = `${'x'.repeat(SCAN_SLICE - 2)}needle${'y'.repeat(2 * SCAN_SLICE)}needle`;
    expect(await occurrences(sparse, 'needle')).toEqual([SCAN_SLICE - 2, 3 * SCAN_SLICE + 4]);
  });

  it('a needle longer than a slice, with borders across the slice boundaries, finds its overlapping matches', async () => {
    const periodic = 'ab'.repeat(SCAN_SLICE);
    expect(await occurrences('ab'.repeat(SCAN_SLICE + 10), periodic)).toEqual(
      Array.from({ length: 11 }, (_, i) => 2 * i),
    );
    const run = 'a'.repeat(2 * SCAN_SLICE + 3);
    expect(await occurrences('a'.repeat(2 * SCAN_SLICE + 8), run)).toEqual([0, 1, 2, 3, 4, 5]);
    // A near miss at the end of the needle: no match, however much of it matched.
    expect(await occurrences('a'.repeat(3 * SCAN_SLICE), `${'a'.repeat(SCAN_SLICE + 5)}b`)).toEqual([]);
    const tail = `${'a'.repeat(SCAN_SLICE + 5)}b`;
    // Ends at the first b (after 2 slices of a); before the second b are too few a's.
    expect(await occurrences(`${'a'.repeat(2 * SCAN_SLICE)}b${'a'.repeat(SCAN_SLICE)}b`, tail)).toEqual([
      SCAN_SLICE - 5,
    ]);
  });

  it('the event loop turns between slices, while the needle is prepared and while the text is scanned', async () => {
    // A callback queued before the search (another user's command) runs long before it ends.
    const needle = 'ab'.repeat((3 * SCAN_SLICE) / 2);
    const text = needle;
    let turns = 0;
    let searching = true;
    const tick = () => {
      turns += 1;
      if (searching) setImmediate(tick);
    };
    setImmediate(tick);
    const turnsAtMatch: number[] = [];
    await forEachOccurrence(text, needle, () => {
      turnsAtMatch.push(turns);
      return true;
    });
    searching = false;
    expect(turnsAtMatch).toHaveLength(1);
    // Three slices of needle to prepare and three of text to scan: at least two turns in each.
    expect(turnsAtMatch[0]).toBeGreaterThanOrEqual(4);
  });
});

describe('LineCounter', () => {
  it('a line break belongs to the line it ends', () => {
    const counter = new LineCounter('ab\ncd\n\nef');
    expect([0, 1, 2, 3, 5, 6, 7, 8].map((offset) => counter.lineOf(offset))).toEqual([1, 1, 1, 2, 2, 3, 4, 4]);
  });
});
