/**
 * The card and IBAN detectors' edges, for mutation testing (scripts/mutation/targets.mjs,
 * pii-card-iban): every issuer range at its first and last prefix and the lengths its network
 * allows, how a printed number may be grouped and wrapped, what may touch it, and IBAN lengths,
 * case, separators and labels.
 */
import { describe, expect, it } from 'vitest';
import { knownIssuer } from '../../src/pii/detectors/card.js';
import { redact } from '../../src/pii/index.js';

const found = (text: string, type: string): string[] =>
  redact(text)
    .findings.filter((f) => f.type === type)
    .map((f) => text.slice(f.start, f.end));

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Issuer prefixes just inside and just outside each network's range, with the lengths it allows. */
const ISSUERS: Array<[prefix: string, lengths: number[], network: string]> = [
  ['4', [13, 16, 19], 'Visa'],
  ['51', [16], 'Mastercard'],
  ['55', [16], 'Mastercard'],
  ['2221', [16], 'Mastercard 2-series'],
  ['2720', [16], 'Mastercard 2-series'],
  ['2721', [], 'none'],
  ['2220', [], 'none'],
  ['34', [15], 'American Express'],
  ['37', [15], 'American Express'],
  ['35', [], 'none (below JCB)'],
  ['6011', range(16, 19), 'Discover'],
  ['644', range(16, 19), 'Discover'],
  ['649', range(16, 19), 'Discover'],
  ['643', range(12, 19), 'Maestro range'],
  ['65', range(16, 19), 'Discover'],
  ['622126', range(16, 19), 'Discover co-branded'],
  ['622925', range(16, 19), 'Discover co-branded'],
  ['62', range(16, 19), 'UnionPay'],
  ['81', range(16, 19), 'UnionPay'],
  ['3528', range(16, 19), 'JCB'],
  ['3589', range(16, 19), 'JCB'],
  ['3527', [], 'none'],
  ['3590', [], 'none'],
  ['300', range(14, 19), 'Diners'],
  ['305', range(14, 19), 'Diners'],
  ['306', [], 'none'],
  ['36', range(14, 19), 'Diners'],
  ['38', range(14, 19), 'Diners'],
  ['39', range(14, 19), 'Diners'],
  ['3095', range(14, 19), 'Diners'],
  ['3094', [], 'none'],
  ['3096', [], 'none'],
  ['2200', range(16, 19), 'Mir'],
  ['2204', range(16, 19), 'Mir'],
  ['2205', [], 'none'],
  ['2199', [], 'none'],
  ['50', range(12, 19), 'Maestro'],
  ['56', range(12, 19), 'Maestro'],
  ['69', range(12, 19), 'Maestro'],
  ['70', [], 'none'],
  ['82', [16], 'RuPay'],
  ['83', [], 'none'],
  ['9792', [16], 'Troy'],
  ['9791', [], 'none'],
  ['9793', [], 'none'],
  ['1', [15], 'UATP'],
  ['0', [], 'none'],
  ['80', [], 'none'],
];

describe('knownIssuer', () => {
  it.each(ISSUERS)('%s (%s)', (prefix, lengths, network) => {
    const allowed = range(10, 21).filter((n) => knownIssuer(prefix.padEnd(n, '0')));
    expect(allowed, network).toEqual(lengths);
  });
});

describe('CREDIT_CARD: layouts', () => {
  it.each([
    ['4111 1111 1111 1111', true],
    ['4111-1111-1111-1111', true],
    ['4111111111111111', true],
    ['3782 822463 10005', true],
    ['4111 111 111111111', true],
    ['4111\n1111\n1111\n1111', true],
    ['4111\r\n1111 1111 1111', true],
    ['378282246310005', true],
    ['5555555555554444', true],
    ['2223003122003222', true],
    ['6011111111111117', true],
    ['3530111333300000', true],
    ['30569309025904', true],
    ['4222222222222', true],
    ['4111 1111-1111 1111', false], // two separators
    ['411 1111 1111 11111', false], // the first group is four digits
    ['4111 11 1111111111', false], // no group shorter than three
    ['4111\r1111 1111 1111', false],
    ['4111  1111 1111 1111', false],
    ['4111 \n1111 1111 1111', false],
    ['4111_1111_1111_1111', false],
    ['4111111111111112', false], // Luhn
    ['4444444444444444', false], // one digit repeated (and Luhn-valid)
    ['41111111111111111111', false], // 20 digits
    ['4111 1111 1111 1', false],
  ] as const)('%j: %s', (text, isCard) => {
    expect(found(`card ${text}`, 'CREDIT_CARD')).toEqual(isCard ? [text] : []);
  });

  it('the longest prefix ending at a group boundary is the card', () => {
    expect(found('card 4111 1111 1111 1111 12/27', 'CREDIT_CARD')).toEqual(['4111 1111 1111 1111']);
    expect(found('card 4111 1111 1111 1111 1234', 'CREDIT_CARD')).toEqual(['4111 1111 1111 1111']);
    expect(found('card 4111 1111 1111 1111 111', 'CREDIT_CARD')).toEqual(['4111 1111 1111 1111']);
    expect(found('card 5555 5555 5555 4444 5', 'CREDIT_CARD')).toEqual(['5555 5555 5555 4444']);
    // 19 digits in groups that fail Luhn: the 16 before them.
    expect(found('card 4111 1111 1111 1111 113', 'CREDIT_CARD')).toEqual(['4111 1111 1111 1111']);
  });

  it('glued to a word, a decimal point or a dash it is part of something else', () => {
    for (const text of [
      'x4111111111111111',
      '.4111111111111111',
      '-4111111111111111',
      '4111111111111111x',
      '4111111111111111.5',
      '_4111111111111111',
      '94111111111111111',
    ])
      expect(found(`card ${text}`, 'CREDIT_CARD'), text).toEqual([]);
    for (const text of ['4111111111111111.', '4111111111111111\n', '(4111111111111111)', '4111111111111111,'])
      expect(found(`card ${text}`, 'CREDIT_CARD'), text).toEqual(['4111111111111111']);
    expect(found('4111111111111111', 'CREDIT_CARD')).toEqual(['4111111111111111']);
  });

  it('two cards in a row are both found, and a run after a non-card still is', () => {
    expect(found('4111111111111111 5555555555554444', 'CREDIT_CARD')).toEqual(['4111111111111111', '5555555555554444']);
    expect(found('12345 4111111111111111', 'CREDIT_CARD')).toEqual(['4111111111111111']);
  });
});

