import type { CleanSegments } from './clean-segments.js';
import { placeholder, scan } from './engine.js';
import { visibleAfter, visibleBefore } from './normalize.js';
import { PII_TYPES } from './types.js';
import type { PiiFinding, PiiType, RedactOptions } from './types.js';

/**
 * The longest text any detector's decision about one value depends on: the value itself plus the
 * context it looks at on either side (a label before it, a boundary character after it). The
 * longest spans are private key blocks (64 KiB, see MAX_PEM in detectors/secret-pem.ts) and JWTs
 * (at most 12 KiB); every other value is under 1 KiB with under 200 characters of context. So a
 * finding that touches an edit, or whose context does, lies within EDIT_MARGIN of it.
 */
export const EDIT_MARGIN = 72 * 1024;

/** Where two texts differ: `before[start, beforeEnd)` became `after[start, afterEnd)`. */
export interface ChangedSpan {
  start: number;
  beforeEnd: number;
  afterEnd: number;
}

/**
 * The first run changedSpan compares at once (doubled after each match): a native comparison of
 * two substrings costs a fraction of as many charCodeAt steps, and an edit's texts share kilobytes.
 */
const SPAN_FIRST_RUN = 64;
/** Below this the binary search hands over to the unit-by-unit loop. */
const SPAN_UNIT_STEPS = 32;

/**
 * The smallest span that differs (common prefix and suffix taken off); linear. Each side is found by
 * galloping: runs of 64, 128, 256, ... units compared natively while they agree, then a binary search
 * inside the first run that does not, then unit by unit over the last few. So the result is exactly
 * the longest common prefix, and then the longest common suffix of what is left after it; the units
 * compared are at most about three times the shared text, each compared by native code.
 */
export function changedSpan(before: string, after: string): ChangedSpan {
  const max = Math.min(before.length, after.length);
  const start = commonLength(max, (from, to) => before.slice(from, to) === after.slice(from, to));
  const beforeLength = before.length;
  const afterLength = after.length;
  // The suffix is counted from the ends: units [from, to) from the end of each text.
  const tail = commonLength(
    max - start,
    (from, to) =>
      before.slice(beforeLength - to, beforeLength - from) === after.slice(afterLength - to, afterLength - from),
  );
  return { start, beforeEnd: beforeLength - tail, afterEnd: afterLength - tail };
}

/**
 * How many leading units two texts share, at most `limit`, where `agree(from, to)` says whether
 * they agree on units [from, to): galloping runs, then a binary search, then unit by unit.
 */
function commonLength(limit: number, agree: (from: number, to: number) => boolean): number {
  let same = 0;
  let run = SPAN_FIRST_RUN;
  while (same + run <= limit && agree(same, same + run)) {
    same += run;
    run *= 2;
  }
  // The first difference is before `differs`, or `differs` is the limit.
  let differs = Math.min(same + run, limit);
  while (differs - same > SPAN_UNIT_STEPS) {
    const mid = (same + differs) >>> 1;
    if (agree(same, mid)) same = mid;
    else differs = mid;
  }
  // Unit by unit up to `differs`, not past it: the search above must have brought `same` close.
  while (same < differs && agree(same, same + 1)) same++;
  return same;
}

/**
 * The context a detector reads before a value, over line breaks: an AWS key id up to 161 characters
 * before its secret (with the id itself and the character before it, 182: the longest), an SSN
 * word 48, a phone word 40, an identifier or version word 24. Reads that stop at a line break (a
 * key name and its operator, about 160 characters before the value; the look back for a URL's
 * "://") never pass the start of the value's own line, which the window holds whole. And after it
 * (a boundary character, a currency sign, a port or `-beta` suffix, a spelt-out " dot ": a few
 * characters; the farthest, the digits a card reader takes in after a card to see that the run is
 * longer, at most 8 more digits with their separators, under 30 characters).
 */
export const CONTEXT_BEFORE = 192;
export const CONTEXT_AFTER = 64;

/**
 * The longest value that may run over a line break, in characters of the folded view: an IBAN
 * printed in groups and wrapped (34 characters with a separator of at most two characters, "\r\n",
 * between any two of them: at most 100) or a card (at most 20 digits read, a separator of at most two
 * between groups: under 60). No other value holds a line break, private key blocks aside (near one
 * the EDIT_MARGIN rule applies).
 */
export const MAX_WRAPPED_VALUE = 100;

