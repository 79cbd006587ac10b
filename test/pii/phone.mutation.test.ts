/**
 * The phone detector's edges, for mutation testing (scripts/mutation/targets.mjs, pii-phone):
 * which digit runs cost a libphonenumber parse per configured region (the national shapes table
 * that keeps dates, ids and amounts from being parsed), the characters that may stand before and
 * after a number, and the words that make a run a phone number or something else.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_PHONE_REGIONS, phoneParseStats } from '../../src/pii/detectors/phone.js';
import { redact } from '../../src/pii/index.js';

/**
 * The national numbers each region's plan can hold (leading digit, digit count), as the detector
 * is meant to pre-test them before it parses: a run outside its region's shape is never parsed
 * for that region. Regions not listed are always parsed.
 */
const SHAPES: Record<string, (f: number, n: number) => boolean> = {
  US: (f, n) => (n === 10 && f >= 2) || (n === 11 && f === 1),
  CA: (f, n) => (n === 10 && f >= 2) || (n === 11 && f === 1),
  GB: (f, n) => f === 0 && n >= 9 && n <= 11,
  DE: (f, n) => f === 0 && n >= 6 && n <= 13,
  FR: (f, n) => f === 0 && n === 10,
  ES: (f, n) => n === 9 && f >= 6,
  IT: (f, n) => (f === 0 && n >= 6 && n <= 11) || (f === 3 && n >= 9 && n <= 10),
  NL: (f, n) => f === 0 && n === 10,
  JP: (f, n) => f === 0 && n >= 10 && n <= 11,
  AU: (f, n) => f === 0 && n === 10,
  CH: (f, n) => f === 0 && n === 10,
  AT: (f, n) => f === 0 && n >= 5 && n <= 13,
  BE: (f, n) => f === 0 && n >= 9 && n <= 10,
  IE: (f, n) => f === 0 && n >= 7 && n <= 10,
  IN: (f, n) => (n === 10 && f >= 6) || (f === 0 && n === 11),
  BR: (f, n) => n >= 10 && n <= 11 && f >= 1,
  MX: (_f, n) => n === 10,
  CN: (f, n) => (f === 1 && n === 11) || (f === 0 && n >= 10 && n <= 12),
  KR: (f, n) => f === 0 && n >= 9 && n <= 11,
  PT: (f, n) => n === 9 && (f === 2 || f === 9),
  PL: (f, n) => n === 9 && f >= 1,
  SE: (f, n) => f === 0 && n >= 7 && n <= 10,
  FI: () => true, // not in the table: always parsed
};

function parsesFor(text: string, phoneRegions: string[]): number {
  const before = phoneParseStats.parses;
  redact(text, { phoneRegions });
  return phoneParseStats.parses - before;
}

describe('PHONE: which digit runs are parsed for a region', () => {
  // A bare run of 7 to 15 digits after a phone word: it reaches the regional test, and is parsed
  // once for the region when its leading digit and length fit that region's plan, never otherwise.
  // Digits 7 and 3 alternate after the first, so that no run is a card, an IBAN or an SSN.
  for (const [region, shape] of Object.entries(SHAPES)) {
    it(`${region}: parsed exactly when the run fits the region's shape`, () => {
      const wrong: string[] = [];
      for (let f = 0; f <= 9; f++) {
        for (let n = 7; n <= 15; n++) {
          let digits = String(f);
          while (digits.length < n) digits += digits.length % 2 === 0 ? '3' : '7';
          const parses = parsesFor(`Telefon: ${digits}`, [region]);
          if (parses > 0 !== shape(f, n)) wrong.push(`${digits}: ${parses} parses`);
        }
      }
      expect(wrong).toEqual([]);
    });
  }

  it('the default regions are the fifteen most likely, each tried where the run fits it', () => {
    expect(DEFAULT_PHONE_REGIONS).toEqual([
      'US',
      'GB',
      'DE',
      'FR',
      'ES',
      'IT',
      'NL',
      'JP',
      'CN',
      'KR',
      'AU',
      'CH',
      'AT',
      'BE',
      'PT',
    ]);
    // Runs no region's plan holds: each default region whose shape fits costs one parse, no other does.
    for (const digits of [
      '0000000000',
      '10000000000',
      '2000000000',
      '600000000',
      '300000000',
      '00000000000',
      '000000000',
    ]) {
      const first = Number(digits[0]);
      const fitting = DEFAULT_PHONE_REGIONS.filter((r) => SHAPES[r]!(first, digits.length)).length;
      const before = phoneParseStats.parses;
      redact(`Telefon: ${digits}`);
      expect(phoneParseStats.parses - before, digits).toBe(fitting);
    }
  });

  it('each region of several is tried only where the run fits it', () => {
    // 10 zeros: GB, DE and FR fit, US (10 digits need 2-9 first) does not; no plan holds the number.
    expect(parsesFor('Telefon: 0000000000', ['US', 'GB', 'DE', 'FR'])).toBe(3);
    // A valid German number: parsing stops at the first region that takes it.
    expect(parsesFor('Telefon: 0301234567', ['US', 'DE', 'GB', 'FR'])).toBe(1);
    // 11 digits from 1: only US of these.
    expect(parsesFor('Telefon: 13737373737', ['US', 'GB', 'DE', 'FR'])).toBe(1);
  });
});

