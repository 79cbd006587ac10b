import { codeAt } from '../chars.js';
import type { Candidate } from '../types.js';
import { countDigits, isBareValueChar, isKeyChar, runEnd, withoutTrailingPunctuation } from './secret-chars.js';
import { looksFake, looksRandom } from './secret-entropy.js';
import { SECRET_CONTEXT_PRIORITY } from './secret-priority.js';
import { isPlaceholder, looksLikeCodeReference, plausiblePassword, UUID } from './secret-values.js';
import { DESCRIPTIVE_KEY, KEYWORDS, KEYWORDS_CJK, PASSWORD_WORD, PUBLIC_KEY_NAME } from './secret-words.js';

// After the key: optional closing quote, then ":", "=", "=>", ":=", a full-width colon, or a word
// such as "is"/"ist"/"est"/"es"/"は"; then an optional opening quote. Sticky, bounded.
const ASSIGNMENT =
  /["']?\]?[ \t]{0,3}(?:(=>|:=|[=:：])|[ \t](is|ist|est|es|lautet|était|era|was)[ \t]|(は|が|：))[ \t]{0,3}(["'`]?)/y;
const WHITESPACE_ONLY = /[ \t]{1,3}/y;
// Up to three short words between the keyword and the operator; bounded and sticky.
const QUALIFIER =
  /(?:[ \t]{1,2}[\p{L}\p{N}'’-]{1,15}){1,3}(?=[ \t]{0,2}(?:[=:：]|[ \t](?:is|ist|est|es|lautet|era|was)[ \t]))/uy;

export function detectAssignments(text: string, out: Candidate[]): void {
  scanAssignments(text, nextKeyword, out);
  scanAssignments(text, nextCjkKeyword, out);
}

// One case-insensitive alternation of ~30 keywords is tried at nearly every position of a text (its
// first letters are common ones). Every keyword holds one of these few anchors no more than
// MAX_ANCHOR_OFFSET characters after its start ("shared access key": 'key' after 14), so the
// anchors are searched (one cheap pass) and the keywords tried only at the positions before each.
const KEYWORD_ANCHORS =
  /pass|pwd|kennwort|mot de passe|contrase|senha|has[łl]o|wachtwoord|l[öo]senord|adgangskode|salasana|heslo|jelsz|пароль|secret|token|key|credential|clave|schl|cl[eé]|sourcegraph|sumo/gi;
const MAX_ANCHOR_OFFSET = 14;
const KEYWORD_AT = new RegExp(KEYWORDS.source, 'iy');

/**
 * The leftmost keyword match at or after `from`, as `KEYWORDS.exec` from `from` would find it: a
 * match holds an anchor within MAX_ANCHOR_OFFSET of its start, every anchor position is visited in
 * order, and the start positions before it are tried left to right.
 */
export function nextKeyword(text: string, from: number): RegExpExecArray | null {
  KEYWORD_ANCHORS.lastIndex = from;
  let anchor: RegExpExecArray | null;
  let tried = from; // starts below this were tried already
  while ((anchor = KEYWORD_ANCHORS.exec(text)) !== null) {
    const at = anchor.index;
    for (let s = Math.max(tried, at - MAX_ANCHOR_OFFSET); s <= at; s++) {
      KEYWORD_AT.lastIndex = s;
      const m = KEYWORD_AT.exec(text);
      if (m !== null) return m;
    }
    tried = at + 1;
    KEYWORD_ANCHORS.lastIndex = at + 1;
  }
  return null;
}

function nextCjkKeyword(text: string, from: number): RegExpExecArray | null {
  KEYWORDS_CJK.lastIndex = from;
  return KEYWORDS_CJK.exec(text);
}

function scanAssignments(
  text: string,
  find: (text: string, from: number) => RegExpExecArray | null,
  out: Candidate[],
): void {
  let from = 0;
  let m: RegExpExecArray | null;
  while ((m = find(text, from)) !== null) {
    const keywordStart = m.index;
    let keyEnd = keywordStart + m[0].length;
    // Extend over the rest of the identifier ("DB_PASSWORD_PROD", "apiKeySecondary").
    while (keyEnd < text.length && keyEnd - keywordStart < 48 && isKeyChar(text.charCodeAt(keyEnd))) keyEnd++;
    let keyStart = keywordStart;
    while (keyStart > 0 && keywordStart - keyStart < 40 && isKeyChar(text.charCodeAt(keyStart - 1))) keyStart--;
    const keyName = text.slice(keyStart, keyEnd);
    const passwordLike = PASSWORD_WORD.test(m[0]);
    const bareKey = /^[_-]?key$/i.test(m[0]);
    // Public keys are published on purpose ("ssh_public_key", "publicKey", "VAPID_PUB_KEY").
    const accessId = ACCESS_ID.test(keyName);
    if (
      SERVICE_KEYWORD.test(m[0]) &&
      !accessId &&
      DESCRIPTIVE_KEY.test(keyName.slice(keywordStart - keyStart + m[0].length))
    ) {
      // "SOURCEGRAPH_URL_TOKEN": the service name says nothing yet; a key word later in the name may.
      from = keywordStart + m[0].length;
      continue;
    }
    if (
      (DESCRIPTIVE_KEY.test(keyName.slice(keywordStart - keyStart + m[0].length)) && !accessId) ||
      (/(?:_id|Id)$/.test(keyName) && !accessId) ||
      PUBLIC_KEY_NAME.test(keyName) ||
      continuesAsOtherWord(text, keywordStart + m[0].length)
    ) {
      from = keyEnd;
      continue;
    }
    ASSIGNMENT.lastIndex = keyEnd;
    let a = ASSIGNMENT.exec(text);
    if (a === null) {
      // "Mot de passe du Wi-Fi : x", "contraseña del router es x", "password for the NAS: x".
      QUALIFIER.lastIndex = keyEnd;
      if (QUALIFIER.exec(text) !== null) {
        ASSIGNMENT.lastIndex = QUALIFIER.lastIndex;
        a = ASSIGNMENT.exec(text);
      }
    }
    let loose = false;
    if (a === null) {
      // "deploy token abcd1234...", "password Tr0ut&Pine2023": no operator, so the value must
      // look like a key (random) or a password (letters with digits or symbols).
      WHITESPACE_ONLY.lastIndex = keyEnd;
      if (WHITESPACE_ONLY.exec(text) !== null) {
        a = ['', undefined, undefined, undefined, ''] as unknown as RegExpExecArray;
        a.index = keyEnd;
        ASSIGNMENT.lastIndex = WHITESPACE_ONLY.lastIndex;
        loose = true;
      }
    }
    if (a === null) {
      from = keyEnd;
      continue;
    }
    const operator = a[1] ?? '';
    // "password == x", "token != y" are comparisons in code.
    if ((operator === '=' || operator === ':') && /[=!<>]/.test(text[ASSIGNMENT.lastIndex] ?? '')) {
      from = keyEnd;
      continue;
    }
    if (
      operator === '=' &&
      /[=!<>]/.test(text[keyEnd] ?? '') === false &&
      /[!<>=]$/.test(text.slice(Math.max(0, keyEnd - 1), keyEnd))
    ) {
      from = keyEnd;
      continue;
    }
    const quote = a[4] ?? '';
    const valueStart = ASSIGNMENT.lastIndex;
    let valueEnd: number;
    const limit = Math.min(text.length, valueStart + MAX_JUDGED_VALUE);
    // A value longer than the part that is judged (MAX_JUDGED_VALUE): its first part decides, and
    // the whole of it is redacted, to its closing quote (or the end of its line) or the end of its run.
    const inValue = quote === '' ? isBareValueChar : quotedValueChar(quote);
    valueEnd = runEnd(text, valueStart, limit, inValue);
    const longer = valueEnd === limit && inValue(codeAt(text, valueEnd));
    if (quote !== '') {
      if (text[valueEnd] !== quote && !longer) valueEnd = valueStart; // unterminated: not a quoted value
    } else {
      // Trailing sentence punctuation is not part of the value.
      // '!' and '?' stay: passwords end with them far more often than notes end a sentence on one.
      valueEnd = withoutTrailingPunctuation(text, valueStart, valueEnd);
    }
    const value = text.slice(valueStart, valueEnd);
    const accepted = loose
      ? passwordLike
        ? plausiblePassword(value, false) && value.length >= 6 && /[A-Za-z]/.test(value) && /[^A-Za-z]/.test(value)
        : looksRandom(value, 20)
      : passwordLike
        ? plausiblePassword(value, quote !== '')
        : // A name that only ends in "key" ("HEROKU_KEY", "bucket_key") says less than "api_key": its value must look more generated;
          // an access id (Sumo Logic, Alibaba, Tencent: the half of a key pair that names it) too.
          accessId
          ? looksRandom(value, 12) && countDigits(value) >= 3 && !UUID.test(value)
          : (bareKey ? looksRandom(value, 16) && countDigits(value) >= 3 : looksRandom(value, 12)) ||
            (UUID.test(value) && !looksFake(value, false));
    if (
      accepted &&
      !isPlaceholder(value) &&
      !(quote === '' && looksLikeCodeReference(text, value, valueEnd)) &&
      !(quote === '' && !passwordLike && isElided(text, value, valueEnd))
    ) {
      // Extended only once a value is accepted, and the scan goes on after it: each character is read once.
      const end = !longer
        ? valueEnd
        : quote !== ''
          ? runEnd(text, valueEnd, text.length, inValue)
          : withoutTrailingPunctuation(text, valueEnd, runEnd(text, valueEnd, text.length, inValue));
      out.push({ type: 'SECRET', start: valueStart, end, priority: SECRET_CONTEXT_PRIORITY });
      from = Math.max(end, keyEnd);
    } else {
      from = keyEnd;
    }
  }
}

/** How much of an assigned value is read to judge it (looksRandom, plausiblePassword). */
const MAX_JUDGED_VALUE = 512;

/** Inside a value quoted with `quote`: anything up to the closing quote or the end of the line. */
function quotedValueChar(quote: string): (c: number) => boolean {
  const q = quote.charCodeAt(0);
  return (c) => c >= 0 && c !== q && c !== 10;
}

const ACCESS_ID = /access[_-]?id$/i;
const SERVICE_KEYWORD = /^(?:sourcegraph|sumo(?:logic)?)$/i;

/**
 * "master-keying", "keyboard", "tokenizer", "secretary", "passwordless": the keyword is the start of
 * another word. A plural ("apikeys") or a second keyword ("secretkey", "tokensecret") still names a credential.
 */
function continuesAsOtherWord(text: string, keywordEnd: number): boolean {
  let end = keywordEnd;
  while (end < text.length && end - keywordEnd < 12 && text.charCodeAt(end) >= 97 && text.charCodeAt(end) <= 122) end++;
  if (end === keywordEnd) return false;
  return !/^s?(?:key|token|secret|pass|pwd|id|$)/.test(text.slice(keywordEnd, end));
}

/** A value shown cut off ("ops_eyJzaWdu…", "sk-abc123..."): the start of a token in documentation, not the token. */
function isElided(text: string, value: string, valueEnd: number): boolean {
  return value.endsWith('\u2026') || text.startsWith('...', valueEnd) || text.charCodeAt(valueEnd) === 0x2026;
}
