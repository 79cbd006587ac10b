/**
 * The edit redactor's edges, for mutation testing (scripts/mutation/targets.mjs, pii-edit): the span
 * an edit changed, the text it stores, which `reject` values an edit brought in, the names of
 * redacted paths, and how much of a file an edit scans (the window: the lines or paragraphs around
 * the change, or two margins when neither is near). The window is measured by what scanning costs:
 * libphonenumber parses one per phone-like number scanned, so an edit's parse count says how many
 * lines of numbers its window read, and it must equal the count of a scan of exactly the documented
 * window (src/pii/edit.ts, lineWindow).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { phoneParseStats } from '../../src/pii/detectors/phone.js';
import {
  CONTEXT_AFTER,
  CONTEXT_BEFORE,
  MAX_REPLACED_SEARCH,
  MAX_WRAPPED_VALUE,
  changedSpan,
  redactEdit,
  redactPathValues,
  replaceFindings,
} from '../../src/pii/edit.js';
import { scan } from '../../src/pii/engine.js';
import type { PiiFinding } from '../../src/pii/types.js';

function parses(run: () => unknown): number {
  const before = phoneParseStats.parses;
  run();
  return phoneParseStats.parses - before;
}

const key = (f: PiiFinding) => `${f.type}:${f.start}:${f.end}`;

describe('changedSpan', () => {
  it.each([
    ['abc', 'abc', { start: 3, beforeEnd: 3, afterEnd: 3 }],
    ['', '', { start: 0, beforeEnd: 0, afterEnd: 0 }],
    ['abc', 'abXc', { start: 2, beforeEnd: 2, afterEnd: 3 }],
    ['abXc', 'abc', { start: 2, beforeEnd: 3, afterEnd: 2 }],
    ['abc', 'aYc', { start: 1, beforeEnd: 2, afterEnd: 2 }],
    ['abc', 'xbc', { start: 0, beforeEnd: 1, afterEnd: 1 }],
    ['abc', 'abx', { start: 2, beforeEnd: 3, afterEnd: 3 }],
    // A repeated character: the common prefix is taken first, the suffix only from what is left.
    ['aa', 'aaa', { start: 2, beforeEnd: 2, afterEnd: 3 }],
    ['aaa', 'aa', { start: 2, beforeEnd: 3, afterEnd: 2 }],
    ['abab', 'ab', { start: 2, beforeEnd: 4, afterEnd: 2 }],
    ['', 'xyz', { start: 0, beforeEnd: 0, afterEnd: 3 }],
    ['xyz', '', { start: 0, beforeEnd: 3, afterEnd: 0 }],
    ['one two three', 'one 2 three', { start: 4, beforeEnd: 7, afterEnd: 5 }],
  ])('%j -> %j', (before, after, span) => {
    expect(changedSpan(before, after)).toEqual(span);
    // The span describes the edit exactly: the text around it is shared, and it maps one text onto the other.
    expect(after.slice(0, span.start) + after.slice(span.start, span.afterEnd) + before.slice(span.beforeEnd)).toBe(
      after,
    );
  });

  // The galloping comparison (runs of 64, 128, ... code units, then a binary search) against the
  // unit-by-unit definition, on texts long enough for several runs on both sides, edits at and
  // around run boundaries, and repeats (where a wrong suffix bound would overlap the prefix).
  const naive = (before: string, after: string) => {
    const max = Math.min(before.length, after.length);
    let start = 0;
    while (start < max && before[start] === after[start]) start++;
    let tail = 0;
    while (tail < max - start && before[before.length - 1 - tail] === after[after.length - 1 - tail]) tail++;
    return { start, beforeEnd: before.length - tail, afterEnd: after.length - tail };
  };
  it('finds the same span as comparing unit by unit, over many edits of texts up to 2,500 units', () => {
    const textOf = (units: string[], maxLength: number) =>
      fc.array(fc.constantFrom(...units), { maxLength, size: 'max' }).map((parts) => parts.join(''));
    // Two letters (long repeats, where a misplaced run would still match) or letters, a two-byte
    // letter, an astral character and line breaks; short or long cuts and insertions.
    const base = fc.oneof(textOf(['a', 'b'], 2500), textOf(['a', 'b', '\u00e9', '\u{1F600}', '\n'], 2500));
    const insert = fc.oneof(textOf(['a', 'b'], 5), textOf(['a', 'b'], 300));
    let long = 0;
    fc.assert(
      fc.property(base, fc.nat(), fc.oneof(fc.nat(40), fc.nat(400)), insert, (text, a, cut, piece) => {
        const at = a % (text.length + 1);
        const after = text.slice(0, at) + piece + text.slice(at + cut);
        expect(changedSpan(text, after)).toEqual(naive(text, after));
        expect(changedSpan(after, text)).toEqual(naive(after, text));
        if (text.length > 1000) long++;
      }),
      { numRuns: 600 },
    );
    expect(long).toBeGreaterThan(100); // texts long enough for several runs were generated
  });

  it('finds the same span as comparing unit by unit, for edits anywhere in long texts', () => {
    const base =
      Array.from({ length: 700 }, (_, i) => String.fromCharCode(97 + ((i * 7) % 26))).join('') + '\u{1F600}'.repeat(20);
    let checked = 0;
    for (const at of [
      0,
      1,
      63,
      64,
      65,
      127,
      128,
      300,
      639,
      640,
      700,
      base.length - 65,
      base.length - 64,
      base.length - 1,
      base.length,
    ]) {
      for (const [cut, insert] of [
        [0, 'X'],
        [1, ''],
        [1, 'XY'],
        [130, ''],
        [0, 'Z'.repeat(200)],
        [3, 'a'],
      ] as const) {
        const after = base.slice(0, at) + insert + base.slice(Math.min(base.length, at + cut));
        expect(changedSpan(base, after), `at ${at}, cut ${cut}, insert ${insert.length}`).toEqual(naive(base, after));
        expect(changedSpan(after, base)).toEqual(naive(after, base));
        checked++;
      }
    }
    const repeated = 'ab'.repeat(300);
    for (const n of [0, 1, 64, 65, 128, 200]) {
      expect(changedSpan(repeated, repeated + 'ab'.repeat(n))).toEqual(naive(repeated, repeated + 'ab'.repeat(n)));
      expect(changedSpan(repeated + 'ab'.repeat(n), repeated)).toEqual(naive(repeated + 'ab'.repeat(n), repeated));
    }
    expect(checked).toBe(90);
    // A long replacement of the same length: both texts differ over 200 units, so the common suffix
    // (a few hundred units) is well short of what is left after the prefix, and a chunk step that
    // went past it would be seen.
    for (const at of [0, 64, 300]) {
      const replaced = base.slice(0, at) + 'Q'.repeat(200) + base.slice(at + 200);
      expect(changedSpan(base, replaced), `replaced at ${at}`).toEqual(naive(base, replaced));
      expect(changedSpan(base, replaced)).toEqual({ start: at, beforeEnd: at + 200, afterEnd: at + 200 });
    }
    // Texts whose common suffix is exactly one run, built so that a run compared at a shifted place
    // (the wrong end of a slice, or of the text it is matched against) would match the next.
    const [p, v, z, w] = ['p'.repeat(200), 'V'.repeat(64), 'Z'.repeat(64), 'w'.repeat(300)];
    for (const [before, after] of [
      [p + v + z + z, w + v + z],
      [p + v + z, w + z + z],
    ]) {
      expect(changedSpan(before!, after!)).toEqual(naive(before!, after!));
      expect(changedSpan(before!, after!)).toEqual({
        start: 0,
        beforeEnd: before!.length - 64,
        afterEnd: after!.length - 64,
      });
    }
  });
});

describe('replaceFindings', () => {
  it('replaces each finding with its placeholder and keeps the rest', () => {
    const text = 'mail a@b.com or call 555';
    const findings: PiiFinding[] = [
      { type: 'EMAIL', start: 5, end: 12 },
      { type: 'PHONE', start: 21, end: 24 },
    ];
    expect(replaceFindings(text, findings)).toBe('mail [REDACTED:EMAIL] or call [REDACTED:PHONE]');
    expect(replaceFindings(text, [])).toBe(text);
    expect(replaceFindings(text, [{ type: 'SECRET', start: 0, end: 4 }])).toBe('[REDACTED:SECRET] a@b.com or call 555');
  });
});

describe('redactEdit: whether the redaction reaches into stored text (redactsStored)', () => {
  // The address is 20 units long: stored text counts when it is most of it (11 units or more).
  it.each([
    ['brought in whole', 'mail x\n', false],
    ['10 of 20 units stored before the change (a half is not most)', 'mail jane.roe@e##########\n', false],
    ['11 of 20 units stored before the change', 'mail jane.roe@ex#########\n', true],
    ['10 of 20 units stored after the change', 'mail ##########xample.com\n', false],
    ['11 of 20 units stored after the change', 'mail #########example.com\n', true],
    ['stored in two pieces around the change', 'mail jane.roexexample.com\n', true],
    ['stored whole, the edit elsewhere on the line', 'mail jane.roe@example.com\n'.replace('mail', 'mall'), true],
  ])('%s', (_name, before, expected) => {
    const after = 'mail jane.roe@example.com\n';
    const result = redactEdit(before, after);
    expect(result.findings.map((f) => after.slice(f.start, f.end))).toEqual(['jane.roe@example.com']);
    expect(result.redactsStored).toBe(expected);
  });

  it('a label written before a value stored unlabelled; a value sharing only a first unit with what it replaced', () => {
    expect(redactEdit('x Tr0ut&Pine2023\n', 'password: Tr0ut&Pine2023\n').redactsStored).toBe(true);
    const replaced = redactEdit('password: TBD\n', 'password: Tr0ut&Pine2023\n');
    expect(replaced.text).toBe('password: [REDACTED:SECRET]\n');
    expect(replaced.redactsStored).toBe(false);
    // Nothing found: nothing redacted, stored or not.
    expect(redactEdit('a\n', 'b\n').redactsStored).toBe(false);
  });

  it('a line rewritten around a value it kept: the value stood in the replaced text', () => {
    // The changed span covers the value (the text changes on both sides of it).
    const before = 'x Tr0ut&Pine2023 (old)\n';
    const after = 'password: Tr0ut&Pine2023 (new)\n';
    expect(changedSpan(before, after)).toEqual({ start: 0, beforeEnd: 21, afterEnd: 29 });
    expect(redactEdit(before, after).redactsStored).toBe(true);
    // The same rewrite with a different value: nothing of it was stored.
    expect(redactEdit(before, 'password: Salm0n&Oak2024 (new)\n').redactsStored).toBe(false);
    // The value just before the replaced text, cut by the span's start (slack of one value's length).
    expect(redactEdit('mail jane.roe@example.co\n', 'mail jane.roe@example.com\n').redactsStored).toBe(true);
  });

  it('past the search bound an edit counts as redacting stored text without a search', () => {
    const value = 'jane.roe@example.com';
    const rewritten = (n: number) => `${'#'.repeat(n)}\n`;
    // A replaced text of n units with one finding: searched up to the bound, not past it.
    const at = (n: number) => redactEdit(rewritten(n), `mail ${value}\n`).redactsStored;
    expect(at(MAX_REPLACED_SEARCH - 2 * value.length - 1)).toBe(false);
    expect(at(MAX_REPLACED_SEARCH)).toBe(true);
  });
});

describe('redactEdit: what is stored and what is refused', () => {
  it('the stored text has the values near the change replaced', () => {
    const before = 'Notes\nCall Jane.\n';
    const after = 'Notes\nCall Jane at jane.roe@example.com.\n';
    const result = redactEdit(before, after);
    expect(result.text).toBe('Notes\nCall Jane at [REDACTED:EMAIL].\n');
    expect(result.findings).toEqual([{ type: 'EMAIL', start: 19, end: 39 }]);
    expect(result.rejected).toEqual([]);
  });

  it('an edit that brings in a value of a reject type is refused for that type', () => {
    const options = { policy: { EMAIL: 'reject' as const } };
    const result = redactEdit('Notes\nCall Jane.\n', 'Notes\nCall jane.roe@example.com or +49 30 1234567.\n', options);
    expect(result.rejected).toEqual(['EMAIL']);
  });

  it('a reject-type value the file had already, before or after the change, does not refuse the edit', () => {
    const options = { policy: { EMAIL: 'reject' as const } };
    const before = 'a jane.roe@example.com b\nmiddle\nc john.doe@example.org d\n';
    // The change between the two addresses shifts the second one.
    const after = before.replace('middle', 'the middle part');
    const result = redactEdit(before, after, options);
    expect(result.rejected).toEqual([]);
    expect(result.findings.map((f) => after.slice(f.start, f.end))).toEqual([
      'jane.roe@example.com',
      'john.doe@example.org',
    ]);
    // Only shifted by the edit: the same value.
    expect(redactEdit(before, before.replace('c john', 'cc john'), options).rejected).toEqual([]);
    // Changed by the edit: a new value.
    expect(redactEdit(before, before.replace('john.doe', 'jim.doe'), options).rejected).toEqual(['EMAIL']);
    expect(redactEdit(before, before.replace('jane.roe', 'jan.roe'), options).rejected).toEqual(['EMAIL']);
    // Made longer by the edit: a new value.
    const longer = before.replace('john.doe@example.org', 'john.doe@example.org.uk');
    expect(redactEdit(before, longer, options).rejected).toEqual(['EMAIL']);
  });

  it('a value the edit only moved with the text around it is the same value; one it copied is new', () => {
    const options = { policy: { EMAIL: 'reject' as const } };
    const before = 'x jane.roe@example.com\n';
    expect(redactEdit(before, 'jane.roe@example.com\n', options).rejected).toEqual([]);
    expect(redactEdit(before, 'x jane.roe@example.com\nx jane.roe@example.com\n', options).rejected).toEqual(['EMAIL']);
    expect(redactEdit(before, 'jane.roe@example.com x jane.roe@example.com\n', options).rejected).toEqual(['EMAIL']);
  });

  it('options without a policy: values redacted, nothing refused', () => {
    const result = redactEdit('x\n', 'x jane.roe@example.com\n', {});
    expect(result.text).toBe('x [REDACTED:EMAIL]\n');
    expect(result.rejected).toEqual([]);
  });

  it('a value that ends right where the change starts was there before: not brought in', () => {
    const options = { policy: { EMAIL: 'reject' as const } };
    const before = 'a jane.roe@example.com.\n';
    const after = 'a jane.roe@example.com!\n';
    expect(changedSpan(before, after).start).toBe(before.indexOf('.\n'));
    expect(redactEdit(before, after, options).rejected).toEqual([]);
  });

  it('a value before the change that only the change made a value was brought in', () => {
    const options = { policy: { US_SSN: 'reject' as const } };
    // "078 05 1123 45" is one longer number; with the "45" gone, "078 05 1123" is an SSN of its own.
    const before = 'he wrote 078 05 1123 45 down\n';
    const after = 'he wrote 078 05 1123 xy down\n';
    const span = changedSpan(before, after);
    expect(
      redactEdit(before, after, options).findings.map((f) => [after.slice(f.start, f.end), f.end <= span.start]),
    ).toEqual([['078 05 1123', true]]);
    expect(redactEdit(before, after, options).rejected).toEqual(['US_SSN']);
  });

  it('only the types under reject are refused, in the order of PII_TYPES', () => {
    const options = { policy: { PHONE: 'reject' as const, EMAIL: 'reject' as const, IP_ADDRESS: 'redact' as const } };
    const result = redactEdit('x\n', 'x +49 30 1234567 jane.roe@example.com ip 8.8.4.4\n', options);
    expect(result.rejected).toEqual(['EMAIL', 'PHONE']);
    const none = redactEdit('x\n', 'x ip 8.8.4.4\n', options);
    expect(none.rejected).toEqual([]);
    expect(none.text).toBe('x ip [REDACTED:IP_ADDRESS]\n');
  });
});

describe('redactPathValues', () => {
  const tag = (value: string) => `<${value}>`;

  it('replaces each value by a name made of its type and the tag of its lower-cased text, segment by segment', () => {
    const path = '/memories/Jane.Roe@Example.com/notes/+49 30 1234567.md';
    const result = redactPathValues(path, tag);
    expect(result.path).toBe(
      '/memories/REDACTED-EMAIL-<jane.roe@example.com>/notes/REDACTED-PHONE-<+49 30 1234567>.md',
    );
    expect(result.findings).toEqual([
      { type: 'EMAIL', start: 10, end: 30 },
      { type: 'PHONE', start: 37, end: 51 },
    ]);
    expect(result.findings.map((f) => path.slice(f.start, f.end))).toEqual(['Jane.Roe@Example.com', '+49 30 1234567']);
    expect(result.rejected).toEqual([]);
  });

  it('two values in one segment, text around them kept', () => {
    const path = '/memories/a jane@example.com b ip 8.8.4.4 c';
    const result = redactPathValues(path, tag);
    expect(result.path).toBe('/memories/a REDACTED-EMAIL-<jane@example.com> b ip REDACTED-IP_ADDRESS-<8.8.4.4> c');
    expect(result.findings.map((f) => path.slice(f.start, f.end))).toEqual(['jane@example.com', '8.8.4.4']);
  });

  it('a path without values is returned as it is', () => {
    expect(redactPathValues('/memories/notes/today.md', tag)).toEqual({
      path: '/memories/notes/today.md',
      findings: [],
      rejected: [],
    });
  });

  it('reports the reject types it found', () => {
    const result = redactPathValues('/memories/jane@example.com/x', tag, { policy: { EMAIL: 'reject' } });
    expect(result.rejected).toEqual(['EMAIL']);
  });
});

// ---- the scan window ----

/** `count` lines, each with one phone-like number that costs libphonenumber a parse. */
function numberLines(count: number, from = 0): string {
  let text = '';
  for (let i = from; i < from + count; i++) text += `Telefon: 030 ${String(1000000 + i * 7)} ok\n`;
  return text;
}

