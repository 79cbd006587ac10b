import { codeAt, isAsciiAlnum, isUnspacedScript } from '../chars.js';
import type { Candidate, Detector } from '../types.js';

/** Known token formats and key blocks are certain; a value read from `key = value` is a guess. */
export const SECRET_FORMAT_PRIORITY = 100;
export const SECRET_CONTEXT_PRIORITY = 30;

// Every quantifier is bounded, and each alternative starts with a literal, so a start position
// costs a few comparisons unless a real prefix is there.
const KNOWN_TOKENS = new RegExp(
  [
    '(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}', // AWS access key id
    'gh[pousr]_[A-Za-z0-9]{36,251}', // GitHub classic tokens
    'github_pat_[A-Za-z0-9_]{22,255}', // GitHub fine-grained tokens
    'gl(?:pat|dt|rt|ptt|cbt|ft|imt|oas|soat|agent)-[A-Za-z0-9_-]{20,64}', // GitLab
    'xox[bp]-\\d{8,13}-\\d{8,13}[A-Za-z0-9-]{0,250}', // Slack bot and user tokens (workspace and user ids first)
    'xox[aorse]-(?:\\d-)?[A-Za-z0-9-]{10,250}', // other Slack tokens
    'xoxe\\.xox[bp]-\\d-[A-Z0-9]{100,200}', // Slack configuration tokens
    'xoxe-\\d-[A-Z0-9]{100,200}', // Slack configuration refresh tokens
    'xapp-\\d-[A-Za-z0-9-]{10,250}', // Slack app-level tokens
    'https://hooks\\.slack\\.com/services/T[A-Z0-9]{6,12}/B[A-Z0-9]{6,12}/[A-Za-z0-9]{16,32}', // Slack webhook
    '(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,247}', // Stripe secret and restricted keys
    'whsec_[A-Za-z0-9+/=]{20,80}', // Stripe webhook signing secret
    'sk-ant-(?:api|admin)\\d\\d-[A-Za-z0-9_-]{80,120}AA', // Anthropic API and admin keys
    'sk-ant-(?:oat|sid)\\d\\d-[A-Za-z0-9_-]{80,120}', // Anthropic OAuth and session tokens
    'sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,250}', // OpenAI
    'eyJ[A-Za-z0-9_-]{8,2000}\\.eyJ[A-Za-z0-9_-]{4,8000}\\.[A-Za-z0-9_-]{0,2000}', // JWT
    'AIza[0-9A-Za-z_-]{35}', // Google API key
    'npm_[A-Za-z0-9]{36}', // npm
    'hf_[A-Za-z0-9]{30,40}', // Hugging Face
    'SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}', // SendGrid
    'glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}', // Grafana service account
    'dop_v1_[a-f0-9]{64}', // DigitalOcean
    'shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}', // Shopify
    // Further families of gitleaks' default configuration (cmd/generate/config/rules):
    'AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}', // age secret key
    'ops_eyJ[A-Za-z0-9+/]{250,}={0,3}', // 1Password service account token
    'A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}', // 1Password secret key
    'ABSK[A-Za-z0-9+/]{109,269}={0,2}', // Amazon Bedrock API key
    'EAA[MC][A-Za-z0-9]{100,400}', // Facebook / Meta access token
    'EAAA[A-Za-z0-9_-]{60}', // Square access token
    'sq0(?:csp|atp)-[0-9A-Za-z_-]{22,43}', // Square
    'fo1_[A-Za-z0-9_-]{43}', // Fly.io
    'fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3}', // Fly.io macaroons
    'glc_[A-Za-z0-9+/]{32,400}={0,2}', // Grafana cloud
    'hv[sb]\\.[A-Za-z0-9_-]{90,300}', // HashiCorp Vault
    'HRKU-AA[0-9A-Za-z_-]{58}', // Heroku
    'api_org_[A-Za-z]{34}', // Hugging Face organisation
    's-s4t2(?:ud|af)-[a-f0-9]{64}', // 42 intra
    'ntn_\\d{11}[A-Za-z0-9]{35}', // Notion
    'sntry[su]_[A-Za-z0-9+/=_]{60,400}', // Sentry
    'sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}', // Sourcegraph
    'pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,300}', // PyPI
    'dp\\.(?:pt|st|ct|sa|scim|audit)\\.[A-Za-z0-9]{40,44}', // Doppler
    'PMAK-[a-f0-9]{24}-[a-f0-9]{34}', // Postman
    'key-[0-9a-f]{32}', // Mailgun
    'lin_api_[A-Za-z0-9]{40}', // Linear
    'dapi[a-f0-9]{32}(?:-\\d)?', // Databricks
    'ATATT3[A-Za-z0-9_=-]{186}', // Atlassian
    '[MNO][A-Za-z0-9_-]{23,25}\\.[A-Za-z0-9_-]{6}\\.[A-Za-z0-9_-]{27,38}', // Discord bot token
    'dt0c01\\.[A-Z0-9]{24}\\.[A-Z0-9]{64}', // Dynatrace
    'NRAK-[A-Z0-9]{27}', // New Relic
    'pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_=.-]{32,64}', // PlanetScale
    'pul-[a-f0-9]{40}', // Pulumi
    'rubygems_[a-f0-9]{48}', // RubyGems
    'xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}', // Brevo (Sendinblue)
    'LTAI[A-Za-z0-9]{20}', // Alibaba Cloud
    'AKCp[A-Za-z0-9]{69}', // JFrog Artifactory
    'duffel_(?:test|live)_[A-Za-z0-9_=-]{43}', // Duffel
    'shippo_(?:live|test)_[a-f0-9]{40}', // Shippo
    'FLWSECK(?:_TEST)?-[a-h0-9]{32}-X', // Flutterwave
    'tk-us-[A-Za-z0-9_-]{48}', // Scalingo
    'pnu_[A-Za-z0-9]{36}', // Prefect
    'rdme_[a-z0-9]{70}', // ReadMe
    'v1\\.0-[a-f0-9]{24}-[a-f0-9]{146}', // Cloudflare origin CA
  ]
    .map((p) => `(?:${p})`)
    .join('|'),
  'g',
);

