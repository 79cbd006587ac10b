/**
 * Table-aware context: the header of the column a cell sits in, for CSV, TSV and Markdown tables.
 * A value in a table has no word beside it ("Jane,234-56-7890"): its column's header says what it
 * is. The header is the first line of the block of lines that hold the cell's delimiter; a
 * Markdown table's `|---|` rule under it is not a row.
 *
 * Linear: the lines between the cell and the last line already resolved are walked once (the
 * cache carries the block's header from one cell to the next, per delimiter, so cells that
 * alternate between delimiters do not walk the block again), so a 1 MB CSV costs one pass.
 */

/** Per delimiter: the start of the last line whose header was found, and that header line's start. */
export type HeaderCache = Map<number, { lineStart: number; headerStart: number }>;

export function newHeaderCache(): HeaderCache {
  return new Map();
}

const MAX_HEADER_CELL = 64;
/** Past this many characters into a line, a cell is not looked up (a bound on the work per cell). */
const MAX_ROW_WIDTH = 4096;

function lineStartOf(text: string, pos: number): number {
  return text.lastIndexOf('\n', pos - 1) + 1;
}

function lineEndOf(text: string, pos: number): number {
  const end = text.indexOf('\n', pos);
  return end === -1 ? text.length : end;
}

function holds(text: string, from: number, to: number, delimiter: number): boolean {
  for (let i = from; i < to; i++) if (text.charCodeAt(i) === delimiter) return true;
  return false;
}

/** Cells split by `delimiter` before `pos` on its line, outside double quotes: the column index. */
function columnAt(text: string, lineStart: number, pos: number, delimiter: number): number {
  let column = 0;
  let quoted = false;
  for (let i = lineStart; i < pos; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) quoted = !quoted;
    else if (c === delimiter && !quoted) column++;
  }
  return column;
}

/** The text of cell `column` of the line at `lineStart`, or undefined when the line has fewer cells. */
function cellText(text: string, lineStart: number, column: number, delimiter: number): string | undefined {
  let end = lineEndOf(text, lineStart);
  if (end > lineStart && text.charCodeAt(end - 1) === 13) end--; // CRLF
  let col = 0;
  let cellStart = lineStart;
  let quoted = false;
  const stop = Math.min(end, lineStart + MAX_ROW_WIDTH);
  for (let i = lineStart; i <= stop; i++) {
    const c = i < stop ? text.charCodeAt(i) : delimiter;
    if (c === 34) quoted = !quoted;
    else if (c === delimiter && (!quoted || i === stop)) {
      if (col === column) return text.slice(cellStart, Math.min(i, cellStart + MAX_HEADER_CELL));
      col++;
      cellStart = i + 1;
    }
  }
  return undefined;
}

/** A Markdown rule line: only '|', '-', ':' and spaces. */
function isRule(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c !== 124 && c !== 45 && c !== 58 && c !== 32 && c !== 9 && c !== 13) return false;
  }
  return to > from;
}

/**
 * The header cell over the cell that spans [start, end), when the cell is a whole table cell (the
 * delimiter, a line edge or a quote on both sides, spaces aside); undefined otherwise or when the
 * cell is itself on the header line.
 */
export function headerOfCell(text: string, start: number, end: number, cache: HeaderCache): string | undefined {
  const lineStart = lineStartOf(text, start);
  const lineEnd = lineEndOf(text, end);
  let a = start;
  while (a > lineStart && (text.charCodeAt(a - 1) === 32 || text.charCodeAt(a - 1) === 34)) a--;
  let b = end;
  while (b < lineEnd && (text.charCodeAt(b) === 32 || text.charCodeAt(b) === 34 || text.charCodeAt(b) === 13)) b++;
  const left = a > lineStart ? text.charCodeAt(a - 1) : -1;
  const right = b < lineEnd ? text.charCodeAt(b) : -1;
  const delimiter = left !== -1 ? left : right;
  if (delimiter !== 44 && delimiter !== 9 && delimiter !== 124 && delimiter !== 59) return undefined;
  if ((left !== -1 && left !== delimiter) || (right !== -1 && right !== delimiter)) return undefined;
  if (start - lineStart > MAX_ROW_WIDTH) return undefined;
  const header = headerLine(text, lineStart, delimiter, cache);
  if (header === lineStart) return undefined;
  return cellText(text, header, columnAt(text, lineStart, start, delimiter), delimiter);
}

/** Start of the first line of the block of lines that hold `delimiter`, ending at the line at `lineStart`. */
function headerLine(text: string, lineStart: number, delimiter: number, cache: HeaderCache): number {
  const known = cache.get(delimiter);
  let header = lineStart;
  let at = lineStart;
  while (at > 0) {
    if (at === known?.lineStart) {
      header = known.headerStart;
      break;
    }
    const prev = lineStartOf(text, at - 1);
    const prevEnd = at - 1;
    if (!holds(text, prev, prevEnd, delimiter)) break;
    if (!(delimiter === 124 && isRule(text, prev, prevEnd))) header = prev;
    at = prev;
  }
  cache.set(delimiter, { lineStart, headerStart: header });
  return header;
}