function lineWindowOf(
  text: string,
  from: number,
  to: number,
): { ws: number; we: number; keepFrom: number; keepTo: number } {
  const b = text.lastIndexOf('\n', from - CONTEXT_AFTER - 1);
  const e = text.indexOf('\n', to + CONTEXT_BEFORE);
  return {
    ws: b === -1 ? 0 : Math.max(0, b - CONTEXT_BEFORE - MAX_WRAPPED_VALUE),
    we: e === -1 ? text.length : Math.min(text.length, e + 1 + MAX_WRAPPED_VALUE + CONTEXT_AFTER),
    keepFrom: b === -1 ? 0 : b + 1,
    keepTo: e === -1 ? text.length : e + 1,
  };
}

function paragraphWindowOf(
  text: string,
  from: number,
  to: number,
): { ws: number; we: number; keepFrom: number; keepTo: number } {
  const b = text.lastIndexOf('\n\n', from - CONTEXT_AFTER - 2);
  const e = text.indexOf('\n\n', to + CONTEXT_BEFORE);
  return {
    ws: b === -1 ? 0 : Math.max(0, b - CONTEXT_BEFORE),
    we: e === -1 ? text.length : Math.min(text.length, e + 1 + CONTEXT_AFTER),
    keepFrom: b === -1 ? 0 : b + 1,
    keepTo: e === -1 ? text.length : e + 1,
  };
}