const phones = (text: string, phoneRegions?: string[]): string[] =>
  redact(text, phoneRegions ? { phoneRegions } : {})
    .findings.filter((f) => f.type === 'PHONE')
    .map((f) => text.slice(f.start, f.end));

describe('PHONE: what may stand before and after a number', () => {
  it('a number glued to a word, a decimal point, a dash, a slash, #, +, $, €, £, _ or @ is not read from there', () => {
    expect(phones('Tel: 030 12345678')).toEqual(['030 12345678']);
    // The glued group is skipped; the group after it is a number of its own.
    for (const glue of ['x', '.', '-', '/', '#', '$', '€', '£', '_', '@'])
      expect(phones(`Tel: ${glue}030 12345678`), glue).toEqual(['12345678']);
    expect(phones('Tel: ++49 30 12345678')).toEqual(['30 12345678']);
  });

  it('after a slash, an international or bracketed number is still read', () => {
    expect(phones('Tel: /+49 30 12345678')).toEqual(['+49 30 12345678']);
    expect(phones('Tel: /(030) 1234567')).toEqual(['(030) 1234567']);
  });

  it("'+' must be followed by digits (one space allowed) or a bracket", () => {
    expect(phones('Tel: + 49 30 12345678')).toEqual(['49 30 12345678']);
    expect(phones('Tel: +x49 30 12345678')).toEqual(['30 12345678']);
    expect(phones('Tel: +(0)30 12345678')).toEqual(['30 12345678']);
    expect(phones('Tel: + (49) 30 12345678')).toEqual(['(49) 30 12345678']);
  });

  it('a letter, a ":digit", a thousands group or % right after makes it something else', () => {
    expect(phones('Tel: 030 12345678x')).toEqual([]);
    expect(phones('Tel: 030 12345678:5')).toEqual([]);
    expect(phones('Tel: 030 12345678,123')).toEqual([]);
    expect(phones('Tel: 030 12345678%')).toEqual([]);
    // Not a thousands group: four digits, two digits; a full stop or a colon ending the sentence.
    expect(phones('Tel: 030 12345678,1234')).toEqual(['030 12345678']);
    expect(phones('Tel: 030 12345678,12')).toEqual(['030 12345678']);
    expect(phones('Tel: 030 12345678.')).toEqual(['030 12345678']);
    expect(phones('Tel: 030 12345678:')).toEqual(['030 12345678']);
  });

  it('a currency after the number makes it an amount', () => {
    for (const unit of [
      ' €',
      ' EUR',
      ' usd',
      ' euros',
      ' dollars',
      '円',
      ' chf',
      ' gbp',
      ' jpy',
      ' $',
      ' £',
      ' ¥',
      '€',
    ])
      expect(phones(`Tel 030 12345678${unit}`), unit).toEqual([]);
    expect(phones('Tel 030 12345678 eurox')).toEqual(['030 12345678']);
  });

  it('a currency before the number makes it an amount', () => {
    for (const unit of ['€ ', 'EUR ', 'usd ', '$', '£ ', '¥ ', 'gbp ', 'chf ', 'jpy '])
      expect(phones(`${unit}030 12345678`), unit).toEqual([]);
    for (const unit of ['cad ', 'aud ']) expect(phones(`${unit}(415) 555-2671`), unit).toEqual([]);
    expect(phones('xcad (415) 555-2671')).toEqual(['(415) 555-2671']);
  });

  it('digits running into a more specific finding are cut before it', () => {
    expect(redact('Tel 030 1234567 4111 1111 1111 1111').findings.map((f) => f.type)).toEqual(['CREDIT_CARD']);
    expect(phones('Tel 030 12345678 DE89 3704 0044 0532 0130 00')).toEqual(['030 12345678']);
  });
});

