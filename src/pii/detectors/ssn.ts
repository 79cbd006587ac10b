import { codeAt, hasContextBefore, isDigit, isWordChar } from '../chars.js';
import type { Candidate, Detector } from '../types.js';

export const SSN_PRIORITY = 60;

// Bounded quantifiers and a fixed shape: at most a handful of steps per start position.
const SSN_SHAPE = /(?<![\w.\-/:])(\d{3})([- ]?)(\d{2})\2(\d{4})(?![\w]|[.\-/:]\d)/g;

// Context for numbers not written in the canonical XXX-XX-XXXX form.
const SSN_CONTEXT =
  /(?:\bssn|\bss#|\bsocial[\s-]+security|\bsoc\.?\s*sec|\bsozialversicherungsnummer|\bnuméro de sécurité sociale|\bseguro social|\bssa\b|\btaxpayer|\btin\b|社会保障番号)/i;

/** SSA rules: no area 000, 666 or 900-999; no group 00; no serial 0000. */
export function validSsnParts(area: string, group: string, serial: string): boolean {
  const a = Number(area);
  return a !== 0 && a !== 666 && a < 900 && group !== '00' && serial !== '0000';
}

/**
 * US social security numbers: XXX-XX-XXXX with valid ranges is reported on its own; the
 * space-separated or bare nine-digit forms only with a context word (SSN, social security...)
 * in the 48 characters before, since nine digits alone are too common.
 */
export const detectSsns: Detector = (text: string, _config, out: Candidate[]) => {
  SSN_SHAPE.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = SSN_SHAPE.exec(text)) !== null) {
    const [whole, area = '', sep = '', group = '', serial = ''] = m;
    if (!validSsnParts(area, group, serial)) continue;
    const start = m.index;
    const end = start + whole.length;
    const dashed = sep === '-';
    if (!dashed && !hasContextBefore(text, start, 48, SSN_CONTEXT)) continue;
    // "+1 555-12-3456"-like fragments inside longer numbers are not SSNs.
    if (isDigit(codeAt(text, start - 2)) && codeAt(text, start - 1) === 32 && !hasContextBefore(text, start, 48, SSN_CONTEXT)) continue;
    if (isWordChar(codeAt(text, end))) continue;
    out.push({ type: 'US_SSN', start, end, priority: SSN_PRIORITY });
  }
};
