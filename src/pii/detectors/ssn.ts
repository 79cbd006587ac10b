import { codeAt, hasContextBefore, isDigit, isWordChar } from '../chars.js';
import type { Candidate, Detector } from '../types.js';

export const SSN_PRIORITY = 60;

// Bounded quantifiers and a fixed shape: at most a handful of steps per start position.
const SSN_SHAPE = /(?<![\w.\-/:,])(\d{3})([- .]?)(\d{2})\2(\d{4})(?![\w]|[.\-/:,]\d)/g;

// Context for numbers not written in the canonical XXX-XX-XXXX form.
const SSN_CONTEXT =
  /(?:\bssn|\bss#|\bsocial[\s-]+security|\bsoc\.?\s*sec|\bsozialversicherungsnummer|\bnuméro de sécurité sociale|\bseguro social|\bssa\b|\btaxpayer|\btin\b|社会保障番号)/i;

// Words that make a grouped number something else: an identifier, a phone number, an amount.
const OTHER_NUMBER_BEFORE =
  /(?:\b(?:order|ticket|invoice|ref|reference|id|no|nr|case|booking|tracking|serial|sku|part|item|article|model|account|acct|po|batch|lot|build|job|version|v|isbn|phone|tel|t[ée]l[ée]phone|t[ée]l|fax|mobile|cell|call|contact|kontakt|handy|whatsapp|tel[ée]fono|m[óo]vil|bestell\w*|rechnung\w*|artikel\w*|kunden\w*|telefon\w*|commande|facture|pedido|factura)\.?\s*(?:number|no\.?|nr\.?|n°|#|id)?\s*[:#=]?\s*|[#€$£¥+])$/i;

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
export const detectSsns: Detector = (text: string, _config, out: Candidate[]) => {
  SSN_SHAPE.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = SSN_SHAPE.exec(text)) !== null) {
    const [whole, area = '', sep = '', group = '', serial = ''] = m;
    if (!validSsnParts(area, group, serial)) continue;
    const start = m.index;
    const end = start + whole.length;
    const context = hasContextBefore(text, start, 48, SSN_CONTEXT);
    // Nine bare digits are too common (order and account numbers, ZIP+4, phone numbers) to be an
    // SSN without a word that says so. The grouped 3-2-4 forms are the SSN's own shape: dashed,
    // spaced or dotted they count on their own, unless a word before says what else they are
    // ("part 123 45 6789", "Tel. 078 05 1123").
    if (sep === '' && !context) continue;
    if (sep !== '-' && !context && OTHER_NUMBER_BEFORE.test(text.slice(Math.max(0, start - 24), start))) continue;
    // "+1 555-12-3456"-like fragments inside longer numbers are not SSNs.
    if (isDigit(codeAt(text, start - 2)) && codeAt(text, start - 1) === 32 && !context) continue;
    if (isWordChar(codeAt(text, end))) continue;
    // "078 05 1123 45": one group of a longer grouped number.
    if (sep !== '' && codeAt(text, end) === sep.charCodeAt(0) && isDigit(codeAt(text, end + 1))) continue;
    out.push({ type: 'US_SSN', start, end, priority: SSN_PRIORITY });
  }
};