const TOKEN_CHAR = /[A-Za-z0-9_-]/;
const ANTHROPIC_KEY = /^sk-ant-(?:api|admin)\d\d-[A-Za-z0-9_-]{80,120}AA$/;

/**
 * Formats that open with a character class, not a literal: searched for by their literal middle
 * (one cheap scan), and the class part is checked backwards from it. In one alternation with the
 * others they would be tried at every position of a long run of digits or letters.
 */
const MIDDLE_ANCHORED: ReadonlyArray<{ middle: RegExp; before: RegExp; maxBefore: number }> = [
  { middle: /Q~[A-Za-z0-9_~.-]{31,34}/g, before: /[A-Za-z0-9_~.]{3}\d$/, maxBefore: 4 }, // Azure AD client secret
  { middle: /-us\d{1,2}/g, before: /[0-9a-f]{32}$/, maxBefore: 32 }, // Mailchimp
  { middle: /:AA[0-9A-Za-z_-]{33}/g, before: /\d{8,10}$/, maxBefore: 10 }, // Telegram bot token
  { middle: /\.atlasv1\.[a-z0-9_=-]{60,70}/g, before: /[a-z0-9]{14}$/, maxBefore: 14 }, // Terraform Cloud
  { middle: /\|[0-9A-Za-z_-]{27}/g, before: /\d{15,16}$/, maxBefore: 16 }, // Facebook app id|secret
];

