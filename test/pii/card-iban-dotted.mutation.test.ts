/**
 * Card numbers written with dots, as several European and Latin American
 * locales print them, in every grouping a brand prints, in running text and in quoted JSON and YAML
 * values; and numbers glued to a word by '-' or '_' (in text and in file names). Hard negatives:
 * versions, dates, decimals and digits that only look grouped.
 */
import { describe, expect, it } from 'vitest';
import { redact } from '../../src/pii/index.js';

const cards = (text: string): string[] =>
  redact(text)
    .findings.filter((f) => f.type === 'CREDIT_CARD')
    .map((f) => text.slice(f.start, f.end));

describe('CREDIT_CARD: dots as the group separator', () => {
  it.each([
    ['Visa 4-4-4-4', 'Karte 4111.1111.1111.1111 gültig', '4111.1111.1111.1111'],
    ['Mastercard 4-4-4-4', 'tarjeta 5555.5555.5555.4444.', '5555.5555.5555.4444'],
    ['Amex 4-6-5', 'amex 3782.822463.10005 ok', '3782.822463.10005'],
    ['Diners 4-6-4', 'diners 3056.930902.5904 ok', '3056.930902.5904'],
    ['UnionPay 19 digits, 4-4-4-4-3', 'UnionPay 6205.5000.0000.0000.004 ok', '6205.5000.0000.0000.004'],
    ['in a quoted JSON value', '{"card": "5555.5555.5555.4444"}', '5555.5555.5555.4444'],
    ['in a quoted YAML value', "card: '4111.1111.1111.1111'", '4111.1111.1111.1111'],
    ['at the end of the text', 'cartão 4111.1111.1111.1111', '4111.1111.1111.1111'],
  ])('%s', (_name, text, value) => {
    expect(cards(text)).toEqual([value]);
  });

  it('keeps one separator throughout: dots mixed with spaces or dashes are not one number', () => {
    expect(cards('n 4111.1111 1111.1111 x')).toEqual([]);
    expect(cards('n 4111.1111-1111.1111 x')).toEqual([]);
  });

  it('opens with a group of four, as a printed card does', () => {
    expect(cards('n 411.11111.1111.1111 x')).toEqual([]);
  });

  it('is not the head of a longer dotted number, nor preceded by one', () => {
    expect(cards('v 4111.1111.1111.1111.5 x')).toEqual([]);
    expect(cards('v 1.4111.1111.1111.1111 x')).toEqual([]);
  });

  it.each([
    ['a Luhn failure', 'Karte 4111.1111.1111.1112 x'],
    ['an unknown issuer', 'n 9111.1111.1111.1111 x'],
    ['a version', 'version 4.1.1.1 and 10.0.19045.3803'],
    ['a date and time', '2024.01.15 12:30 and 15.01.2024'],
    ['coordinates', '48.8566, 2.3522 and 40.7128,-74.0060'],
    ['an amount', 'total 4111.11 EUR and 1.234.567,89'],
    ['an IP address', 'host 10.123.45.67'],
  ])('leaves %s alone', (_name, text) => {
    expect(cards(text)).toEqual([]);
  });
});

describe('CREDIT_CARD: glued to a word by - or _', () => {
  it.each([
    ['card-4111111111111111 x', '4111111111111111'],
    ['x_4111111111111111', '4111111111111111'],
    ['file scan_4111111111111111.pdf', '4111111111111111'],
    ['receipt-4111-1111-1111-1111.txt', '4111-1111-1111-1111'],
    ['4111111111111111_receipt.pdf', '4111111111111111'],
    ['4111111111111111-scan.png', '4111111111111111'],
    ['Visa_4111.1111.1111.1111', '4111.1111.1111.1111'],
  ])('%s', (text, value) => {
    expect(cards(text)).toEqual([value]);
  });

  it.each([
    ['a letter right before', 'x4111111111111111'],
    ['a letter right after', '4111111111111111x'],
    ['a digit before the dash (a longer number)', '12-4111111111111111'],
    ['a digit before the underscore', '7_4111111111111111'],
    ['a digit after the underscore', '4111111111111111_7'],
    ['a dash then a non-letter', '#-4111111111111111'],
    ['an underscore then a non-letter after', '4111111111111111_.'],
    ['a hash with the number inside', 'sha 4111111111111111abc'],
  ])('not with %s', (_name, text) => {
    expect(cards(text)).toEqual([]);
  });

  it('an underscore at the very start or end has no word on its far side', () => {
    expect(cards('_4111111111111111')).toEqual([]);
    expect(cards('4111111111111111_')).toEqual([]);
  });
});