describe('PHONE: dates, decimals and dotted figures', () => {
  it.each([
    'Phone 2024-03-0012',
    'Phone 2024-01-15 10',
    'Phone 15.03.2024 12',
    'Phone 1999-2024',
    'Phone 2019 - 20',
    'Phone 2024-03-15',
    'Phone 15/03/2024',
    'Tel 030.12345678',
    'Tel 123.456.789',
    'Tel 030/123.4567',
    'Tel (030) 123/45.67',
  ])('%s is not a phone number', (text) => {
    expect(phones(text)).toEqual([]);
  });

  it.each(['Tel 030.1234.5678', 'Tel 030/1234567', 'Tel 030-123.4567', 'Tel +49 30/123.4567'])('%s is one', (text) => {
    expect(phones(text)).toEqual([text.slice(4)]);
  });
});

describe('PHONE: the words before a number', () => {
  const words = [
    'phone',
    'tel',
    'tel.',
    'call',
    'mobile',
    'cell',
    'fax',
    'whatsapp',
    'sms',
    'text',
    'ring',
    'contact',
    'dial',
    'telefon',
    'handy',
  ];
  const more = [
    'rufnummer',
    'nummer',
    'anruf',
    'téléphone',
    'telephone',
    'tél',
    'portable',
    'appel',
    'numéro',
    'numero',
    'teléfono',
    'telefono',
    'móvil',
    'movil',
  ];
  const rest = ['celular', 'llam', 'cellulare', '電話', '携帯', '連絡', '☎', '📞', 'TEL', 'Phone'];
  it.each([...words, ...more, ...rest])('a bare national number after %s is a phone number', (word) => {
    expect(phones(`${word} 4155552671`)).toEqual(['4155552671']);
  });

  it.each([
    'note',
    'xtel',
    'telx',
    'xcall',
    'xcell',
    'xfax',
    'xsms',
    'texts',
    'xtext',
    'ringo',
    'xdial',
    'xhandy',
    'xtél',
  ])('after %s it is not', (word) => {
    expect(phones(`${word} 4155552671`)).toEqual([]);
  });

  const strong = [
    'tel',
    'tel.',
    'mobile',
    'cell',
    'fax',
    'whatsapp',
    'telefon',
    'handy',
    'téléphone',
    'telephone',
    'tél',
    'portable',
    'teléfono',
    'telefono',
    'móvil',
    'movil',
    'celular',
    'cellulare',
    '電話',
    '携帯',
    '☎',
    '📞',
    'phone',
  ];
  it.each(strong)('after %s, a number of a region not configured is read too', (word) => {
    expect(phones(`${word} 0412 345 678`, ['US'])).toEqual(['0412 345 678']);
  });

  it.each([
    'call',
    'sms',
    'telefonica',
    'rufnummer',
    'appel',
    'numéro',
    'llam',
    '連絡',
    'note',
    'xtel',
    'telx',
    'xcell',
    'xfax',
    'xhandy',
    'xtél',
    'contact',
  ])('after %s (not a word that says phone) it is not', (word) => {
    expect(phones(`${word} 0412 345 678`, ['US'])).toEqual([]);
  });

  it('the word that says phone must stand within 24 characters before the number, any phone word within 40', () => {
    expect(phones(`phone${' '.repeat(19)}0412 345 678`, ['US'])).toEqual(['0412 345 678']);
    expect(phones(`phone${' '.repeat(20)}0412 345 678`, ['US'])).toEqual([]);
    expect(phones(`phone${' '.repeat(35)}4155552671`)).toEqual(['4155552671']);
    expect(phones(`phone${' '.repeat(36)}4155552671`)).toEqual([]);
  });

  it('numbers of regions not configured are looked up for at most 256 numbers per text', () => {
    const text = Array.from({ length: 300 }, () => 'tel 0412 345 678').join('\n');
    expect(phones(text, ['US'])).toHaveLength(256);
    // The budget is per text: the next text starts afresh.
    expect(phones('tel 0412 345 678', ['US'])).toEqual(['0412 345 678']);
  });

  const ids = [
    'order',
    'ticket',
    'invoice',
    'ref',
    'reference',
    'id',
    'no',
    'nr',
    'case',
    'booking',
    'tracking',
    'serial',
    'sku',
    'part',
    'isbn',
    'issn',
    'ean',
  ];
  const moreIds = [
    'account',
    'acct',
    'po',
    'batch',
    'lot',
    'build',
    'job',
    'bestellung',
    'rechnungsnr',
    'kundennr',
    'vertragsnr',
    'commande',
    'facture',
    'dossier',
  ];
  const restIds = [
    'pedido',
    'factura',
    'referencia',
    'expediente',
    '注文',
    '番号',
    '伝票',
    'order number',
    'order no.',
    'ref #',
    'id:',
    'case nr.',
    'order n°',
    'booking id =',
    'ORDER',
    'Nr.:',
  ];
  it.each([...ids, ...moreIds, ...restIds])(
    'a grouped number after the identifier word %s is an identifier, unless a phone word says otherwise',
    (word) => {
      expect(phones(`${word} 415-555-2671`)).toEqual([]);
      expect(phones(`${word} phone 415-555-2671`)).toEqual(['415-555-2671']);
    },
  );

  it.each(['xorder', 'note', 'orders', 'auftragsnummer'])('after %s it is a phone number', (word) => {
    expect(phones(`${word} 415-555-2671`)).toEqual(['415-555-2671']);
  });
});