function detectMiddleAnchored(run: string, offset: number, out: Candidate[]): void {
  for (const { middle, before, maxBefore } of MIDDLE_ANCHORED) {
    middle.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = middle.exec(run)) !== null) {
      const prefix = before.exec(run.slice(Math.max(0, m.index - maxBefore), m.index));
      if (prefix === null) continue;
      const start = m.index - prefix[0].length;
      const end = m.index + m[0].length;
      if (TOKEN_CHAR.test(run[start - 1] ?? '') || TOKEN_CHAR.test(run[end] ?? '')) continue;
      if (looksFake(run.slice(start, end), false)) continue;
      out.push({ type: 'SECRET', start: offset + start, end: offset + end, priority: SECRET_FORMAT_PRIORITY });
    }
  }
}

/**
 * Every known format is made of these characters only and is at least MIN_TOKEN long (the
 * shortest, a Slack `xoxa-` token, has 15), so a format can only match inside a run of them of
 * that length. Prose is short words between spaces: one pass of this class finds the few long runs,
 * and the format alternation, which costs a few comparisons at each position it is tried at, reads
 * only those. A run's neighbours are not token characters, so the boundary checks inside a run see
 * what they would see in the whole text.
 */
const MIN_TOKEN = 15;
const TOKEN_RUN_CHARS = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.+/=~|:')
  TOKEN_RUN_CHARS[c.charCodeAt(0)] = 1;

function detectKnownTokens(text: string, out: Candidate[]): void {
  // A loop, not a regex: /[…]{15,}/g retries every position of each shorter run (measured 3-4x slower).
  let runStart = 0;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 0;
    if (c < 128 && TOKEN_RUN_CHARS[c] === 1) continue;
    if (i - runStart >= MIN_TOKEN) {
      const run = text.slice(runStart, i);
      detectMiddleAnchored(run, runStart, out);
      detectKnownTokensIn(run, runStart, out);
    }
    runStart = i + 1;
  }
}

function detectKnownTokensIn(run: string, offset: number, out: Candidate[]): void {
  KNOWN_TOKENS.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = KNOWN_TOKENS.exec(run)) !== null) {
    // No format matches the empty string; were one edited to (an empty alternative), this loop
    // would repeat that match forever. Step past it instead. (Not matchAll: it clones this large
    // pattern on every call, which made a redacted edit 1.5x slower.)
    if (m[0].length === 0) {
      KNOWN_TOKENS.lastIndex++;
      continue;
    }
    const start = m.index;
    const end = start + m[0].length;
    // A prefix in the middle of an identifier ("mask-ant-...", "AKIA" inside a longer word) is not a token.
    const before = run[start - 1] ?? '';
    const after = run[end] ?? '';
    if (TOKEN_CHAR.test(before) || (TOKEN_CHAR.test(after) && !m[0].startsWith('eyJ'))) continue;
    // Prefixed formats are checked for filler only; the loose "sk-" format also for runs of the alphabet.
    // Slack tokens carry numeric workspace and user ids ("xoxb-2-511111111-…"): the filler test reads their random tail.
    const body = m[0].startsWith('xox') ? m[0].slice(m[0].lastIndexOf('-') + 1) : m[0].slice(4);
    if (looksFake(body, m[0].startsWith('sk-') && !ANTHROPIC_KEY.test(m[0]))) continue;
    out.push({ type: 'SECRET', start: offset + start, end: offset + end, priority: SECRET_FORMAT_PRIORITY });
  }
}

/**
 * A Fly.io token is a comma-separated list of macaroons ("FlyV1 fm2_…,fm2_…"): one secret, not one
 * per macaroon. The token-run pass splits at commas, so neighbours joined by one are merged here.
 */
function joinFlyMacaroons(text: string, out: Candidate[], from: number): void {
  let kept = from;
  for (let i = from; i < out.length; i++) {
    const c = out[i] as Candidate;
    const last = kept > from ? (out[kept - 1] as Candidate) : undefined;
    if (
      last !== undefined &&
      last.end + 1 === c.start &&
      text.charCodeAt(last.end) === 44 &&
      text.startsWith('fm', c.start) &&
      text.startsWith('fm', last.start)
    ) {
      last.end = c.end;
      continue;
    }
    out[kept++] = c;
  }
  out.length = kept;
}

