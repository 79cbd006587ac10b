/**
 * The SSN detector's edges, for mutation testing (scripts/mutation/targets.mjs, pii-email-ssn):
 * the SSA's number ranges, the written forms and which of them need a context word, the words and
 * signs that make a number something else (an order, a phone, a ZIP+4 code), and the characters
 * that make it part of a longer number.
 */
import { describe, expect, it } from 'vitest';
import { validSsnParts } from '../../src/pii/detectors/ssn.js';
import { redact } from '../../src/pii/index.js';

const ssns = (text: string, phoneRegions?: string[]): string[] =>
  redact(text, phoneRegions === undefined ? {} : { phoneRegions })
    .findings.filter((f) => f.type === 'US_SSN')
    .map((f) => text.slice(f.start, f.end));

describe('US_SSN: the SSA ranges', () => {
  it.each([
    ['000', '12', '3456', false],
    ['001', '12', '3456', true],
    ['665', '12', '3456', true],
    ['666', '12', '3456', false],
    ['667', '12', '3456', true],
    ['899', '12', '3456', true],
    ['900', '12', '3456', false],
    ['999', '12', '3456', false],
    ['078', '00', '3456', false],
    ['078', '01', '3456', true],
    ['078', '05', '0000', false],
    ['078', '05', '0001', true],
  ])('%s-%s-%s: valid %s', (area, group, serial, valid) => {
    expect(validSsnParts(area, group, serial)).toBe(valid);
    expect(ssns(`id ${area}-${group}-${serial} end`)).toEqual(valid ? [`${area}-${group}-${serial}`] : []);
  });
});

describe('US_SSN: written forms', () => {
  it.each([
    ['078-05-1123', true],
    ['078 05 1123', true],
    ['078.05.1123', true],
    ['078-051123', true],
    ['07805-1123', true],
    ['078051123', true],
    ['078-05 1123', false], // mixed separators
    ['078 05-1123', false],
    ['078--05--1123', false],
    ['07-805-1123', false],
    ['0780-51-123', false],
  ])('%s on its own: %s', (value, found) => {
    expect(ssns(`he wrote ${value} down`)).toEqual(found ? [value] : []);
  });

  it.each(['111111111', '555-55-5555', '123456789', '123-45-6789x', '987654320', '98765432-1', '078051120'])(
    '%s was never issued',
    (value) => {
      const plain = value.replace(/x$/, '');
      if (plain === '555-55-5555' || plain === '123-45-6789') {
        // The canonical form is reported whatever the digits (Presidio's own rule applies to the other forms).
        expect(ssns(`he wrote ${plain} down`)).toEqual([plain]);
        const spaced = plain.replaceAll('-', ' ');
        expect(ssns(`he wrote ${spaced} down`)).toEqual([]);
      } else {
        expect(ssns(`he wrote ${plain} down`)).toEqual([]);
      }
    },
  );

  it('a number ruled out as never issued is reported after a context word', () => {
    expect(ssns('SSN 123456789')).toEqual(['123456789']);
    expect(ssns('SSN 111 11 1111')).toEqual(['111 11 1111']);
  });

  it.each(['a', '_', '.', '-', '/', ':', ',', '7'])('a number glued after %s is part of something else', (glue) => {
    expect(ssns(`id ${glue}078-05-1123 end`)).toEqual([]);
  });

  it.each(['a', '_', '7'])('a number glued before %s is part of something else', (glue) => {
    expect(ssns(`id 078-05-1123${glue} end`)).toEqual([]);
  });

  it.each(['.', '-', '/', ':', ','])(
    'a number followed by %s and a digit is part of something else; by %s alone it ends a sentence',
    (glue) => {
      expect(ssns(`id 078-05-1123${glue}4 end`)).toEqual([]);
      expect(ssns(`id 078-05-1123${glue} end`)).toEqual(['078-05-1123']);
    },
  );

  it('a group of a longer grouped number is not one', () => {
    expect(ssns('he wrote 078 05 1123 45 now')).toEqual([]);
    expect(ssns('he wrote 078.05.1123.45 now')).toEqual([]);
    expect(ssns('he wrote 078 05 1123 now')).toEqual(['078 05 1123']);
    // Another separator after it: a dash and a digit make it part of something else, a letter does not.
    expect(ssns('he wrote 078 05 1123-45 now')).toEqual([]);
    expect(ssns('he wrote 078 05 1123 x now')).toEqual(['078 05 1123']);
    expect(ssns('he wrote 078.05.1123 4 now')).toEqual(['078.05.1123']);
  });
});