describe('PHONE: international and fictional numbers', () => {
  it('a possible number in a fictional range after a phone word is still reported; a too short one is not', () => {
    expect(phones('Phone: (555) 123-4567')).toEqual(['(555) 123-4567']);
    expect(phones('Phone: +1 555 123 4567')).toEqual(['+1 555 123 4567']);
    expect(phones('Phone: +1 555 0100')).toEqual([]);
    expect(phones('Phone: +44 20 7946 0958')).toEqual(['+44 20 7946 0958']);
  });

  it('seven bare digits after a phone word are too short to be read in any region', () => {
    expect(phones('Telefon: 2345678')).toEqual([]);
    expect(phones('Telefon: 1234567')).toEqual([]);
  });
});

describe('PHONE: how a run of digits and separators is read', () => {
  it.each([
    // Brackets: one group of one to six digits near the start, closed soon.
    ['Tel (415) 555-2671', ['(415) 555-2671']],
    ['Tel (415)555-2671', ['(415)555-2671']],
    ['Tel (415) 555-2671)', ['(415) 555-2671']],
    ['Tel +49 (0)30 12345678', ['+49 (0)30 12345678']],
    ['Tel (0)30 12345678', ['(0)30 12345678']],
    ['Tel 1 (415) 555-2671', ['1 (415) 555-2671']],
    ['Tel 123 (415) 555-2671', ['123 (415) 555-2671']],
    ['Tel 1234 (415) 555-2671', ['(415) 555-2671']], // more than three digits before the bracket
    ['Tel +4930 (0) 12345678', ['(0) 12345678']],
    ['Tel (030) (123) 4567', ['(123) 4567']], // one bracketed group only
    ['Tel (12345) 678901', ['(12345) 678901']],
    ['Tel (123456) 78901', ['(123456) 78901']],
    ['Tel (1234567) 8901', []], // not closed within six digits
    ['Tel () 4155552671', ['4155552671']],
    ['Tel 415) 555-2671', ['555-2671']], // a closing bracket without an opening one ends the run
    ['Tel (415 555-2671', ['415 555-2671']],
    ['Phone: +(49) 30 12345678', ['30 12345678']],
    ['Phone: + 1 415 555 2671', ['1 415 555 2671']],
    ['Phone: + 44 20 7946 0958', ['44 20 7946 0958']],
    // Single separators only; at most 15 digits; at most 26 characters from the first.
    ['Tel 030  1234567', []],
    ['Tel 0 3 0 1 2 3 4 5 6 7 8 9 0', ['0 3 0 1 2 3 4 5 6 7 8 9 0']],
    ['Tel 0 3 0 1 2 3 4 5 6 7 8 9 0 1', []],
    ['Tel 030123456789012', ['030123456789012']],
    ['Tel 0301234567890123', []],
    ['Tel 030-1234-5678-9012-3456-7890', []],
    ['Tel 030 12 34 56 78 90 12 34 5', []],
    ['Tel 030123', []],
    ['Tel 0301234', ['0301234']],
    // The whole run first, then the prefixes ending at the last groups.
    ['call 0171 1234567 2x', ['0171 1234567']],
    ['call 0171 1234567 22 33', ['0171 1234567 22']],
    ['call 0171 1234567 2 3 4', ['0171 1234567 2 3']],
    ['call 0171 1234567 234x', ['0171 1234567']], // a group boundary, not any digit: "…7 23" is no prefix
    ['call 0171 1234567 2345x', ['0171 1234567']],
    ['Tel 030/123.4567 12', ['030/123.4567']],
    ['Tel 030.123/4567', []],
    ['Tel 030 123.4567', ['030 123.4567']],
    // Several numbers in a row.
    ['Tel 030 12345678, 030 87654321', ['030 12345678', '030 87654321']],
    ['Tel 030 12345678 / 030 87654321', ['030 12345678', '030 87654321']],
    ['Tel 030 12345678 or 040 87654321', ['030 12345678', '040 87654321']],
    ['SSN 123-45-6789 030 1234567', ['030 1234567']],
    ['ip 10.1.2.3 030 1234567', ['030 1234567']],
    ['Tel 030 1234567 ip 10.1.2.3', ['030 1234567']],
    ['Tel 030 1234567 123-45-6789', []],
  ] as const)('%s', (text, expected) => {
    expect(phones(text)).toEqual(expected);
  });
});