const MAX_PEM = 64 * 1024;
const SECRET_PLACEHOLDER = '[REDACTED:SECRET]';

/** PEM private key blocks (RSA, EC, OPENSSH, PGP, PKCS#8 plain and encrypted), header to footer. */
function detectPrivateKeyBlocks(text: string, out: Candidate[]): void {
  let begin = text.indexOf('-----BEGIN ');
  // Footers are looked up once, moving forward, so many headers without a footer stay linear.
  let footer = begin === -1 ? -1 : text.indexOf('-----END ', begin);
  while (begin !== -1) {
    const headerEnd = text.indexOf('-----', begin + 11);
    const header = headerEnd !== -1 && headerEnd - begin < 80 ? text.slice(begin + 11, headerEnd) : '';
    if (!/PRIVATE KEY/.test(header)) {
      begin = text.indexOf('-----BEGIN ', begin + 11);
      continue;
    }
    const bodyStart = headerEnd + 5;
    if (footer !== -1 && footer < bodyStart) footer = text.indexOf('-----END ', bodyStart);
    const nextBegin = text.indexOf('-----BEGIN ', bodyStart);
    let end: number;
    if (footer !== -1 && footer - begin <= MAX_PEM && (nextBegin === -1 || footer < nextBegin)) {
      const close = text.indexOf('-----', footer + 9);
      end = close !== -1 && close - footer < 80 ? close + 5 : footer + 9;
      // Blocks pasted without a line break between them may share dashes ("…KEY-----BEGIN …"):
      // this one ends where the next begins, so that the next is read too.
      if (nextBegin !== -1 && nextBegin < end) end = nextBegin;
    } else {
      end = truncatedBodyEnd(text, bodyStart, Math.min(text.length, begin + MAX_PEM));
    }
    // "-----BEGIN PRIVATE KEY-----\nanything\n-----END…" is a placeholder: a key, even a pasted
    // first line of one, has a body of base64 (an Ed25519 key has over 60 characters of it).
    const bodyEnd = footer !== -1 && footer < end ? footer : end;
    if (base64Count(text, bodyStart, bodyEnd) >= 16)
      out.push({ type: 'SECRET', start: begin, end, priority: SECRET_FORMAT_PRIORITY });
    begin = nextBegin !== -1 && nextBegin < end ? text.indexOf('-----BEGIN ', end) : nextBegin;
  }
}

function base64Count(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to && n < 16; i++) {
    const c = text.charCodeAt(i);
    if (isAsciiAlnum(c) || c === 43 || c === 47) n++;
  }
  return n;
}

const MAX_PEM_LINE = 128;
const PEM_BODY_LINE = /^(?:[A-Za-z0-9+/=]*|[A-Za-z-]+: .*)\r?$/;

/**
 * A block cut off before its footer is still a key: take the lines after the header that are
 * base64 (or "Proc-Type:"-style headers), stopping at the first line of anything else.
 */
function truncatedBodyEnd(text: string, bodyStart: number, limit: number): number {
  let end = bodyStart;
  let lineStart = bodyStart;
  if (text.charCodeAt(lineStart) === 13) lineStart++;
  if (text.charCodeAt(lineStart) === 10) lineStart++;
  while (lineStart < limit) {
    // PEM lines are 64 characters; a longer "line" is not key material, and the bounded search
    // keeps many headers in newline-free text linear.
    let lineEnd = lineStart;
    while (lineEnd < limit && lineEnd - lineStart <= MAX_PEM_LINE && text.charCodeAt(lineEnd) !== 10) lineEnd++;
    if (lineEnd - lineStart > MAX_PEM_LINE) break;
    const line = text.slice(lineStart, lineEnd);
    if (line.trim() === '' || !PEM_BODY_LINE.test(line)) break;
    end = lineEnd;
    lineStart = lineEnd + 1;
  }
  return end;
}

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