/**
 * The scan window for the common case, bounded by line breaks instead of EDIT_MARGIN.
 *
 * Why it is exact. Take `b`, the last line break at least CONTEXT_AFTER before the change, and
 * `e`, the first one at least CONTEXT_BEFORE after it. Findings that end by `b` or
 * start after `e` are dropped: the first read at most CONTEXT_AFTER after themselves and the second
 * at most CONTEXT_BEFORE before themselves, so neither reaches the change (they are unchanged text,
 * checked when it was written). The findings in between are kept, and each has its whole extent and
 * context inside the window: none of them runs over `b` or `e` by more than MAX_WRAPPED_VALUE (only
 * a wrapped card or IBAN runs over a line break at all), and the window reaches CONTEXT_BEFORE +
 * MAX_WRAPPED_VALUE before `b` and MAX_WRAPPED_VALUE + CONTEXT_AFTER after `e`. A value cut by the
 * window's edge (an artefact of the cut) lies on the first or last line of the window, so beyond
 * `b` or `e`, and is dropped: no token, address or number runs over a line break, and a cut card
 * or IBAN ends within MAX_WRAPPED_VALUE of the edge (a card is read from the start of a digit run,
 * at most 20 digits, and a run without a card ends the scan of it at its first group's end, so a
 * long column of digit groups carries nothing from line to line). No regular expression of the
 * detectors matches over a line break except those of wrapped values. So scans of the window and
 * of the whole text agree from `b` to `e`.
 * Undefined when a side has no such line break within 2 margins, or a key block may be near.
 */
function lineWindow(text: string, from: number, to: number, margin: number): ScanWindow | undefined {
  return boundedWindow(text, from, to, margin, '\n', MAX_WRAPPED_VALUE);
}

/**
 * The same window bounded by blank lines ("\n\n"), which no value runs over at all (a wrapped
 * value holds one line break, not two), so it needs no MAX_WRAPPED_VALUE slack: for notes of short
 * paragraphs it is the smaller of the two.
 */
function paragraphWindow(text: string, from: number, to: number, margin: number): ScanWindow | undefined {
  return boundedWindow(text, from, to, margin, '\n\n', 0);
}

interface ScanWindow {
  windowStart: number;
  windowEnd: number;
  keepFrom: number;
  keepTo: number;
}

/** `b` and `e` of a bounded window (see lineWindow): the breaks at least a context length before and after the change, or -1. */
function breaksAround(text: string, from: number, to: number, lineBreak: string): { b: number; e: number } {
  const leftLimit = visibleBefore(text, from, CONTEXT_AFTER);
  const b = leftLimit < lineBreak.length ? -1 : text.lastIndexOf(lineBreak, leftLimit - lineBreak.length);
  const e = text.indexOf(lineBreak, visibleAfter(text, to, CONTEXT_BEFORE));
  return { b, e };
}

function boundedWindow(
  text: string,
  from: number,
  to: number,
  margin: number,
  lineBreak: string,
  slack: number,
): ScanWindow | undefined {
  const { b, e } = breaksAround(text, from, to, lineBreak);
  if ((b !== -1 && from - b > 2 * margin) || (e !== -1 && e - to > 2 * margin)) return undefined;
  // With no line break on a side, the window runs to that end of the text (exact too).
  const windowStart = b === -1 ? 0 : visibleBefore(text, b, CONTEXT_BEFORE + slack);
  const windowEnd = e === -1 ? text.length : visibleAfter(text, e + 1, slack + CONTEXT_AFTER);
  // Key blocks may hold blank lines (encrypted PEM headers): near one, the margin rule applies.
  const pem = text.indexOf('-----BEGIN ', Math.max(0, windowStart - margin));
  if (pem !== -1 && pem < windowEnd) return undefined;
  return { windowStart, windowEnd, keepFrom: b === -1 ? 0 : b + 1, keepTo: e === -1 ? text.length : e + 1 };
}

/**
 * False when the paragraph window holds the line window (its breaks lie at or beyond the line
 * window's edges: it can only be as large or larger), so that a note without blank lines, whose
 * paragraph window is the whole text, does not pay for working it out.
 */
function paragraphsMayBeSmaller(text: string, from: number, to: number, lines: ScanWindow): boolean {
  const { b, e } = breaksAround(text, from, to, '\n\n');
  return (b === -1 ? 0 : b) > lines.windowStart || (e === -1 ? text.length : e + 1) < lines.windowEnd;
}

