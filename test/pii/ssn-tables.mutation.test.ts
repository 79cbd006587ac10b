/**
 * SSNs in CSV, TSV and Markdown tables, under an SSN-like column header,
 * where the cell has no context word beside it, with or without dashes; and the table context's own
 * edges (table.ts): quoted cells, the Markdown rule line, which line is the header, blocks.
 */
import { describe, expect, it } from 'vitest';
import { headerOfCell, newHeaderCache } from '../../src/pii/detectors/table.js';
import { redact } from '../../src/pii/index.js';

const ssns = (text: string): string[] =>
  redact(text)
    .findings.filter((f) => f.type === 'US_SSN')
    .map((f) => text.slice(f.start, f.end));

describe('US_SSN: a table column headed SSN', () => {
  it.each([
    ['CSV, dashed', 'name,ssn\nJane,123-45-6789\n', ['123-45-6789']],
    ['CSV, bare', 'name,ssn\nBob,234567890\n', ['234567890']],
    ['CSV, spaced, not the last column', 'name,SSN,zip\nBob,345 67 8901,10001\n', ['345 67 8901']],
    ['CSV, first column', 'ssn,name\n234567890,Jane\n', ['234567890']],
    ['CSV, a quoted cell with a comma before', 'id,name,ssn\n1,"Doe, Jane",234-56-7890\n', ['234-56-7890']],
    ['CSV, a quoted SSN', 'name,ssn\nJane,"234567890"\n', ['234567890']],
    ['CSV, a number after it', 'ssn,age\n234-56-7890,42\n', ['234-56-7890']],
    ['CSV, CRLF lines', 'name,ssn\r\nJane,234567890\r\nBob,345678901\r\n', ['234567890', '345678901']],
    ['semicolon CSV', 'employee_ssn;name\n234567890;Jane\n', ['234567890']],
    ['TSV', 'Name\tSocial Security No.\nJane\t234567890\n', ['234567890']],
    ['Markdown', '| Name | Phone | SSN |\n|---|---|---|\n| Jane | 555-0100 | 234567890 |\n', ['234567890']],
    ['Markdown, aligned rule', '| name | ssn |\n|:--|--:|\n| Jane | 234.56.7890 |\n', ['234.56.7890']],
    [
      'a long CSV, each row',
      'name,ssn\n' + Array.from({ length: 50 }, (_, i) => `p${i},2345678${String(10 + i)}`).join('\n'),
      Array.from({ length: 50 }, (_, i) => `2345678${String(10 + i)}`),
    ],
    ['the tax id header', 'name,TIN\nJane,234567890\n', ['234567890']],
    ['an SSN number header (the SSN word wins)', 'name|SSN number\nJane|234567890\n', ['234567890']],
    [
      'a dashed SSN under another header is still one',
      '| ticket | ssn? |\n|---|---|\n| 234-56-7890 | x |\n',
      ['234-56-7890'],
    ],
    ['a TSV header that names nothing: the bare rule as before', 'who\twhat\nJane\t234567890\n', ['234567890']],
    ['a CSV header that names nothing: a comma before needs an SSN header', 'who,what\nJane,234567890\n', []],
  ])('%s', (_name, text, expected) => {
    expect(ssns(text)).toEqual(expected);
  });

  it.each([
    ['a number column', 'id,order\n1,234567890\n2,234-56-7890\n'],
    ['a bare comma-grouped amount', 'total 1,234,567,890'],
    ['an SSN shape then a comma and a digit, no table', 'a 234-56-7890,12'],
    ['a comma before, no header', 'x,234567890'],
    ['the header line itself', 'ssn,234567890\n'],
    ['a row wider than its header', 'ssn\nJane,234567890\n'],
    ['a header block broken by a plain line', 'name,ssn\nthat was all\nJane,234567890\n'],
    ['a row under another table', 'name,ssn\nJane,x\n\nname,phone\nBob,234567890\n'],
    ['an SKU column', 'sku;qty\n345678901;3\n'],
    ['a ticket column in Markdown', '| ticket | opened |\n|---|---|\n| 456789012 | 2024-01-15 |\n'],
    ['a ZIP+4 column', 'zip,plus4\n02110-1234,x\n'],
    ['an id column, spaced digits', 'user_id\tname\n234 56 7890\tJane\n'],
    ['a phone number column', '| name | phone number |\n|---|---|\n| Jane | 234.56.7890 |\n'],
    ['invalid SSA ranges', 'name,ssn\nJane,000-12-3456\nBob,900123456\n'],
  ])('not in %s', (_name, text) => {
    expect(ssns(text)).toEqual([]);
  });
});