describe('PHONE: digits a more specific detector has claimed', () => {
  // The phone detector skips the digits of cards, IBANs, SSNs and IP addresses found before it: a
  // run read through them would run on into the number after them and lose it.
  it.each([
    ['card 4111 1111 1111 1111 030 1234567', ['CREDIT_CARD', 'PHONE']],
    ['IBAN DE89 3704 0044 0532 0130 00 030 1234567', ['IBAN', 'PHONE']],
    ['ip 10.1.2.3 030 1234567', ['IP_ADDRESS', 'PHONE']],
    // Found later by an earlier detector: the claims are taken in the order of the text.
    ['ip 10.1.2.3 030 1234567, card 4111 1111 1111 1111', ['IP_ADDRESS', 'PHONE', 'CREDIT_CARD']],
    ['ip 10.1.2.3 (030) 1234567, card 4111 1111 1111 1111', ['IP_ADDRESS', 'PHONE', 'CREDIT_CARD']],
    ['SSN 123-45-6789 030 1234567, card 4111 1111 1111 1111', ['US_SSN', 'PHONE', 'CREDIT_CARD']],
  ] as const)('%s', (text, types) => {
    const findings = redact(text).findings;
    expect(findings.map((f) => f.type)).toEqual(types);
    const phone = findings.find((f) => f.type === 'PHONE')!;
    expect(text.slice(phone.start, phone.end).replace(/[()]/g, '')).toBe('030 1234567');
  });
});

describe('PHONE: a digit dump is skipped whole', () => {
  it.each([' ', '-', '.', '/', '(', ')'])('a number joined to a run of 16 digits by %j is part of the dump', (sep) => {
    expect(phones(`Tel 0301234567890123${sep}030 1234567`)).toEqual([]);
    // 27 characters of single digits and separators: longer than any number.
    expect(phones(`Tel +4 9 3 0 1 2 3 4 5 6 7 8 9${sep}0 1`)).toEqual([]);
  });

  it('a word or a comma between them ends the dump', () => {
    expect(phones('Tel 1234567890123456 x 030 1234567')).toEqual(['030 1234567']);
    expect(phones('Tel 12345 67890 123456, 030 1234567')).toEqual(['030 1234567']);
    expect(phones('Tel +4 9 3 0 1 2 3 4 5 6 7 8')).toEqual(['+4 9 3 0 1 2 3 4 5 6 7 8']);
    expect(phones('Tel 030 1234567,123,456')).toEqual([]);
    expect(phones('Tel 030 1234567,12a')).toEqual(['030 1234567']);
  });
});