/** redactEdit scanned exactly `window`: as many parses as a scan of it, and its findings kept. */
function expectScanned(
  before: string,
  after: string,
  window: { ws: number; we: number; keepFrom: number; keepTo: number },
  margin?: number,
): void {
  const slice = after.slice(window.ws, window.we);
  const expectedParses = parses(() => scan(slice));
  const expected = scan(slice)
    .findings.map((f) => ({ type: f.type, start: f.start + window.ws, end: f.end + window.ws }))
    .filter((f) => f.end > window.keepFrom && f.start < window.keepTo);
  let result: ReturnType<typeof redactEdit> | undefined;
  const got = parses(() => (result = redactEdit(before, after, undefined, margin)));
  expect(got).toBe(expectedParses);
  expect(result?.findings.map(key)).toEqual(expected.map(key));
}

describe('redactEdit: how much it scans', () => {
  it('a note of lines: the lines around the change, with the context and wrap allowance on either side', () => {
    const before = numberLines(200);
    const at = before.indexOf('ok', 100 * 29);
    const after = `${before.slice(0, at)}OK${before.slice(at + 2)}`;
    const window = lineWindowOf(after, at, at + 2);
    expect(window.ws).toBeGreaterThan(0);
    expect(window.we).toBeLessThan(after.length);
    expectScanned(before, after, window);
    // A scan of a few lines, not of the 200.
    expect(parses(() => redactEdit(before, after))).toBeLessThan(parses(() => scan(after)) / 5);
  });

  it('an edit near the start or the end of a note: the window runs to that end', () => {
    const before = numberLines(60);
    for (const at of [before.indexOf('ok'), before.lastIndexOf('ok'), before.indexOf('ok', 40)]) {
      const after = `${before.slice(0, at)}OK${before.slice(at + 2)}`;
      expectScanned(before, after, lineWindowOf(after, at, at + 2));
    }
  });

  it('an insertion and a deletion: the window is taken around what the text after the edit holds', () => {
    const before = numberLines(120);
    const at = before.indexOf('ok', 60 * 29);
    const inserted = `${before.slice(0, at)}and more words here ${before.slice(at)}`;
    expectScanned(before, inserted, lineWindowOf(inserted, at, at + 20));
    const deleted = `${before.slice(0, at)}${before.slice(at + 60)}`;
    expectScanned(before, deleted, lineWindowOf(deleted, at, at));
  });

  it('a note of short paragraphs: the paragraphs around the change, when that is less than the lines', () => {
    let before = '';
    for (let p = 0; p < 80; p++) before += `${numberLines(2, p * 2)}\n`;
    const at = before.indexOf('ok', Math.floor(before.length / 2));
    const after = `${before.slice(0, at)}OK${before.slice(at + 2)}`;
    const paragraphs = paragraphWindowOf(after, at, at + 2);
    const lines = lineWindowOf(after, at, at + 2);
    expect(paragraphs.we - paragraphs.ws).toBeLessThan(lines.we - lines.ws);
    expectScanned(before, after, paragraphs);
  });

  it('a note of long paragraphs: the lines, when they are less', () => {
    let before = '';
    for (let p = 0; p < 4; p++) before += `${numberLines(40, p * 40)}\n`;
    const at = before.indexOf('ok', 60 * 29);
    const after = `${before.slice(0, at)}OK${before.slice(at + 2)}`;
    const paragraphs = paragraphWindowOf(after, at, at + 2);
    const lines = lineWindowOf(after, at, at + 2);
    expect(lines.we - lines.ws).toBeLessThan(paragraphs.we - paragraphs.ws);
    expectScanned(before, after, lines);
  });

  it('one paragraph break close on one side only: the smaller window still wins', () => {
    const before = `${numberLines(40)}\n${numberLines(3, 40)}\n${numberLines(40, 43)}`;
    const at = before.indexOf('ok', 41 * 29);
    const after = `${before.slice(0, at)}OK${before.slice(at + 2)}`;
    const paragraphs = paragraphWindowOf(after, at, at + 2);
    const lines = lineWindowOf(after, at, at + 2);
    const smaller = paragraphs.we - paragraphs.ws < lines.we - lines.ws ? paragraphs : lines;
    expectScanned(before, after, smaller);
  });

  it('no line break within two margins of the change: two margins scanned, one kept', () => {
    const margin = 400;
    const long = 'Telefon: 030 1234567 ok '.repeat(200); // one line of 4,800 characters
    const before = `\n\n${long}\n\n`;
    const at = before.indexOf('ok', 2400);
    const after = `${before.slice(0, at)}OK${before.slice(at + 2)}`;
    expectScanned(
      before,
      after,
      { ws: at - 2 * margin, we: at + 2 + 2 * margin, keepFrom: at - margin, keepTo: at + 2 + margin },
      margin,
    );
  });

  it('the margin rule on one side only: a line break far before the change, one near after it', () => {
    const margin = 400;
    const long = 'Telefon: 030 1234567 ok '.repeat(100);
    const before = `\n\nstart\n${long}\n${numberLines(30)}`;
    const at = before.indexOf('ok', long.length - 300);
    const after = `${before.slice(0, at)}OK${before.slice(at + 2)}`;
    expectScanned(
      before,
      after,
      { ws: at - 2 * margin, we: at + 2 + 2 * margin, keepFrom: at - margin, keepTo: at + 2 + margin },
      margin,
    );
  });

  it('two margins reaching the start or the end of the text: everything there is kept', () => {
    const margin = 400;
    const long = 'Telefon: 030 1234567 ok '.repeat(30); // 720 characters
    const before = `\n\n${long}${'x'.repeat(2000)}\n\n`;
    const at = before.indexOf('ok', 300);
    const after = `${before.slice(0, at)}OK${before.slice(at + 2)}`;
    expectScanned(before, after, { ws: 0, we: at + 2 + 2 * margin, keepFrom: 0, keepTo: at + 2 + margin }, margin);
  });

  it('a line break exactly a context length before the change is not yet the window edge', () => {
    // b is the last line break at least CONTEXT_AFTER characters before the change: a value that
    // ends on the line before a closer break is kept.
    for (const gap of [CONTEXT_AFTER - 1, CONTEXT_AFTER, CONTEXT_AFTER + 1, CONTEXT_AFTER + 2]) {
      const head = `${numberLines(20)}mail jane.roe@example.com\n`;
      const before = `${head}${'y'.repeat(gap)}ok tail\n${numberLines(20, 30)}`;
      const at = head.length + gap;
      const after = `${before.slice(0, at)}OK${before.slice(at + 2)}`;
      expectScanned(before, after, lineWindowOf(after, at, at + 2));
    }
  });

  it("a value right before the window edge's line break is left to the scan that stored it; one after it is read", () => {
    const before = `${numberLines(20)}call +49 30 1234567\n${'z'.repeat(100)} ok\n${numberLines(20, 40)}`;
    const at = before.indexOf('z ok') + 2;
    const after = `${before.slice(0, at)}OK${before.slice(at + 2)}`;
    const window = lineWindowOf(after, at, at + 2);
    // The phone number ends at the edge break: outside the kept range.
    expect(after.indexOf('1234567\n') + 7).toBe(window.keepFrom - 1);
    expectScanned(before, after, window);
    expect(redactEdit(before, after).findings.map((f) => after.slice(f.start, f.end))).not.toContain('+49 30 1234567');
  });

  it('no line break before the change, far from the start: the window runs to the start', () => {
    const margin = 400;
    const before = `${'Telefon: 030 1234567 ok '.repeat(60)}\n${numberLines(10)}`;
    const at = before.indexOf('ok', 1200);
    const after = `${before.slice(0, at)}OK${before.slice(at + 2)}`;
    expectScanned(before, after, lineWindowOf(after, at, at + 2), margin);
    expect(lineWindowOf(after, at, at + 2).ws).toBe(0);
  });

  it('no line break after the change, far from the end: the window runs to the end', () => {
    const margin = 400;
    const before = `${numberLines(10)}${'Telefon: 030 1234567 ok '.repeat(60)}`;
    const at = before.indexOf('ok', 400);
    const after = `${before.slice(0, at)}OK${before.slice(at + 2)}`;
    expectScanned(before, after, lineWindowOf(after, at, at + 2), margin);
    expect(lineWindowOf(after, at, at + 2).we).toBe(after.length);
  });

  it('a line break exactly two margins away still bounds the window; one more character and the margin rule applies', () => {
    const margin = 300;
    const filler = 'Telefon: 030 1234567 ok '.repeat(40); // no line break
    for (const extra of [0, 1]) {
      // Before the change: the break that ends `head` is 2 * margin + extra before it.
      const head = `\n\n${numberLines(20)}`;
      const lead = filler.slice(0, 2 * margin + extra - 1);
      const before = `${head}${lead}ok${filler.slice(0, 200)}\n${numberLines(20, 50)}\n\n`;
      const at = head.length + lead.length;
      const after = `${before.slice(0, at)}OK${before.slice(at + 2)}`;
      expect(at - after.lastIndexOf('\n', at - CONTEXT_AFTER - 1)).toBe(2 * margin + extra);
      const marginRule = {
        ws: at - 2 * margin,
        we: at + 2 + 2 * margin,
        keepFrom: at - margin,
        keepTo: at + 2 + margin,
      };
      expectScanned(before, after, extra === 0 ? lineWindowOf(after, at, at + 2) : marginRule, margin);
    }
    for (const extra of [0, 1]) {
      // After the change: the first break at least CONTEXT_BEFORE after it is 2 * margin + extra after its end.
      const head = `\n\n${numberLines(40)}${filler.slice(0, 100)}`;
      const before = `${head}ok${filler.slice(0, 2 * margin + extra)}\n${numberLines(20, 50)}\n\n`;
      const at = head.length;
      const after = `${before.slice(0, at)}OK${before.slice(at + 2)}`;
      expect(after.indexOf('\n', at + 2 + CONTEXT_BEFORE) - (at + 2)).toBe(2 * margin + extra);
      const marginRule = {
        ws: at - 2 * margin,
        we: at + 2 + 2 * margin,
        keepFrom: at - margin,
        keepTo: at + 2 + margin,
      };
      expectScanned(before, after, extra === 0 ? lineWindowOf(after, at, at + 2) : marginRule, margin);
    }
  });

  it('a line break far away and no blank line anywhere: the whole text is scanned', () => {
    const margin = 300;
    const long = 'Telefon: 030 1234567 ok '.repeat(100);
    const before = `start\n${long}\n${numberLines(30)}`;
    const at = before.indexOf('ok', long.length - 300);
    const after = `${before.slice(0, at)}OK${before.slice(at + 2)}`;
    expectScanned(before, after, { ws: 0, we: after.length, keepFrom: 0, keepTo: after.length }, margin);
  });

  it('a blank line close before the change and none after: the paragraph window when it is smaller', () => {
    const before = `${numberLines(40)}\n${numberLines(5, 40)}`;
    const at = before.indexOf('ok', before.lastIndexOf('\n\n') + 2 + 3 * 29);
    const after = `${before.slice(0, at)}OK${before.slice(at + 2)}`;
    const paragraphs = paragraphWindowOf(after, at, at + 2);
    const lines = lineWindowOf(after, at, at + 2);
    expect(paragraphs.we).toBe(lines.we);
    expect(paragraphs.ws).toBeGreaterThan(lines.ws);
    expectScanned(before, after, paragraphs);
  });

  it('a blank line close after the change and none before: the paragraph window when it is smaller', () => {
    // The blank line is the first line break CONTEXT_BEFORE after the change.
    const before = `${numberLines(10)}\n${numberLines(40, 10)}`; // lines of 24 characters
    const at = before.indexOf('ok', 24);
    const after = `${before.slice(0, at)}OK${before.slice(at + 2)}`;
    const paragraphs = paragraphWindowOf(after, at, at + 2);
    const lines = lineWindowOf(after, at, at + 2);
    expect(paragraphs.ws).toBe(lines.ws);
    expect(paragraphs.we).toBeLessThan(lines.we);
    expectScanned(before, after, paragraphs);
  });

  it('the margin rule: a value ending exactly one margin before the change, or starting one margin after it, is not kept', () => {
    const margin = 400;
    const pad = (n: number) => 'w '.repeat(n / 2);
    const value = 'jane.roe@example.com';
    for (const shift of [-1, 0, 1]) {
      const left = `\n\n${pad(800)}${value}${' '.repeat(margin + shift - 2)}`;
      const right = `${' '.repeat(margin + shift)}${value} ${pad(800)}\n\n`;
      const before = `${left}ok${right}`;
      const at = left.length;
      const after = `${before.slice(0, at)}OK${before.slice(at + 2)}`;
      const found = redactEdit(before, after, undefined, margin).findings.map((f) => after.slice(f.start, f.end));
      // Left: the value ends margin + shift - 2 characters before the change.
      // Right: it starts margin + shift characters after the change's end.
      const expectLeft = margin + shift - 2 < margin;
      const expectRight = margin + shift < margin;
      expect(found.length, `shift ${shift}`).toBe((expectLeft ? 1 : 0) + (expectRight ? 1 : 0));
    }
  });

  it('the margin rule with two margins reaching the start: everything from the start is kept', () => {
    // A key header (with no key after it) near the change forces the margin rule.
    const margin = 400;
    const before = `-----BEGIN RSA PRIVATE KEY-----\nmail jane.roe@example.com ${'w '.repeat(300)}ok ${'w '.repeat(300)}mail john.doe@example.org ${'v '.repeat(1200)}\n\n`;
    const at = before.indexOf('ok');
    const after = `${before.slice(0, at)}OK${before.slice(at + 2)}`;
    expect(at).toBeGreaterThan(margin + 60);
    expect(at).toBeLessThan(2 * margin);
    const found = redactEdit(before, after, undefined, margin).findings.map((f) => after.slice(f.start, f.end));
    expect(found).toEqual(['jane.roe@example.com']);
  });

  it('the margin rule with two margins reaching the end: everything to the end is kept', () => {
    const margin = 400;
    const before = `\n\n${'v '.repeat(1200)}ok -----BEGIN RSA PRIVATE KEY-----\n${'w '.repeat(300)}mail john.doe@example.org\n`;
    const at = before.indexOf('ok');
    const after = `${before.slice(0, at)}OK${before.slice(at + 2)}`;
    expect(after.length - at).toBeGreaterThan(margin + 60);
    expect(after.length - at).toBeLessThan(2 * margin);
    const found = redactEdit(before, after, undefined, margin).findings.map((f) => after.slice(f.start, f.end));
    expect(found).toEqual(['john.doe@example.org']);
  });

  it("a private key header exactly at the window's end: the line window (the header is outside it)", () => {
    const lines = numberLines(400);
    const at = lines.indexOf('ok', 200 * 29);
    const after0 = `${lines.slice(0, at)}OK${lines.slice(at + 2)}`;
    const window = lineWindowOf(after0, at, at + 2);
    const header = '-----BEGIN RSA PRIVATE KEY-----';
    const before = `${lines.slice(0, window.we)}${header}${lines.slice(window.we)}`;
    const after = `${before.slice(0, at)}OK${before.slice(at + 2)}`;
    expect(after.indexOf('-----BEGIN ')).toBe(lineWindowOf(after, at, at + 2).we);
    expectScanned(before, after, lineWindowOf(after, at, at + 2), 2000);
  });

  it('a private key header near the window: the margin rule', () => {
    const margin = 2000;
    const lines = numberLines(400);
    const at = lines.indexOf('ok', 200 * 29);
    const header = '-----BEGIN RSA PRIVATE KEY-----\n';
    const window = lineWindowOf(lines, at, at + 2);
    // A header within one margin before the window's start: the margin rule applies.
    const near = `${lines.slice(0, window.ws - margin + 40)}${header}${lines.slice(window.ws - margin + 40)}`;
    const atNear = at + header.length;
    const afterNear = `${near.slice(0, atNear)}OK${near.slice(atNear + 2)}`;
    expectScanned(
      near,
      afterNear,
      { ws: atNear - 2 * margin, we: atNear + 2 + 2 * margin, keepFrom: atNear - margin, keepTo: atNear + 2 + margin },
      margin,
    );
    // Farther than a margin before it: the line window.
    const far = `${lines.slice(0, window.ws - margin - 100)}${header}${lines.slice(window.ws - margin - 100)}`;
    const atFar = at + header.length;
    const afterFar = `${far.slice(0, atFar)}OK${far.slice(atFar + 2)}`;
    expectScanned(far, afterFar, lineWindowOf(afterFar, atFar, atFar + 2), margin);
    // Just after the window's end: the line window too.
    const after = `${lines.slice(0, at)}OK${lines.slice(at + 2)}`;
    const late = `${after.slice(0, window.we + 10)}${header}${after.slice(window.we + 10)}`;
    const lateBefore = `${lines.slice(0, window.we + 10)}${header}${lines.slice(window.we + 10)}`;
    expectScanned(lateBefore, late, lineWindowOf(late, at, at + 2), margin);
  });
});
