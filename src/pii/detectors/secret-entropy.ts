import { VALUE_STOPWORDS } from './secret-words.js';

/**
 * Placeholders in a token's shape: one character repeated ("ghp_xxxx…", "AIzaaaa…"), a run of the
 * alphabet or digits ("abc123xyz-456def789ghij-klmnop…"), or the documentation examples ("…EXAMPLE",
 * "…EXAMPLEKEY"). Generated keys have few repeats and about 1 in 30 ascending neighbours.
 */
export function looksFake(body: string, sequences = true): boolean {
  if (body.length < 8) return false;
  if (body.length <= 40 && /EXAMPLE/.test(body)) return true;
  // Counts of ASCII units in a scratch array (cleared after use), others in a map.
  let others: Map<number, number> | undefined;
  let ascending = 0;
  let top = 0;
  // Characters in runs of four or more of the same ("5555555dAAAAA7777777…"): a generated key of
  // 40 characters has such a run about once in 4,000 keys.
  let inRuns = 0;
  let run = 1;
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    let n: number;
    if (c < 128) {
      n = (ASCII_COUNTS[c] ?? 0) + 1;
      ASCII_COUNTS[c] = n;
    } else {
      others ??= new Map();
      n = (others.get(c) ?? 0) + 1;
      others.set(c, n);
    }
    if (n > top) top = n;
    if (i > 0 && c === body.charCodeAt(i - 1) + 1) ascending++;
    run = i > 0 && c === body.charCodeAt(i - 1) ? run + 1 : 1;
    if (run === 4) inRuns += 4;
    else if (run > 4) inRuns++;
  }
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    if (c < 128) ASCII_COUNTS[c] = 0;
  }
  return top / body.length > 0.5 || inRuns / body.length > 0.5 || (sequences && ascending / (body.length - 1) > 0.3);
}

/** Scratch counts per ASCII unit for looksFake and shannonEntropy: all zero between calls. */
const ASCII_COUNTS = new Int32Array(128);

/** High enough entropy and a mix of character classes: what generated keys look like. */
export function looksRandom(value: string, minLength: number): boolean {
  if (value.length < minLength || value.length > 2048) return false;
  if (/\s/.test(value)) return false;
  if (VALUE_STOPWORDS.has(value.toLowerCase())) return false;
  let digits = 0;
  let letters = 0;
  let upper = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 48 && c <= 57) digits++;
    else if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122)) {
      letters++;
      if (c <= 90) upper++;
    }
  }
  if (letters === 0 || digits === 0) return false;
  if (looksFake(value)) return false;
  // Identifiers like my_api_key_v2 have words; random strings have few repeated symbols.
  const entropy = shannonEntropy(value);
  if (entropy < 4 && /[a-z]{3,}[_-][a-z]{3,}/i.test(value)) return false;
  return entropy >= (upper > 0 || value.length >= 32 ? 3.2 : 3.0);
}

export function shannonEntropy(value: string): number {
  let ascii = true;
  for (let i = 0; i < value.length && ascii; i++) ascii = value.charCodeAt(i) < 128;
  if (ascii) {
    // The common case without a map: count, sum over the units seen, clear.
    for (let i = 0; i < value.length; i++) {
      const k = value.charCodeAt(i);
      ASCII_COUNTS[k] = (ASCII_COUNTS[k] ?? 0) + 1;
    }
    let h = 0;
    const n = value.length;
    for (let i = 0; i < value.length; i++) {
      const k = value.charCodeAt(i);
      const c = ASCII_COUNTS[k] ?? 0;
      if (c === 0) continue;
      const p = c / n;
      h -= p * Math.log2(p);
      ASCII_COUNTS[k] = 0;
    }
    return h;
  }
  const counts = new Map<string, number>();
  for (const ch of value) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  const n = value.length;
  for (const c of counts.values()) {
    const p = c / n;
    h -= p * Math.log2(p);
  }
  return h;
}