describe('PHONE: when a number needs a phone word', () => {
  it.each([
    // Shaped: grouped with a leading zero, in brackets, or in three or more groups of nine digits or more.
    ['note 415 555 2671', ['415 555 2671']],
    ['note 0171 1234567', ['0171 1234567']],
    ['note (415) 555-2671', ['(415) 555-2671']],
    ['note 030 12345', ['030 12345']],
    ['note 06 12 34 56 78', ['06 12 34 56 78']],
    ['note +1 415 555 2671', ['+1 415 555 2671']],
    ['note +14155552671', ['+14155552671']],
    // Not shaped: no phone word, no number.
    ['note 4155 552671', []],
    ['note 415 555 267', []],
    ['note 41 555 267', []],
    ['note 4155552671', []],
    ['note 01711234567', []],
    ['note +1 555 123 4567', []],
    ['phone 4155 552671', ['4155 552671']],
    // A phone word before a possible number in a fictional range.
    ['Phone: 555 123 4567', ['555 123 4567']],
    ['Phone: 555-123-4567', ['555-123-4567']],
    ['Phone: 5551234567', ['5551234567']],
    // What may follow the end of a shorter reading: a dash, slash, dot or colon and a digit continue it.
    ['call 0171 1234567-234x', []],
    ['call 0171 1234567/234x', []],
    ['call 0171 1234567.234x', []],
    ['call 0171 1234567:234x', []],
    ['call 0171 1234567 234x', ['0171 1234567']],
    ['Tel 030 1234567%x', []],
    // Dotted figures: thousands grouping and two-part decimals are amounts.
    ['Tel 12.345.678', []],
    ['Tel 1.234.567.890', []],
    ['Tel 0301.234.567', ['0301.234.567']],
    ['Tel 030/123-4567', ['030/123-4567']],
    ['Tel 030/123 4567', ['030/123 4567']],
  ] as const)('%s', (text, expected) => {
    expect(phones(text)).toEqual(expected);
  });

  it('a number of a region not configured, unformatted after a plain word, is not read', () => {
    expect(phones('note 6 12 34 56 78')).toEqual(['6 12 34 56 78']);
    expect(phones('note 6 12 34 56 78', ['US', 'DE', 'FR'])).toEqual([]);
  });
});

describe('PHONE: last edges', () => {
  it('an international number needs no phone word and no configured region', () => {
    expect(phones('note +44 20 7946 0958')).toEqual(['+44 20 7946 0958']);
  });

  it('a number that runs into an address is cut before it', () => {
    expect(redact('Tel 030 1234567 12@example.com').findings.map((f) => f.type)).toEqual(['PHONE', 'EMAIL']);
    expect(phones('Tel 030 1234567 12@example.com')).toEqual(['030 1234567']);
  });

  it('a number after a password word is a phone number, not the less specific secret', () => {
    expect(redact('password: 030 1234567').findings).toEqual([{ type: 'PHONE', start: 10, end: 21 }]);
  });

  it('a comma and digits that are no thousands group leave the number whole', () => {
    expect(phones('Tel 030 1234567, 12 Uhr')).toEqual(['030 1234567']);
    expect(phones('Tel 030 1234567,1 2')).toEqual(['030 1234567']);
    expect(phones('Tel 0301234567890123,030 1234567')).toEqual(['030 1234567']);
  });

  it('only the last three group boundaries are tried', () => {
    expect(phones('call 0171 1234567 2 3 4 5')).toEqual(['0171 1234567 2 3']);
    expect(phones('call 0171 1234567 2 3 4 5 6')).toEqual([]);
  });
});

describe('PHONE: a ZIP+4 code is not a phone number', () => {
  it('after a US state code or a postal word; a phone word before it, or neither, keeps the number', () => {
    for (const text of [
      'Boston MA 02110-1234',
      'Boston, MA 02110-1234',
      'Springfield, IL. 62704-1234',
      'ZIP: 02110-1234',
      'Zip code 02110-1234',
      'PLZ 02110-1234',
    ])
      expect(phones(text, ['DE']), text).toEqual([]);
    // The same digits as a German number: a phone word, or nothing that says postal code.
    expect(phones('Tel. 02110-1234', ['DE'])).toEqual(['02110-1234']);
    expect(phones('phone: MA 02110-1234', ['DE'])).toEqual(['02110-1234']);
    expect(phones('call 02110-1234', ['DE'])).toEqual(['02110-1234']);
    // Only the 5-4 shape, whole: a state code before another grouping is still a phone number.
    expect(phones('MA 0211 01234', ['DE'])).toEqual(['0211 01234']);
    for (const number of ['030 02110-1234', '02110-1234 56', '02110-12345'])
      expect(phones(`MA ${number}`, ['DE'])).toEqual([number]);
  });
});
