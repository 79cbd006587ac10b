/**
 * A line diff of two texts for the versions screen: Myers' O(ND) algorithm in its linear-space
 * form (the middle snake, divide and conquer), after the common head and tail are set aside.
 *
 * Bounded twice: texts of more than MAX_DIFF_LINES lines each are not compared at all (the caller
 * says so), and the search stops after WORK_BUDGET steps of snake-following; past it, each range
 * still unsolved is shown as its old lines removed and its new lines added. The answer is then a
 * correct diff that is not the shortest, and the time stays linear in the budget.
 */

export type DiffKind = 'same' | 'removed' | 'added';

export interface DiffLine {
  kind: DiffKind;
  text: string;
}

/** Lines a side may have to be compared (a 1 MiB file of short lines has more; it is refused, not cut). */
export const MAX_DIFF_LINES = 20_000;
/** Snake steps the search may take before it settles for a longer diff. */
export const WORK_BUDGET = 20_000_000;

export type LineDiff = { lines: DiffLine[]; shortest: boolean } | { tooLong: true };

/** Lines of a text: a final line end closes the last line rather than opening an empty one. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

export function diffLines(before: string, after: string, budget = WORK_BUDGET): LineDiff {
  const a = splitLines(before);
  const b = splitLines(after);
  if (a.length > MAX_DIFF_LINES || b.length > MAX_DIFF_LINES) return { tooLong: true };
  // Lines become numbers, so each comparison is one integer test.
  const ids = new Map<string, number>();
  const idOf = (line: string) => {
    let id = ids.get(line);
    if (id === undefined) ids.set(line, (id = ids.size));
    return id;
  };
  const search = new Search(Int32Array.from(a, idOf), Int32Array.from(b, idOf), budget);
  search.compare(0, a.length, 0, b.length);
  const lines: DiffLine[] = search.ops.map((op) =>
    op.kind === 'added' ? { kind: op.kind, text: b[op.at]! } : { kind: op.kind, text: a[op.at]! },
  );
  return { lines, shortest: search.left >= 0 };
}

interface Op {
  kind: DiffKind;
  /** The line's index in the old text ('same', 'removed') or the new one ('added'). */
  at: number;
}

class Search {
  readonly ops: Op[] = [];
  left: number;

  constructor(
    private readonly a: Int32Array,
    private readonly b: Int32Array,
    budget: number,
  ) {
    this.left = budget;
  }

  /** Emits the ops that turn a[aLo, aHi) into b[bLo, bHi), in order. */
  compare(aLo: number, aHi: number, bLo: number, bHi: number): void {
    const { a, b } = this;
    let head = 0;
    while (aLo + head < aHi && bLo + head < bHi && a[aLo + head] === b[bLo + head]) head++;
    for (let i = 0; i < head; i++) this.ops.push({ kind: 'same', at: aLo + i });
    aLo += head;
    bLo += head;
    let tail = 0;
    while (aHi - tail > aLo && bHi - tail > bLo && a[aHi - tail - 1] === b[bHi - tail - 1]) tail++;
    aHi -= tail;
    bHi -= tail;
    if (aLo === aHi || bLo === bHi || this.left < 0) this.replace(aLo, aHi, bLo, bHi);
    else {
      const split = this.middle(aLo, aHi, bLo, bHi);
      if (split === undefined) this.replace(aLo, aHi, bLo, bHi);
      else {
        this.compare(aLo, split.x, bLo, split.y);
        this.compare(split.x, aHi, split.y, bHi);
      }
    }
    for (let i = tail; i > 0; i--) this.ops.push({ kind: 'same', at: aHi + tail - i });
  }

  private replace(aLo: number, aHi: number, bLo: number, bHi: number): void {
    for (let i = aLo; i < aHi; i++) this.ops.push({ kind: 'removed', at: i });
    for (let j = bLo; j < bHi; j++) this.ops.push({ kind: 'added', at: j });
  }

  /**
   * A point (x, y) on a shortest edit path through the range, found by running the search from both
   * ends until the paths overlap (the middle snake); undefined when the budget runs out first. Both
   * ranges are non-empty and differ in their first and last lines.
   */
  private middle(aLo: number, aHi: number, bLo: number, bHi: number): { x: number; y: number } | undefined {
    const { a, b } = this;
    const n = aHi - aLo;
    const m = bHi - bLo;
    const maxD = Math.ceil((n + m) / 2);
    const offset = maxD;
    const size = 2 * maxD + 2;
    // Furthest x reached on each diagonal k = x - y, forward from the start and backward from the end.
    const forward = new Int32Array(size).fill(-1);
    const backward = new Int32Array(size).fill(-1);
    forward[offset + 1] = 0;
    backward[offset + 1] = 0;
    const delta = n - m;
    const odd = (delta & 1) !== 0;
    let kStartF = 0;
    let kEndF = 0;
    let kStartB = 0;
    let kEndB = 0;
    for (let d = 0; d < maxD; d++) {
      for (let k = -d + kStartF; k <= d - kEndF; k += 2) {
        const i = offset + k;
        let x = k === -d || (k !== d && forward[i - 1]! < forward[i + 1]!) ? forward[i + 1]! : forward[i - 1]! + 1;
        const from = x;
        let y = x - k;
        while (x < n && y < m && a[aLo + x] === b[bLo + y]) {
          x++;
          y++;
        }
        this.left -= 1 + x - from;
        forward[i] = x;
        if (x > n) kEndF += 2;
        else if (y > m) kStartF += 2;
        else if (odd) {
          const j = offset + delta - k;
          if (j >= 0 && j < size && backward[j] !== -1 && x >= n - backward[j]!) return { x: aLo + x, y: bLo + y };
        }
      }
      for (let k = -d + kStartB; k <= d - kEndB; k += 2) {
        const i = offset + k;
        let x = k === -d || (k !== d && backward[i - 1]! < backward[i + 1]!) ? backward[i + 1]! : backward[i - 1]! + 1;
        const from = x;
        let y = x - k;
        while (x < n && y < m && a[aHi - x - 1] === b[bHi - y - 1]) {
          x++;
          y++;
        }
        this.left -= 1 + x - from;
        backward[i] = x;
        if (x > n) kEndB += 2;
        else if (y > m) kStartB += 2;
        else if (!odd) {
          const j = offset + delta - k;
          if (j >= 0 && j < size && forward[j] !== -1) {
            const fx = forward[j]!;
            if (fx >= n - x) return { x: aLo + fx, y: bLo + fx - (j - offset) };
          }
        }
      }
      if (this.left < 0) return undefined;
    }
    return undefined;
  }
}