describe('US_SSN: context words', () => {
  it.each([
    'SSN',
    'ssn:',
    'SS#',
    'social security',
    'Social-Security number',
    'soc. sec.',
    'soc sec',
    'Sozialversicherungsnummer',
    'numéro de sécurité sociale',
    'seguro social',
    'SSA',
    'taxpayer id',
    'TIN',
    '社会保障番号',
  ])('a number that was never issued, after "%s", is an SSN all the same', (word) => {
    // Without a context word 123456789 is ruled out (see "was never issued").
    expect(ssns(`${word} 123456789`)).toEqual(['123456789']);
    expect(ssns(`${word.toUpperCase()} 123 45 6789`)).toEqual(['123 45 6789']);
  });

  it('the context word counts within 48 characters before the number, not farther', () => {
    const near = `SSN ${'x'.repeat(43)} 123456789`; // "SSN" starts 48 characters before
    expect(ssns(near)).toEqual(['123456789']);
    const far = `SSN ${'x'.repeat(44)} 123456789`;
    expect(ssns(far)).toEqual([]);
  });

  it.each(['tin', 'ssa', 'ssn'])('"%s" inside a word is not a context word', (word) => {
    expect(ssns(`pre${word} 123456789`)).toEqual([]);
    expect(ssns(`${word} 123456789`)).toEqual(['123456789']);
  });
});