describe('table context (headerOfCell)', () => {
  const header = (text: string, value: string): string | undefined => {
    const at = text.indexOf(value);
    return headerOfCell(text, at, at + value.length, newHeaderCache());
  };

  it('names the header cell over a cell, by column', () => {
    expect(header('a,b,c\n1,2,3', '2')).toBe('b');
    expect(header('a,b,c\n1,2,3', '3')).toBe('c');
    expect(header('a\tb\n1\t2', '1')).toBe('a');
    expect(header('a;b\n1;2', '2')).toBe('b');
  });

  it('reads quoted cells whole, delimiters inside them included', () => {
    expect(header('"x, y",b\n"1, 2",3', '3')).toBe('b');
  });

  it('skips the Markdown rule line and keeps leading pipes aligned', () => {
    expect(header('| a | b |\n|---|:-:|\n| 1 | 2 |', '2')).toBe(' b ');
  });

  it('takes the first line of the block as the header, however far up', () => {
    const text = `a,b\n${'1,x\n'.repeat(30)}9,2`;
    expect(header(text, '9,2'.slice(2))).toBe('b');
  });

  it('carries the header from one cell to the next through its cache', () => {
    const text = 'a,b\n1,x\n2,y\n3,z';
    const cache = newHeaderCache();
    const at = (v: string) => text.indexOf(v);
    expect(headerOfCell(text, at('x'), at('x') + 1, cache)).toBe('b');
    expect(cache.get(44)).toEqual({ lineStart: text.indexOf('1,x'), headerStart: 0 });
    expect(headerOfCell(text, at('z'), at('z') + 1, cache)).toBe('b');
    expect(headerOfCell(text, at('3'), at('3') + 1, cache)).toBe('a');
  });

  it('a cache of another delimiter is not used', () => {
    const text = 'a,b\nc;d,x\n1,5;2';
    const cache = newHeaderCache();
    const one = text.indexOf('1');
    expect(headerOfCell(text, one, one + 1, cache)).toBe('a');
    const two = text.lastIndexOf('2');
    expect(headerOfCell(text, two, two + 1, cache)).toBe('d,x');
  });

  it('is nothing for a cell that is not a whole cell', () => {
    expect(header('a,b\n1,x 2', '2')).toBeUndefined();
    expect(header('a,b\n1,2 x', '2')).toBeUndefined();
    expect(header('a,b\n1;2,3', '2')).toBeUndefined();
    expect(header('a b\n1 2', '2')).toBeUndefined();
  });

  it('is nothing on the header line, or past the columns of the header', () => {
    expect(header('a,b', 'b')).toBeUndefined();
    expect(header('a\n1,2', '2')).toBeUndefined();
  });

  it('allows spaces and quotes around the cell', () => {
    expect(header('a, b\n1,  "2"  ', '2')).toBe(' b');
    expect(header('a,b\r\n1,2\r\n', '2')).toBe('b');
  });

  it('cuts a long header cell, and looks no further than 4096 characters into a row', () => {
    expect(header(`a,${'h'.repeat(100)}\n1,2`, '2')).toBe('h'.repeat(64));
    const wide = `${'a,'.repeat(2100)}z\n${'1,'.repeat(2100)}2`;
    expect(header(wide, '2')).toBeUndefined();
  });
});
