import { codeAt, hasContextBefore, isDigit, isWordChar } from '../chars.js';
import type { Candidate, Detector } from '../types.js';
import { IDENTIFIER_BEFORE, isNationalPhoneAsGrouped, PHONE_CONTEXT } from './phone.js';
import { isPostalCode } from './postal.js';
import { headerOfCell, newHeaderCache } from './table.js';

export const SSN_PRIORITY = 60;

// Bounded quantifiers and a fixed shape: at most a handful of steps per start position. Groups 1-4:
// XXX-XX-XXXX, XXX XX XXXX, XXX.XX.XXXX and nine bare digits; 5-7: Presidio's XXX-XXXXXX; 8-10:
// its XXXXX-XXXX, which is also the ZIP+4 shape.
// A ',' on either side is let through here and settled in the loop: a CSV cell under an SSN
// header is one ("Jane,234-56-7890"), other digits after a comma are part of a longer number.
const SSN_SHAPE =
  /(?<![\w.\-/:])(?:(\d{3})([- .]?)(\d{2})\2(\d{4})|(\d{3})-(\d{2})(\d{4})|(\d{3})(\d{2})-(\d{4}))(?![\w]|[.\-/:]\d)/g;

// A table column's header that says SSN ("ssn", "employee_ssn", "Social Security No.").
// ... and one that names another number: the column's cells are that, however SSN-like their digits.
const OTHER_NUMBER_HEADER =
  /order|ticket|invoice|ref|\bid\b|_id\b|\bno\b|\bnr\b|case|booking|tracking|serial|sku|part|item|article|model|account|acct|\bpo\b|batch|\blot\b|build|job|version|isbn|phone|\btel|fax|mobile|\bcell|zip|postal|plz|passport|licen[cs]e|imei|\bvat\b|amount|total|price|qty|quantity|code|number|\bnum\b|#/i;
const SSN_HEADER =
  /ssn|social[\s_-]*security|soc\.?[\s_-]*sec|ss#|sozialversicherung|seguro[\s_-]*social|taxpayer|\btin\b/i;