describe('US_SSN: what else a number is', () => {
  it.each([
    'order',
    'Order No.',
    'ticket #',
    'invoice:',
    'ref',
    'reference',
    'ID',
    'no.',
    'Nr.',
    'case',
    'booking',
    'tracking',
    'serial',
    'SKU',
    'part',
    'item',
    'article',
    'model',
    'account number',
    'acct',
    'PO',
    'batch',
    'lot',
    'build',
    'job',
    'version',
    'v',
    'ISBN',
    'phone',
    'tel',
    'Téléphone',
    'fax',
    'mobile',
    'cell',
    'call',
    'contact',
    'Kontakt',
    'Handy',
    'WhatsApp',
    'teléfono',
    'móvil',
    'Bestellnummer',
    'Rechnungsnummer',
    'Artikelnummer',
    'Kundennummer',
    'Telefonnummer',
    'commande',
    'facture',
    'pedido',
    'factura',
    'Mobilnummer',
    'Kontonummer',
    'cuenta',
    'compte',
    'routing',
    'ABA',
    'passport',
    'Reisepass',
    'Ausweisnummer',
    'license',
    'licence',
    'IMEI',
    'tax',
    'VAT',
    'Steuernummer',
    '#',
    '€',
    '$',
    '£',
    '¥',
    '+',
  ])('a spaced, dotted or bare number after "%s" is not an SSN; the canonical form is', (word) => {
    const sep = /[#€$£¥+]$/.test(word) ? '' : ' ';
    expect(ssns(`${word}${sep}078 05 1123`)).toEqual([]);
    expect(ssns(`${word}${sep}078051123`)).toEqual([]);
    expect(ssns(`${word}${sep}078-051123`)).toEqual([]);
    expect(ssns(`${word}${sep}078-05-1123`)).toEqual(['078-05-1123']);
  });

  it('the word must stand right before the number (within 24 characters)', () => {
    expect(ssns('order 078051123')).toEqual([]);
    expect(ssns(`order, and then a few words: 078051123`)).toEqual(['078051123']);
  });

  it.each(['CA', 'NY', 'Springfield, IL', 'TX.', 'WA,', 'DC\t'])(
    'a ZIP+4 after the state code "%s" is not an SSN',
    (state) => {
      expect(ssns(`${state} 07805-1123`)).toEqual([]);
    },
  );

  it.each([
    'zip',
    'ZIP:',
    'Zip code',
    'postal code',
    'postcode',
    'post-code',
    'Postleitzahl',
    'PLZ',
    'code postal',
    'código postal',
    'CP',
    'C.P.',
    'mail to',
    'mailing to',
    'address:',
    'Suite',
    'Ste.',
    'Apt.',
    'PO Box',
  ])('a ZIP+4 after "%s" is not an SSN', (word) => {
    expect(ssns(`${word} 07805-1123`)).toEqual([]);
  });

  it('a postal word farther than 16 characters, or one with a digit between, leaves the number an SSN', () => {
    expect(ssns('zip and then more words 07805-1123')).toEqual(['07805-1123']);
    expect(ssns('zip 1, 07805-1123')).toEqual(['07805-1123']);
    // "zipper" is no postal word.
    expect(ssns('zipper 07805-1123')).toEqual(['07805-1123']);
    // A state code needs a space or tab after it, and is a word of its own.
    expect(ssns('XCA 07805-1123')).toEqual(['07805-1123']);
    expect(ssns('ZZ 07805-1123')).toEqual(['07805-1123']);
  });

  it('a ZIP+4 with an SSN word before it is an SSN even after a state code', () => {
    expect(ssns('SSN (CA 07805-1123)')).toEqual(['07805-1123']);
  });

  it('a Berlin-style number printed 3-6 is a phone number in Germany, an SSN elsewhere', () => {
    expect(ssns('ruf an: 030-123456', ['DE'])).toEqual([]);
    expect(ssns('note 078-051121', ['US'])).toEqual(['078-051121']);
    expect(ssns('note 078-051121', ['DE'])).toEqual(['078-051121']);
  });
});

describe('US_SSN: inside longer numbers', () => {
  it('a short digit group and a space before it make it part of that number', () => {
    expect(ssns('call +1 078-05-1123')).toEqual([]);
    expect(ssns('call 1234 078-05-1123')).toEqual([]);
    expect(ssns('call 12345 078-05-1123')).toEqual(['078-05-1123']);
    expect(ssns('ids 078-051121 07805-1121')).toEqual(['078-051121', '07805-1121']);
    // Not with a context word before it, nor with a letter rather than a digit before the space.
    expect(ssns('SSN 1 078-05-1123')).toEqual(['078-05-1123']);
    expect(ssns('call a 078-05-1123')).toEqual(['078-05-1123']);
  });

  it('the digit run before is counted up to eight digits', () => {
    expect(ssns(`call ${'1'.repeat(20)} 078-05-1123`)).toEqual(['078-05-1123']);
  });
});

const STATES =
  'AL AK AZ AR AS AP AE CA CO CT DE DC FL FM GA GU HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT MH MP NE NV NH NJ NM NY NC ND OH OK OR PA PW PR RI SC SD TN TX UT VT VA VI WA WV WI WY'.split(
    ' ',
  );

describe('US_SSN: ZIP+4 codes', () => {
  it.each(STATES)('a ZIP+4 after the state code %s is a postal code', (state) => {
    expect(ssns(`${state} 07805-1123`)).toEqual([]);
    expect(ssns(`Springfield, ${state}. 07805-1123`)).toEqual([]);
  });

  it.each([
    'AA',
    'AB',
    'CB',
    'DA',
    'FA',
    'GB',
    'HA',
    'IB',
    'KA',
    'LB',
    'MB',
    'NA',
    'OA',
    'PB',
    'RA',
    'SA',
    'TA',
    'UA',
    'VB',
    'WB',
    'XX',
  ])('%s is no state code: the number is an SSN', (code) => {
    expect(ssns(`${code} 07805-1123`)).toEqual(['07805-1123']);
  });

  it('a state code is a word in capitals, then at most a dot and a comma, then spaces or tabs', () => {
    expect(ssns('CA.,  07805-1123')).toEqual([]);
    expect(ssns('CA \t 07805-1123')).toEqual([]);
    expect(ssns('ca 07805-1123')).toEqual(['07805-1123']);
    expect(ssns('CA: 07805-1123')).toEqual(['07805-1123']);
    expect(ssns('CA.. 07805-1123')).toEqual(['07805-1123']);
    expect(ssns('CA\n07805-1123')).toEqual(['07805-1123']);
    expect(ssns('XCA 07805-1123')).toEqual(['07805-1123']);
  });

  it('a postal word counts up to 16 characters before the number, on the same line, with no digit between', () => {
    // (Not spaces alone: "zip" is also an other-number word, and those take any spaces.)
    expect(ssns(`zip ${'~'.repeat(14)} 23456-7890`)).toEqual([]);
    expect(ssns(`zip ${'~'.repeat(15)} 23456-7890`)).toEqual(['23456-7890']);
    expect(ssns('zip code: 07805-1123')).toEqual([]);
    expect(ssns('post code 07805-1123')).toEqual([]);
    expect(ssns('postcode: 07805-1123')).toEqual([]);
    expect(ssns('post-code: 07805-1123')).toEqual([]);
    expect(ssns('post  code 07805-1123')).toEqual(['07805-1123']);
    expect(ssns('codigo postal 07805-1123')).toEqual([]);
    expect(ssns('cp 07805-1123')).toEqual([]);
    expect(ssns('c.p 07805-1123')).toEqual([]);
    expect(ssns('mailing to 07805-1123')).toEqual([]);
    expect(ssns('mail  to 07805-1123')).toEqual(['07805-1123']);
    expect(ssns('ste 07805-1123')).toEqual([]);
    expect(ssns('apt 07805-1123')).toEqual([]);
    expect(ssns('box: 07805-1123')).toEqual([]);
    expect(ssns('boxes 07805-1123')).toEqual(['07805-1123']);
    expect(ssns('inbox 07805-1123')).toEqual(['07805-1123']);
  });

  it('the look back for a state or a postal word reads 40 characters', () => {
    expect(ssns(`zip ${'-'.repeat(12)} 07805-1123`)).toEqual([]);
    expect(ssns(`Springfield IL${' '.repeat(30)}07805-1123`)).toEqual([]);
  });

  it('a postal word does not excuse the other forms', () => {
    expect(ssns('zip 078-05-1123')).toEqual(['078-05-1123']);
    expect(ssns('CA 078 05 1123')).toEqual(['078 05 1123']);
  });
});

describe('US_SSN: context words, their spellings', () => {
  it.each([
    'social  security',
    'social- security',
    'social\tsecurity',
    'soc.sec',
    'socsec',
    'soc.  sec',
    'SOC SEC',
    'ss# ',
    'SSN#',
    'Social Security Number:',
  ])('"%s" is a context word', (word) => {
    expect(ssns(`${word} 123456789`)).toEqual(['123456789']);
  });

  it.each(['socialsecurity', 'soc..sec', 'so sec', 'ssx', 'ss #', 'atin', 'tinder', 'ssad'])('"%s" is not', (word) => {
    expect(ssns(`${word} 123456789`)).toEqual([]);
  });
});

describe('US_SSN: numbers never issued', () => {
  it.each(['111111111', '222222222', '333333333', '444444444', '555555555', '777777777', '888888888'])(
    '%s (one digit nine times) is not reported without a context word',
    (digits) => {
      expect(ssns(`he wrote ${digits} down`)).toEqual([]);
      expect(ssns(`SSN ${digits}`)).toEqual([digits]);
    },
  );

  it('nearly repeated digits, and numbers next to the voided ones, are SSNs', () => {
    expect(ssns('he wrote 111111112 down')).toEqual(['111111112']);
    expect(ssns('he wrote 211111111 down')).toEqual(['211111111']);
    expect(ssns('he wrote 123456780 down')).toEqual(['123456780']);
    expect(ssns('he wrote 078051121 down')).toEqual(['078051121']);
    expect(ssns('he wrote 078 05 1120 down')).toEqual([]);
    expect(ssns('he wrote 078-05-1120 down')).toEqual(['078-05-1120']);
  });
});

describe('US_SSN: other number words, their spellings', () => {
  it.each([
    'order number',
    'Order No',
    'order nr.',
    'order n°',
    'order id',
    'order#',
    'order=',
    'order :',
    'Bestellung',
    'Rechnungen',
    'tél',
    'tel.',
    'movil',
    'Steuer-ID',
  ])('after "%s" a bare number is something else', (word) => {
    expect(ssns(`${word} 078051123`)).toEqual([]);
  });

  it.each(['orders', 'border', 'idle', 'nope', 'zipped', 'taxi', 'vatican'])(
    '"%s" says nothing: the number is an SSN',
    (word) => {
      expect(ssns(`${word} 078051123`)).toEqual(['078051123']);
    },
  );

  it('the other-number words are read within 24 characters before the number', () => {
    expect(ssns(`order ${' '.repeat(17)}078051123`)).toEqual([]);
    expect(ssns(`order x ${' '.repeat(16)}078051123`)).toEqual(['078051123']);
  });
});
