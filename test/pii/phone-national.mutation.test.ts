/**
 * National formats that used to pass: Brazilian mobiles with the ninth digit and the
 * area code in brackets (BR is not a default region), Belgian numbers written with dots. Hard
 * negatives: IP addresses, versions, amounts and product codes of the same shapes.
 */
import { describe, expect, it } from 'vitest';
import { redact } from '../../src/pii/index.js';

const phones = (text: string): string[] =>
  redact(text)
    .findings.filter((f) => f.type === 'PHONE')
    .map((f) => text.slice(f.start, f.end));

describe('PHONE: Brazilian mobiles, (DD) 9XXXX-XXXX', () => {
  it.each([
    ['ligue (21) 99876-5432 amanhã', '(21) 99876-5432'],
    ['(11) 98765-4321', '(11) 98765-4321'],
    ['WhatsApp: (11) 98765-4321', '(11) 98765-4321'],
    ['contato (31)99123-4567.', '(31)99123-4567'],
  ])('%s', (text, value) => {
    expect(phones(text)).toEqual([value]);
  });

  it.each([
    ['an area code Brazil does not have', 'código (10) 90000-0000'],
    ['a landline shape without the ninth digit, no phone word', 'loja (11) 3456-7890'],
    ['no brackets and no phone word', 'lote 11 98765-4321'],
    ['a plus that is no Brazilian number', 'x +(21) 99876-5432'],
  ])('not %s', (_name, text) => {
    expect(phones(text)).toEqual([]);
  });
});

describe('PHONE: Belgian numbers with dots', () => {
  it.each([
    ['Tel: 02.123.45.67', '02.123.45.67'],
    ['bel 02.123.45.67 maar', '02.123.45.67'],
    ['gsm 0475.12.34.56', '0475.12.34.56'],
    ['+32 475.12.34.56', '+32 475.12.34.56'],
  ])('%s', (text, value) => {
    expect(phones(text)).toEqual([value]);
  });

  it.each([
    ['an IP address', 'host 10.123.45.67'],
    ['a version with a leading zero, too short', 'ver 01.12.34.56'],
    ['a dotted quad of short groups, no leading zero', 'code 2.123.45.67'],
    ['a date', 'le 02.12.2024'],
    ['a model number', 'model 021-234-567'],
    ['an item number', 'item 021-234-567'],
    ['an article number', 'article 021-234-567'],
  ])('not %s', (_name, text) => {
    expect(phones(text)).toEqual([]);
  });
});