function detectUrlPasswords(text: string, out: Candidate[]): void {
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

function detectBundlerCredentials(text: string, out: Candidate[]): void {
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

/** The end of the run of characters `inRun` accepts that starts at `from`, at most `limit`. */
function runEnd(text: string, from: number, limit: number, inRun: (c: number) => boolean): number {
  let end = from;
  while (end < limit && inRun(text.charCodeAt(end))) end++;
  return end;
}

/** A character of a Bearer or header credential (the patterns' class, with the '=' padding). */
function isCredentialChar(c: number): boolean {
  return isAsciiAlnum(c) || c === 46 || c === 95 || c === 126 || c === 43 || c === 47 || c === 61 || c === 45;
}

/** A character of a Bundler password (the pattern's class: not whitespace, a quote, ';' or '&'). */
function isBundlerPasswordChar(c: number): boolean {
  return c >= 0 && c !== 34 && c !== 39 && c !== 59 && c !== 38 && !isSpace(c);
}

/** `end` without the sentence punctuation a bare value ends on ('!' and '?' stay: see scanAssignments). */
function withoutTrailingPunctuation(text: string, from: number, end: number): number {
  while (end > from && /[.,;:)\]}>]/.test(text[end - 1] ?? '')) end--;
  return end;
}

function detectAuthHeaders(text: string, out: Candidate[]): void {
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

function detectAwsSecretsNearKeyIds(text: string, keyIdEnds: number[], out: Candidate[]): void {
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

// Words that make the value after them sensitive. Passwords may be short and wordy; keys and tokens
// must look random. Latin-script words are matched case-insensitively, and apart from the CJK ones,
// which need no case folding: one case-insensitive alternation over mixed scripts is several times
// slower in V8.
export const KEYWORDS =
  /passw(?:or)?d|passwd|\bpwd|passphrase|\bpass\b|kennwort|passwort|mot de passe|contrase[nñ]a|senha|has[łl]o|wachtwoord|l[öo]senord|adgangskode|passord|salasana|\bheslo|jelsz[óo]|пароль|secret|token|api[_ -]?key|apikey|access[_ -]?key|private[_ -]?key|signing[_ -]?key|auth[_ -]?key|encryption[_ -]?key|master[_ -]?key|license[_ -]?key|credentials?|clave|schl[uü]ssel|\bcl[eé](?![a-z])|account[_ -]?key|shared[_ -]?access[_ -]?key|subscription[_ -]?key|consumer[_ -]?key|client[_ -]?key|app[_ -]?key|session[_ -]?key|storage[_ -]?key|sourcegraph|sumo(?:logic)?(?![a-z])|(?<=[a-z0-9])[_-]?key(?![a-z])/gi;
const KEYWORDS_CJK = /パスワード|暗証番号|トークン|シークレット|密码|密碼|비밀번호/g;

const PUBLIC_KEY_NAME = /public|(?:^|[_-])pub(?:[_-]|key)|publishable/i;

const PASSWORD_WORD =
  /pass|kennwort|passwort|contraseñ|contrasen|senha|has[łl]o|wachtwoord|l[öo]senord|adgangskode|passord|salasana|heslo|jelsz[óo]|пароль|パスワード|暗証|密码|密碼|비밀번호|pwd/i;

// A key name that describes something about the secret rather than holding it.
const DESCRIPTIVE_KEY =
  /(?:_id|-id|\bid\b|name|type|url|uri|path|file|length|len\b|count|expir|ttl|endpoint|policy|hint|reset|prompt|field|label|format|header|usage|limit|rotation|required|enabled|manager|store|vault|hash_alg|strength|min|max|provider|issuer|audience|scope|lifetime|env|variable|placeholder|character)/i;

const VALUE_STOPWORDS = new Set([
  'null',
  'none',
  'nil',
  'undefined',
  'true',
  'false',
  'empty',
  'required',
  'optional',
  'redacted',
  'hidden',
  'masked',
  'secret',
  'password',
  'passwort',
  'token',
  'changeme',
  'example',
  'xxx',
  'todo',
  'tbd',
  'n/a',
  'na',
  'see',
  'siehe',
  'voir',
  'ver',
  'in',
  'im',
  'at',
  'stored',
  'saved',
  'managed',
  'rotated',
  'changed',
  'reset',
  'set',
  'unset',
  'protected',
  'encrypted',
  'hashed',
  'removed',
  'omitted',
  'provided',
  'needed',
  'missing',
  'expired',
  'invalid',
  'incorrect',
  'wrong',
  'ok',
  'the',
  'a',
  'an',
  'my',
  'your',
  'from',
  'via',
  'is',
  'was',
  'will',
  'must',
  'should',
  'not',
  'no',
  'yes',
  'string',
  'str',
  'bool',
  'boolean',
  'int',
  'number',
  'value',
  'default',
  'same',
  'unknown',
  'bearer',
  'basic',
  'jwt',
  'oauth',
  'oauth2',
  'header',
  'cookie',
  'env',
  'file',
  'vault',
  'keychain',
  '1password',
  'bitwarden',
  'lastpass',
  'for',
  'of',
  'and',
  'or',
  'to',
  'with',
  'on',
  'by',
  'this',
  'that',
  'it',
  'und',
  'oder',
  'der',
  'die',
  'das',
  'le',
  'la',
  'les',
  'el',
  'los',
  'de',
  'du',
  'des',
  'et',
  'y',
  'generated',
  'auto',
  'random',
  'updated',
  'pending',
  'revoked',
  'valid',
  'active',
  'disabled',
]);

// After the key: optional closing quote, then ":", "=", "=>", ":=", a full-width colon, or a word
// such as "is"/"ist"/"est"/"es"/"は"; then an optional opening quote. Sticky, bounded.
const ASSIGNMENT =
  /["']?\]?[ \t]{0,3}(?:(=>|:=|[=:：])|[ \t](is|ist|est|es|lautet|était|era|was)[ \t]|(は|が|：))[ \t]{0,3}(["'`]?)/y;
const WHITESPACE_ONLY = /[ \t]{1,3}/y;
// Up to three short words between the keyword and the operator; bounded and sticky.
const QUALIFIER =
  /(?:[ \t]{1,2}[\p{L}\p{N}'’-]{1,15}){1,3}(?=[ \t]{0,2}(?:[=:：]|[ \t](?:is|ist|est|es|lautet|era|was)[ \t]))/uy;

function detectAssignments(text: string, out: Candidate[]): void {
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

/** The longest password a quoted value with spaces may be ("correct horse battery staple"). */
const MAX_TYPED_PASSWORD = 128;

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

// A UUID after a key or token name is the credential (Heroku, Snyk, HubSpot API keys are UUIDs).
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

function countDigits(value: string): number {
  let n = 0;
  for (let i = 0; i < value.length; i++) if (value.charCodeAt(i) >= 48 && value.charCodeAt(i) <= 57) n++;
  return n;
}

function isKeyChar(c: number): boolean {
  return isAsciiAlnum(c) || c === 95 || c === 45 || c === 46;
}

function isBareValueChar(c: number): boolean {
  // Stops at whitespace (Unicode spaces and line separators too), quotes, separators of lists and
  // markup, and at CJK text, which is written right after a value ("パスワードはabc123です").
  return (
    c > 32 &&
    c !== 34 &&
    c !== 39 &&
    c !== 96 &&
    c !== 44 &&
    c !== 59 &&
    c !== 60 &&
    c !== 62 &&
    !isUnicodeSpace(c) &&
    !isUnspacedScript(c)
  );
}

/** What `\s` matches: tab to carriage return, the space, and the Unicode spaces below. */
function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || isUnicodeSpace(c);
}

/**
 * The characters besides ASCII ones that `\s` matches: a value does not run over them. Through the
 * engine's view only U+0085, U+2028 and U+2029 reach a detector (src/pii/normalize.ts folds the
 * other spaces to ' ' and drops U+FEFF); the list is whole for a detector called on raw text.
 */
function isUnicodeSpace(c: number): boolean {
  return (
    c >= 0x85 &&
    (c === 0x85 ||
      c === 0xa0 ||
      c === 0x1680 ||
      (c >= 0x2000 && c <= 0x200a) ||
      c === 0x2028 ||
      c === 0x2029 ||
      c === 0x202f ||
      c === 0x205f ||
      c === 0x3000 ||
      c === 0xfeff)
  );
}

function plausiblePassword(value: string, quoted: boolean): boolean {
  if (value.length < 4) return false;
  // Past 128 characters nobody types a password: an unbroken value that long is a generated one
  // (a hash, a token pasted as the password), a quoted one with spaces is prose.
  if ((!quoted || value.length > MAX_TYPED_PASSWORD) && /\s/.test(value)) return false;
  const lower = value.toLowerCase();
  if (VALUE_STOPWORDS.has(lower)) return false;
  // A plain lowercase word after "password" is usually prose ("password: rotated monthly").
  if (/^[a-zà-ÿ]+$/.test(value) && value.length < 10) return false;
  return true;
}

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

function isPlaceholder(value: string): boolean {
  if (value.length === 0) return true;
  if (/^[$%{<[]/.test(value) || value.includes('${') || value.includes('{{')) return true;
  // A plain URL is a reference to where a secret lives; URLs that embed credentials or are
  // secrets themselves (webhooks) are caught by their own rules.
  if (/^[a-z][a-z0-9+.-]{1,20}:\/\//i.test(value)) return true;
  if (/^(?:x+|\*+|\.+|-+|_+|#+|•+|0+|1234|12345|123456)$/i.test(value)) return true;
  if (/^(?:your|my|some|insert|replace|enter|put|example|dummy|fake|test)[_-]?/i.test(value) && !/\d/.test(value))
    return true;
  if (/^(?:your|insert|replace|enter)[_-]/i.test(value)) return true;
  return /REDACTED/i.test(value);
}

/** `password = getPassword()`, `token: process.env.TOKEN`, `secret = config.secret`. */
function looksLikeCodeReference(text: string, value: string, valueEnd: number): boolean {
  if (text[valueEnd] === '(' || value.includes('(')) return true;
  if (/^(?:process|os|env|config|settings|self|this|cfg|secrets|vars|params|args|req|request|ctx)\b[.[]/.test(value))
    return true;
  // A bare identifier with no digits is a variable, not a literal.
  return /^[A-Za-z_][A-Za-z_]*(?:\.[A-Za-z_][A-Za-z_]*)*$/.test(value) && /[a-z][A-Z]|_|\./.test(value);
}

export const detectSecrets: Detector = (text: string, _config, out: Candidate[]) => {
  const firstOwn = out.length;
  detectKnownTokens(text, out);
  joinFlyMacaroons(text, out, firstOwn);
  const keyIdEnds: number[] = [];
  for (let i = firstOwn; i < out.length; i++) {
    const c = out[i] as Candidate;
    if (/^(?:AKIA|ASIA)/.test(text.slice(c.start, c.start + 4))) keyIdEnds.push(c.end);
  }
  // A key id stored earlier is a placeholder now; it still says what the next random string is
  // (the secret written on the next line by a later edit).
  for (let at = text.indexOf(SECRET_PLACEHOLDER); at !== -1; at = text.indexOf(SECRET_PLACEHOLDER, at + 1)) {
    keyIdEnds.push(at + SECRET_PLACEHOLDER.length);
  }
  keyIdEnds.sort((a, b) => a - b);
  if (keyIdEnds.length > 0) detectAwsSecretsNearKeyIds(text, keyIdEnds, out);
  detectPrivateKeyBlocks(text, out);
  if (text.includes('://')) detectUrlPasswords(text, out);
  if (text.includes('BUNDLE_')) detectBundlerCredentials(text, out);
  detectAuthHeaders(text, out);
  detectAssignments(text, out);
};