describe('IBAN', () => {
  const valid = [
    'DE89370400440532013000',
    'GB82WEST12345698765432',
    'FR1420041010050500013M02606',
    'NL91ABNA0417164300',
    'BE68539007547034',
    'NO9386011117947',
    'MT84MALT011000012345MTLCAST001S',
    'LC55HEMM000100010012001200023015',
  ];
  it.each(valid)('%s, electronic, printed in groups, and in lower case', (iban) => {
    expect(found(`IBAN ${iban}`, 'IBAN')).toEqual([iban]);
    const grouped = iban.replace(/(.{4})(?=.)/g, '$1 ');
    expect(found(`pay to ${grouped}.`, 'IBAN')).toEqual([grouped]);
    expect(found(`pay to ${iban.toLowerCase()}`, 'IBAN')).toEqual([iban.toLowerCase()]);
  });

  it('one character short or long, a broken checksum, an unknown country, or mixed case is not one', () => {
    expect(found('IBAN DE8937040044053201300', 'IBAN')).toEqual([]);
    expect(found('IBAN DE893704004405320130001', 'IBAN')).toEqual([]);
    expect(found('IBAN DE89370400440532013001', 'IBAN')).toEqual([]);
    expect(found('IBAN XX89370400440532013000', 'IBAN')).toEqual([]);
    expect(found('IBAN De89370400440532013000', 'IBAN')).toEqual([]);
    expect(found('IBAN gb82WEST12345698765432', 'IBAN')).toEqual([]);
    expect(found('IBAN GB82west12345698765432', 'IBAN')).toEqual([]);
  });

  it('groups may be split by a space, a no-break space, a dash or a line break, after the first four characters only', () => {
    for (const sep of [' ', '\u00a0', '-', '\n', '\r\n'])
      expect(
        found(`IBAN DE89${sep}3704${sep}0044${sep}0532${sep}0130${sep}00`, 'IBAN'),
        JSON.stringify(sep),
      ).toHaveLength(1);
    expect(found('IBAN DE8 9370400440532013000', 'IBAN')).toEqual([]);
    expect(found('IBAN DE89  370400440532013000', 'IBAN')).toEqual([]);
    expect(found('IBAN DE89\r370400440532013000', 'IBAN')).toEqual([]);
    expect(found('IBAN DE89 3704 0044 0532 0130 00 ', 'IBAN')).toEqual(['DE89 3704 0044 0532 0130 00']);
  });

  it('it must start and end a word, unless an IBAN label says what it is and the next word is upper case', () => {
    for (const glue of ['x', '1', '_', 'é'])
      expect(found(`pay ${glue}DE89370400440532013000`, 'IBAN'), glue).toEqual([]);
    expect(found('pay DE89370400440532013000x', 'IBAN')).toEqual([]);
    expect(found('pay DE89370400440532013000X', 'IBAN')).toEqual([]);
    expect(found('IBAN: DE89370400440532013000X', 'IBAN')).toEqual(['DE89370400440532013000']);
    expect(found('IBAN：NL91ABNA0417164300APIキー', 'IBAN')).toEqual(['NL91ABNA0417164300']);
    expect(found('iban DE89370400440532013000X', 'IBAN')).toEqual(['DE89370400440532013000']);
    expect(found('IBAN: DE89370400440532013000x', 'IBAN')).toEqual([]);
    expect(found('IBAN number DE89370400440532013000X', 'IBAN')).toEqual([]);
  });

  it('two IBANs in a row', () => {
    expect(found('DE89370400440532013000 GB82WEST12345698765432', 'IBAN')).toEqual([
      'DE89370400440532013000',
      'GB82WEST12345698765432',
    ]);
  });
});