/**
 * Findings of `text` near `[from, to)`. Usually the lines or paragraphs around the change (see
 * lineWindow, paragraphWindow). Otherwise the text within 2 margins of it is scanned, and findings
 * within one margin kept. Those have their full context inside the scanned window (see
 * EDIT_MARGIN), so they are exactly what a scan of the whole text finds there; a finding near a
 * window edge could be an artefact of the cut (a long number cut to 16 digits) and is dropped.
 */
function findingsNear(
  text: string,
  from: number,
  to: number,
  options: RedactOptions | undefined,
  margin: number,
): { findings: PiiFinding[]; rejected: PiiType[] } {
  // Both windows are exact; the smaller one is scanned.
  const lines = lineWindow(text, from, to, margin);
  const paragraphs =
    lines === undefined || paragraphsMayBeSmaller(text, from, to, lines)
      ? paragraphWindow(text, from, to, margin)
      : undefined;
  const bounded =
    lines === undefined ||
    (paragraphs !== undefined && paragraphs.windowEnd - paragraphs.windowStart < lines.windowEnd - lines.windowStart)
      ? paragraphs
      : lines;
  let windowStart: number;
  let windowEnd: number;
  let keepFrom: number;
  let keepTo: number;
  if (bounded !== undefined) {
    ({ windowStart, windowEnd, keepFrom, keepTo } = bounded);
  } else {
    // Margins count visible characters: invisible ones, which detectors skip, may pad a value.
    windowStart = visibleBefore(text, from, 2 * margin);
    windowEnd = visibleAfter(text, to, 2 * margin);
    keepFrom = windowStart === 0 ? 0 : visibleBefore(text, from, margin);
    keepTo = windowEnd === text.length ? text.length : visibleAfter(text, to, margin);
  }
  const window = windowStart === 0 && windowEnd === text.length ? text : text.slice(windowStart, windowEnd);
  const result = scan(window, options);
  const findings: PiiFinding[] = [];
  const rejected = new Set<PiiType>();
  for (const f of result.findings) {
    const start = f.start + windowStart;
    const end = f.end + windowStart;
    if (end <= keepFrom || start >= keepTo) continue;
    findings.push({ type: f.type, start, end });
    if (options?.policy?.[f.type] === 'reject') rejected.add(f.type);
  }
  return { findings, rejected: PII_TYPES.filter((t) => rejected.has(t)) };
}

export interface EditRedaction {
  /** What to store: `after` with every finding near the change replaced by its placeholder. */
  text: string;
  /** Findings in `after` (its offsets) near the change. */
  findings: PiiFinding[];
  /** Types under `reject` that the edit brings in; empty when the edit may be stored. */
  rejected: PiiType[];
  /**
   * The stored file, and so the file's kept versions, held what is now redacted: most of some
   * finding is text the file held before the edit (a label written before a value that was stored
   * unlabelled, a value assembled from stored pieces, a value stored before the policy changed), or
   * the finding's whole text stood in the text the edit replaced (a line rewritten around a value it
   * kept). "Most": a value that merely shares a character or two with the text it replaced (`TBD`
   * -> `Tr0ut...`, the common prefix the changed span leaves out) was not stored.
   */
  redactsStored: boolean;
}

/**
 * Checks what a file will hold after an edit, not the fragment the edit was given: values fixed up
 * piece by piece, a label written before or after its value, a value completed across two lines all
 * end up as the same text a single `create` would have written, and get the same findings.
 *
 * Only the region around the change is scanned (the rest of the file is unchanged text that was
 * checked when it was written, and no detector looks farther than EDIT_MARGIN), so an edit of a
 * 1 MiB file costs a scan of at most 4 margins plus the change.
 *
 * A value of a `reject` type counts against the edit only if the edit brought it in: a finding that
 * the text before the edit had at the same place (a file written before the policy changed) is
 * redacted instead, so that such a file stays editable.
 */
export function redactEdit(
  before: string,
  after: string,
  options?: RedactOptions,
  margin = EDIT_MARGIN,
): EditRedaction {
  const span = changedSpan(before, after);
  const near = findingsNear(after, span.start, span.afterEnd, options, margin);
  let rejected = near.rejected;
  if (rejected.length > 0) rejected = introducedRejections(before, span, near.findings, options, margin);
  const redactsStored =
    near.findings.some((f) => 2 * storedLength(f, span) > f.end - f.start) ||
    heldInReplaced(before, after, span, near.findings);
  return { text: replaceFindings(after, near.findings), findings: near.findings, rejected, redactsStored };
}