// Context for numbers not written in the canonical XXX-XX-XXXX form.
const SSN_CONTEXT =
  /(?:\bssn|\bss#|\bsocial[\s-]+security|\bsoc\.?\s*sec|\bsozialversicherungsnummer|\bnuméro de sécurité sociale|\bseguro social|\bssa\b|\btaxpayer|\btin\b|社会保障番号)/i;

// Words that make a grouped number something else: an identifier, a phone number, an amount.
const OTHER_NUMBER_BEFORE =
  /(?:\b(?:order|ticket|invoice|ref|reference|id|no|nr|case|booking|tracking|serial|sku|part|item|article|model|account|acct|po|batch|lot|build|job|version|v|isbn|phone|tel|t[ée]l[ée]phone|t[ée]l|fax|mobile|cell|call|contact|kontakt|handy|whatsapp|tel[ée]fono|m[óo]vil|bestell\w*|rechnung\w*|artikel\w*|kunden\w*|telefon\w*|commande|facture|pedido|factura|mobil\w*|konto\w*|cuenta|compte|routing|aba|zip|plz|postleitzahl|passport|reisepass|ausweis\w*|licen[cs]e|imei|tax|vat|steuer\w*)\.?\s*(?:number|no\.?|nr\.?|n°|#|id)?\s*[:#=]?\s*|[#€$£¥+])$/i;

/** How many digits end right before `pos`. */
function digitRunBefore(text: string, pos: number): number {
  let i = pos;
  while (i > 0 && pos - i < 8 && isDigit(text.charCodeAt(i - 1))) i--;
  return pos - i;
}

/** SSA rules: no area 000, 666 or 900-999; no group 00; no serial 0000. */
export function validSsnParts(area: string, group: string, serial: string): boolean {
  const a = Number(area);
  return a !== 0 && a !== 666 && a < 900 && group !== '00' && serial !== '0000';
}

/**
 * US social security numbers with valid ranges: XXX-XX-XXXX, XXX XX XXXX and XXX.XX.XXXX are
 * reported on their own (the spaced and dotted forms not after an identifier, phone or amount
 * word); nine bare digits only with a context word (SSN, social security...) in the 48 characters
 * before, since nine digits alone are too common.
 */
/**
 * Numbers that pass the SSA ranges but were never anyone's: one digit repeated, the sequences
 * 123456789 and 98765432…, and 078-05-1120 (printed on a wallet insert in 1938 and voided), as
 * Presidio's recognizer rules them out. Applied where no context word vouches for the number.
 */
function knownInvalid(digits: string): boolean {
  // (Presidio's 98765432… needs no rule here: area 987 is not valid.)
  return digits === (digits[0] ?? '').repeat(9) || digits === '123456789' || digits === '078051120';
}

/**
 * US social security numbers with valid ranges: XXX-XX-XXXX is reported on its own; XXX XX XXXX,
 * XXX.XX.XXXX, XXX-XXXXXX, XXXXX-XXXX and nine bare digits on their own when nothing before says
 * what else they are (an identifier, phone or amount word, '#'; for XXXXX-XXXX, the ZIP+4 shape, a
 * state code or a postal word too); with a context word (SSN, social security...) in the 48
 * characters before, every form.
 */
export const detectSsns: Detector = (text: string, config, out: Candidate[]) => {
  SSN_SHAPE.lastIndex = 0;
  const headers = newHeaderCache();
  let m: RegExpExecArray | null;
  while ((m = SSN_SHAPE.exec(text)) !== null) {
    const whole = m[0];
    const dashed36 = m[5] !== undefined;
    const zipShape = m[8] !== undefined;
    const sep = m[2] ?? '-';
    const area = m[1] ?? m[5] ?? m[8] ?? '';
    const group = m[3] ?? m[6] ?? m[9] ?? '';
    const serial = m[4] ?? m[7] ?? m[10] ?? '';
    if (!validSsnParts(area, group, serial)) continue;
    const start = m.index;
    const end = start + whole.length;
    // In a table, the column's header is the context word the cell has none of beside it.
    const header = headerOfCell(text, start, end, headers);
    const inSsnColumn = header !== undefined && SSN_HEADER.test(header);
    const inOtherColumn = header !== undefined && !inSsnColumn && OTHER_NUMBER_HEADER.test(header);
    const commaBefore = codeAt(text, start - 1) === 44;
    if ((commaBefore || (codeAt(text, end) === 44 && isDigit(codeAt(text, end + 1)))) && !inSsnColumn) continue;
    const context = inSsnColumn || hasContextBefore(text, start, 48, SSN_CONTEXT);
    const canonical = !dashed36 && !zipShape && sep === '-';
    // XXXXX-XXXX is also how ZIP+4 codes are written: not after a state code or a postal word.
    if (zipShape && !context && isPostalCode(text, start)) continue;
    if (!canonical && !context) {
      // The other forms are other numbers as well: not after a word that says which ("order
      // 078051121", "Tel. 078 05 1123", "Kundennummer 100234567", "#636521579"), and not the
      // numbers that were never issued.
      const before = text.slice(Math.max(0, start - 24), start);
      if (
        inOtherColumn ||
        OTHER_NUMBER_BEFORE.test(before) ||
        IDENTIFIER_BEFORE.test(before) ||
        hasContextBefore(text, start, 24, PHONE_CONTEXT)
      )
        continue;
      if (knownInvalid(area + group + serial)) continue;
      // "030-123456" is how Berlin numbers are printed: a 3-6 form that a configured region prints
      // with just these groups is a phone number. A valid number printed otherwise there
      // ("078-051121": 07805 1121 in Germany) is Presidio's SSN form (this form alone reaches the parser).
      if (dashed36 && isNationalPhoneAsGrouped(whole, config.phoneRegions)) continue;
    }
    // "+1 555-12-3456"-like fragments inside longer numbers are not SSNs.
    // A short group before it (a country or area code) makes it part of that number; a long one
    // ("078-051121 07805-1121") is a number of its own.
    if (
      isDigit(codeAt(text, start - 2)) &&
      codeAt(text, start - 1) === 32 &&
      !context &&
      digitRunBefore(text, start - 1) <= 4
    )
      continue;
    if (isWordChar(codeAt(text, end))) continue;
    // "078 05 1123 45": one group of a longer grouped number.
    if (sep !== '' && codeAt(text, end) === sep.charCodeAt(0) && isDigit(codeAt(text, end + 1))) continue;
    out.push({ type: 'US_SSN', start, end, priority: SSN_PRIORITY });
  }
};
