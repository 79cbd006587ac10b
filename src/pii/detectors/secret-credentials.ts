import type { Candidate } from '../types.js';
import { isBundlerPasswordChar, isCredentialChar, isSpace, runEnd } from './secret-chars.js';
import { looksFake, looksRandom } from './secret-entropy.js';
import { SECRET_CONTEXT_PRIORITY, SECRET_FORMAT_PRIORITY } from './secret-priority.js';
import { isPlaceholder, UUID } from './secret-values.js';

// scheme://user:password@host — the password is the secret; also with no user, as Redis URLs give
// the password alone (redis://:password@host). Anchored on the literal "://" so
// ordinary words cost nothing.
// The user part is read whole, however long (a bound here once let a password after a user of 129
// characters through); it cannot hold '/', so it ends before the next "://" and no two starts read
// the same characters. Its colon is not the one of a "://" that follows (`a://b://user:pw@host`:
// the second URL's password is found, not skipped over).
// The password may itself hold '@', '?' or '#' when people paste it unencoded: it runs to the last
// '@' before the host (the run of characters other than whitespace and '/'), however long. Each
// run ends at the next "://" (it holds a '/'), so every character is read at most twice.
const URL_USER = /:\/\/[^\s:@/?#]*:(?!\/\/)/g;

/**
 * The pattern's former class `[^\s/]`: not whitespace, not '/' (control characters run on, as they
 * did); nor a quote or an angle bracket, which close the URL in code and markup
 * (`"https://host:8000";@x`, `<https://host:8000>@x`): a password pasted unencoded into a URL does
 * not hold them, the shell and the markup would have cut it there.
 */
function isUrlPasswordChar(c: number): boolean {
  return c >= 0 && c !== 47 && c !== 34 && c !== 39 && c !== 96 && c !== 60 && c !== 62 && !isSpace(c);
}

export function detectUrlPasswords(text: string, out: Candidate[]): void {
  URL_USER.lastIndex = 0;
  while (URL_USER.test(text)) {
    const start = URL_USER.lastIndex;
    let at = runEnd(text, start, text.length, isUrlPasswordChar) - 1;
    while (at > start && text.charCodeAt(at) !== 64) at--;
    if (at <= start) continue; // no '@', or no password before it
    const password = text.slice(start, at);
    if (isPlaceholder(password)) continue;
    out.push({ type: 'SECRET', start, end: at, priority: SECRET_FORMAT_PRIORITY });
  }
}

// Bundler's per-host credentials (`bundle config`, .bundle/config, CI variables): the key names a gem
// server host (`BUNDLE_GEMS__CONTRIBSYS__COM`, `BUNDLE_RUBYGEMS__PKG__GITHUB__COM`), the value is
// `user:password` or `user:token`. Anchored on the literal "BUNDLE_", so other text costs one search;
// every part is bounded, so a run of "BUNDLE_BUNDLE_…" stays linear.
const BUNDLER_CREDENTIALS =
  /\bBUNDLE_[A-Z0-9_]{0,100}[A-Z0-9]__[A-Z0-9]{1,20}(?![A-Za-z0-9_])["']?[ \t]*[:=][ \t]*(["']?)([^\s"':;&]{1,64}:[^\s"';&]{1,128})\1/g;

export function detectBundlerCredentials(text: string, out: Candidate[]): void {
  BUNDLER_CREDENTIALS.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = BUNDLER_CREDENTIALS.exec(text)) !== null) {
    const value = m[2] ?? '';
    if (isPlaceholder(value.slice(value.indexOf(':') + 1))) continue;
    const matchEnd = m.index + m[0].length - (m[1] ?? '').length;
    // A password longer than the pattern reads (128 characters): redacted to its end.
    const end = (m[1] ?? '') === '' ? runEnd(text, matchEnd, text.length, isBundlerPasswordChar) : matchEnd;
    BUNDLER_CREDENTIALS.lastIndex = Math.max(BUNDLER_CREDENTIALS.lastIndex, end);
    // As certain as a known format (the key name says what it is); the longer span wins a tie with a token inside it.
    out.push({ type: 'SECRET', start: matchEnd - value.length, end, priority: SECRET_FORMAT_PRIORITY });
  }
}

/** The longest credential the Bearer and header patterns read (and looksRandom judges). */
const MAX_CREDENTIAL = 2048;
const BEARER = /\b(?:Bearer|Token|Basic)[ \t]{1,8}([A-Za-z0-9._~+/-]{16,2048}=*)/g;

export function detectAuthHeaders(text: string, out: Candidate[]): void {
  BEARER.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = BEARER.exec(text)) !== null) {
    const value = m[1] ?? '';
    // Judged on the 2,048 characters the pattern reads: its '=' padding may take it past them.
    if (!looksRandom(value.slice(0, MAX_CREDENTIAL), 16)) continue;
    const matchEnd = m.index + m[0].length;
    // A credential longer than the pattern reads (2,048 characters) is redacted to its end.
    const end = runEnd(text, matchEnd, text.length, isCredentialChar);
    BEARER.lastIndex = end;
    out.push({ type: 'SECRET', start: matchEnd - value.length, end, priority: SECRET_CONTEXT_PRIORITY + 1 });
  }
  // An HTTP header that carries a credential, with or without a scheme word (curl -H, HTTP dumps):
  // "Authorization: 5eb4223e-…", "Authorization: Basic YnJvd3Nlcjo=", "X-Api-Key: …", "Api-Token: …".
  AUTH_HEADER.lastIndex = 0;
  while ((m = AUTH_HEADER.exec(text)) !== null) {
    const value = m[2] ?? '';
    const basic = /^basic$/i.test(m[1] ?? '');
    const ok = basic
      ? /^[A-Za-z0-9+/]{8,}={0,2}$/.test(value) && !isPlaceholder(value)
      : looksRandom(value, 10) || (UUID.test(value) && !looksFake(value));
    if (!ok) continue;
    const matchEnd = m.index + m[0].length;
    const end = runEnd(text, matchEnd, text.length, isCredentialChar);
    AUTH_HEADER.lastIndex = end;
    out.push({ type: 'SECRET', start: matchEnd - value.length, end, priority: SECRET_CONTEXT_PRIORITY + 1 });
  }
}

const AUTH_HEADER =
  /\b(?:Authorization|Proxy-Authorization|X-Api-Key|Api-Key|X-Auth-Token|Api-Token|X-Access-Token)[ \t]*:[ \t]*(?:(Basic|Bearer|Token)[ \t]+)?([A-Za-z0-9._~+/=-]{8,2048})/gi;

// AWS secret access keys are 40 base64 characters; alone they are too generic, so they count only
// within a few lines after an access key id (CSV exports, credentials files without labels).
const AWS_SECRET_NEAR = /(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=])/g;

export function detectAwsSecretsNearKeyIds(text: string, keyIdEnds: number[], out: Candidate[]): void {
  for (const from of keyIdEnds) {
    // Only the 160 characters after a key id are searched (one char more on each side for the
    // boundary checks), so many key ids cost O(n), not a search to the end of the text each.
    const windowStart = Math.max(0, from - 1);
    const window = text.slice(windowStart, Math.min(text.length, from + 160 + 41));
    AWS_SECRET_NEAR.lastIndex = from - windowStart;
    const m = AWS_SECRET_NEAR.exec(window);
    if (m === null || m.index + windowStart - from > 160) continue;
    m.index += windowStart;
    if (!looksRandom(m[0], 40)) continue;
    out.push({ type: 'SECRET', start: m.index, end: m.index + 40, priority: SECRET_CONTEXT_PRIORITY + 1 });
  }
}