/**
 * How much text times findings `heldInReplaced` searches at most; past it the edit counts as
 * redacting stored text without a search (dropping the file's older versions is the safe side, and
 * the search stays linear in the edit).
 */
export const MAX_REPLACED_SEARCH = 1 << 20;

/**
 * Whether the whole text of some finding stood in `before` where the edit changed it (with a
 * value's length of slack on either side, for a value the span's edge cuts): the edit rewrote the
 * text around a value it kept.
 */
function heldInReplaced(before: string, after: string, span: ChangedSpan, findings: readonly PiiFinding[]): boolean {
  if (findings.length === 0) return false;
  const values = findings.map((f) => after.slice(f.start, f.end));
  let slack = 0;
  for (const value of values) slack = Math.max(slack, value.length);
  const replaced = before.slice(Math.max(0, span.start - slack), Math.min(before.length, span.beforeEnd + slack));
  if (replaced.length * values.length > MAX_REPLACED_SEARCH) return true;
  return values.some((value) => replaced.includes(value));
}

/** How many of a finding's units lie outside the edit's change (text the file held before). */
function storedLength(f: PiiFinding, span: ChangedSpan): number {
  return Math.max(0, Math.min(f.end, span.start) - f.start) + Math.max(0, f.end - Math.max(f.start, span.afterEnd));
}

function introducedRejections(
  before: string,
  span: ChangedSpan,
  findings: PiiFinding[],
  options: RedactOptions | undefined,
  margin: number,
): PiiType[] {
  const old = findingsNear(before, span.start, span.beforeEnd, options, margin).findings;
  const shift = span.beforeEnd - span.afterEnd;
  const had = new Set(old.map((f) => `${f.type}:${f.start}:${f.end}`));
  const introduced = new Set<PiiType>();
  for (const f of findings) {
    if (options?.policy?.[f.type] !== 'reject') continue;
    const inPrefix = f.end <= span.start;
    const inSuffix = f.start >= span.afterEnd;
    const existed =
      (inPrefix && had.has(`${f.type}:${f.start}:${f.end}`)) ||
      (inSuffix && had.has(`${f.type}:${f.start + shift}:${f.end + shift}`));
    if (!existed) introduced.add(f.type);
  }
  return PII_TYPES.filter((t) => introduced.has(t));
}

/** `text` with each finding replaced by `[REDACTED:TYPE]`; findings sorted and disjoint. */
export function replaceFindings(text: string, findings: readonly PiiFinding[]): string {
  if (findings.length === 0) return text;
  let out = '';
  let last = 0;
  for (const f of findings) {
    out += text.slice(last, f.start) + placeholder(f.type);
    last = f.end;
  }
  return out + text.slice(last);
}

/**
 * The name a path takes when the values in it are redacted: each value becomes
 * `REDACTED-<TYPE>-<8 hex digits>`, the digits a keyed hash of the value (case folded), so the
 * name stays a valid plain-ASCII name, two different values never share a name (2^-32), and the
 * same value always gives the same name: the model may go on using the path it wrote.
 * Segments are scanned one by one; a value never spans a '/'.
 */
export function redactPathValues(
  path: string,
  tag: (value: string) => string,
  options?: RedactOptions,
  clean?: CleanSegments,
): { path: string; findings: PiiFinding[]; rejected: PiiType[] } {
  const findings: PiiFinding[] = [];
  const rejected = new Set<PiiType>();
  let offset = 0;
  const segments = path.split('/').map((segment) => {
    const base = offset;
    offset += segment.length + 1;
    if (clean?.has(segment)) return segment;
    const result = scan(segment, options);
    if (result.findings.length === 0) {
      clean?.add(segment);
      return segment;
    }
    for (const t of result.rejected) rejected.add(t);
    let out = '';
    let last = 0;
    for (const f of result.findings) {
      findings.push({ type: f.type, start: base + f.start, end: base + f.end });
      out += `${segment.slice(last, f.start)}REDACTED-${f.type}-${tag(segment.slice(f.start, f.end).toLowerCase())}`;
      last = f.end;
    }
    return out + segment.slice(last);
  });
  return { path: segments.join('/'), findings, rejected: PII_TYPES.filter((t) => rejected.has(t)) };
}
