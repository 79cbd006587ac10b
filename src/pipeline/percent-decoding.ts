/**
 * What the decoders below the path guard make of a name's escapes: percent-decoding as the most
 * lenient decoder does it (UTF-8 that accepts overlong forms, IIS-style %uXXXX), as a decoder blind
 * to continuation-byte tags reads it, and as one that takes any two characters after '%' for hex
 * digits. The guard (path-guard.ts) checks every form these give; they only compute forms.
 */

const ESCAPES = /(?:%[uU][0-9a-fA-F]{4}|%[0-9a-fA-F]{2})+/g;

/**
 * One round of percent-decoding as the most lenient decoder would do it: %XX runs as UTF-8 that
 * accepts overlong forms (%c0%ae is '.'), IIS-style %uXXXX, a lone '%' left literal (100%.txt).
 * Returns `overlong` when a non-shortest UTF-8 form was seen: no legitimate name has one.
 */
export function percentDecode(text: string): { text: string; sloppy: string; overlong: boolean } {
  let overlong = false;
  let sloppy = '';
  let last = 0;
  const decoded = text.replace(ESCAPES, (run, offset: number) => {
    let out = '';
    let outSloppy = '';
    const bytes: number[] = [];
    const flush = () => {
      if (bytes.length === 0) return;
      const r = lenientUtf8(bytes);
      out += r.text;
      outSloppy += r.sloppy;
      overlong ||= r.overlong;
      bytes.length = 0;
    };
    for (const escape of run.match(/%[uU][0-9a-fA-F]{4}|%[0-9a-fA-F]{2}/g) ?? []) {
      if (escape.length === 6) {
        flush();
        const unit = String.fromCharCode(parseInt(escape.slice(2), 16));
        out += unit;
        outSloppy += unit;
      } else {
        bytes.push(parseInt(escape.slice(1), 16));
      }
    }
    flush();
    sloppy += text.slice(last, offset) + outSloppy;
    last = offset + run.length;
    return out;
  });
  return { text: decoded, sloppy: sloppy + text.slice(last), overlong };
}

/**
 * UTF-8 decoding that accepts what a broken decoder accepts, and says when it saw overlong forms.
 * `sloppy` is what a decoder makes of the bytes that only masks the payload bits of continuation
 * bytes without checking their tag (the IIS "Unicode" bug, and many hand-written decoders):
 * '%e0%80%2e' is '.' to it, and '%e2%40%a5' is '‥'.
 */
function lenientUtf8(bytes: number[]): { text: string; sloppy: string; overlong: boolean } {
  let text = '';
  let overlong = false;
  for (let i = 0; i < bytes.length;) {
    const lead = bytes[i]!;
    // Continuation count and the smallest code point that needs this many bytes. The 5- and 6-byte
    // forms of old UTF-8 are never shortest for a code point that exists: always overlong.
    const [extra, minimum]: [number, number] =
      lead >= 0xfe
        ? [-1, 0]
        : lead >= 0xfc
          ? [5, Infinity]
          : lead >= 0xf8
            ? [4, Infinity]
            : lead >= 0xf0
              ? [3, 0x10000]
              : lead >= 0xe0
                ? [2, 0x800]
                : lead >= 0xc0
                  ? [1, 0x80]
                  : lead >= 0x80
                    ? [-1, 0]
                    : [0, 0];
    let cp = extra <= 0 ? lead : lead & (0x3f >> extra);
    let ok = extra >= 0;
    for (let k = 1; ok && k <= extra; k++) {
      const b = bytes[i + k];
      if (b === undefined || (b & 0xc0) !== 0x80) ok = false;
      else cp = cp * 64 + (b & 0x3f);
    }
    // C0 and C1 only ever start overlong forms; sloppy decoders (the IIS "Unicode" bug) also take
    // them with a malformed second byte (%c0%ee, %c1%1c), so no check of that byte is trusted.
    if (lead === 0xc0 || lead === 0xc1) overlong = true;
    if (!ok) {
      // Not a sequence: the byte as Latin-1, which is what a byte-wise decoder would produce.
      text += String.fromCharCode(lead);
      i += 1;
      continue;
    }
    if (cp < minimum) overlong = true;
    text += codePointText(cp);
    i += extra + 1;
  }
  const tagBlind = tagBlindUtf8(bytes);
  return { text, sloppy: tagBlind.text, overlong: overlong || tagBlind.overlong };
}

function codePointText(cp: number): string {
  return cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ? '\ufffd' : String.fromCodePoint(cp);
}

/** The bytes as a decoder reads them that takes a lead byte's continuation bytes without checking their tags. */
function tagBlindUtf8(bytes: number[]): { text: string; overlong: boolean } {
  let text = '';
  let overlong = false;
  for (let i = 0; i < bytes.length;) {
    const lead = bytes[i]!;
    const [extra, minimum] =
      lead >= 0xf0 && lead < 0xf8
        ? [3, 0x10000]
        : lead >= 0xe0 && lead < 0xf0
          ? [2, 0x800]
          : lead >= 0xc0 && lead < 0xe0
            ? [1, 0x80]
            : [0, 0];
    if (extra === 0 || i + extra >= bytes.length) {
      text += String.fromCharCode(lead);
      i += 1;
      continue;
    }
    let cp = lead & (0x3f >> extra);
    for (let k = 1; k <= extra; k++) cp = cp * 64 + (bytes[i + k]! & 0x3f);
    if (cp < minimum) overlong = true;
    text += codePointText(cp);
    i += extra + 1;
  }
  return { text, overlong };
}

/**
 * A '%' that starts no escape: followed by two characters that are not both hex digits, or by 'u'
 * and four that are not all hex digits. ('%' itself is never taken as a digit: '%%32%65' is the
 * double-percent spelling the escape decoding already reads.)
 */
const NOT_AN_ESCAPE = /%(?![0-9a-fA-F]{2}|[uU][0-9a-fA-F]{4})(?:[uU][^%]{4}|[^%]{2})/g;

/** A character's value to a hex decoder that never checks it (IIS): its distance from '0', or from 'a' or 'A' plus ten. */
function uncheckedHexDigit(code: number): number {
  return code >= 0x61 ? code - 0x61 + 10 : code >= 0x41 ? code - 0x41 + 10 : code - 0x30;
}

/**
 * The name as a decoder reads it that takes whatever follows '%' for hex digits (IIS's invalid-hex
 * bug: '%bg%qf' is %c0%af, an overlong '/'): each '%' that starts no escape rewritten as the escape
 * of the byte (after '%u', the UTF-16 unit) that decoder makes of it, for the escape decoding to
 * read in turn. Undefined when every '%' starts an escape or none follows (a rewritten escape always
 * differs from what it replaces, which was not one).
 */
export function uncheckedHexReading(text: string): string | undefined {
  const read = text.replace(NOT_AN_ESCAPE, (escape) => {
    const unit = escape.length === 6;
    let value = 0;
    for (const digit of escape.slice(unit ? 2 : 1)) value = value * 16 + uncheckedHexDigit(digit.charCodeAt(0));
    return unit
      ? `%u${(value & 0xffff).toString(16).padStart(4, '0')}`
      : `%${(value & 0xff).toString(16).padStart(2, '0')}`;
  });
  return read === text ? undefined : read;
}
