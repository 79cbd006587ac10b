import type { Candidate } from '../types.js';
import { looksFake } from './secret-entropy.js';
import { SECRET_FORMAT_PRIORITY } from './secret-priority.js';

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

export function detectKnownTokens(text: string, out: Candidate[]): void {
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
export function joinFlyMacaroons(text: string, out: Candidate[], from: number): void {
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
