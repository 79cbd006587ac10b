import { getCountrySpecifications, isValidIBAN } from 'ibantools';
import { codeAt, isAsciiAlnum, isUpper, isWordChar } from '../chars.js';
import type { Candidate, Detector } from '../types.js';

export const IBAN_PRIORITY = 90;

const IBAN_LABEL_BEFORE = /IBAN\s*[:：]?\s*$/i;

const IBAN_LENGTHS: ReadonlyMap<string, number> = new Map(
  Object.entries(getCountrySpecifications())
    .filter(([, spec]) => typeof spec.chars === 'number' && spec.chars > 0)
    .map(([code, spec]) => [code, spec.chars as number]),
);

// Two letters and two check digits at a word start open a candidate; the rest is read by hand.
const IBAN_START = /(?<![A-Za-z0-9_\u00c0-\u024f])[A-Za-z]{2}\d{2}/g;

/**
 * IBANs in electronic form (DE89370400440532013000) or printed in groups separated by single
 * spaces (DE89 3704 0044 0532 0130 00). The country fixes the length, so exactly that many
 * characters are read and the next character must end the word; ibantools checks the BBAN format
 * and the mod-97 checksum.
 */
export const detectIbans: Detector = (text: string, _config, out: Candidate[]) => {
  IBAN_START.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = IBAN_START.exec(text)) !== null) {
    const start = m.index;
    const country = text.slice(start, start + 2).toUpperCase();
    const length = IBAN_LENGTHS.get(country);
    if (length === undefined) continue;
    const lowerCase = !isUpper(text.charCodeAt(start));
    let i = start;
    let compact = '';
    while (i < text.length && compact.length < length) {
      const c = text.charCodeAt(i);
      if (isAsciiAlnum(c)) {
        compact += text[i];
        i++;
      } else if ((c === 32 || c === 0xa0 || c === 45) && isAsciiAlnum(codeAt(text, i + 1)) && compact.length >= 4) {
        i++;
      } else if (c === 10 && isAsciiAlnum(codeAt(text, i + 1)) && compact.length >= 4) {
        i++; // wrapped, or completed on the next line: the country fixes the length, so this stays exact
      } else if (c === 13 && codeAt(text, i + 1) === 10 && isAsciiAlnum(codeAt(text, i + 2)) && compact.length >= 4) {
        i += 2;
      } else break;
    }
    if (compact.length !== length) continue;
    // The next character must end the word, unless a label says what this is ("IBAN: DE89…" run
    // into the next field, as unspaced scripts write it: "IBAN: NL19QNRH7981463015APIキー").
    if (
      isWordChar(codeAt(text, i)) &&
      !(isUpper(codeAt(text, i)) && IBAN_LABEL_BEFORE.test(text.slice(Math.max(0, start - 12), start)))
    )
      continue;
    // Mixed case inside an IBAN is a hash or an identifier, not a bank account.
    if (lowerCase ? compact !== compact.toLowerCase() : compact !== compact.toUpperCase()) continue;
    if (!isValidIBAN(compact.toUpperCase())) continue;
    out.push({ type: 'IBAN', start, end: i, priority: IBAN_PRIORITY });
    IBAN_START.lastIndex = i;
  }
};
