/**
 * The secret detector's edges, for mutation testing (scripts/mutation/targets.mjs, pii-secret):
 * every known token format at the shortest and longest length it allows and one character
 * outside, glued to a neighbour, with a wrong prefix letter or a placeholder body; the formats
 * found by their middle; PEM blocks; URL passwords; Bundler credentials; authorization headers;
 * AWS secrets near a key id; `key = value` assignments; and the randomness tests' thresholds.
 * Every case asserts what a user sees: the exact redacted spans, or none.
 */
import { describe, expect, it } from 'vitest';
import { detectSecrets, looksFake, looksRandom, shannonEntropy } from '../../src/pii/detectors/secret.js';
import { redact } from '../../src/pii/index.js';
import type { Candidate } from '../../src/pii/types.js';
import { seededRandom } from '../kit/random.js';

const secrets = (text: string): string[] =>
  redact(text)
    .findings.filter((f) => f.type === 'SECRET')
    .map((f) => text.slice(f.start, f.end));

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const ALNUM = UPPER + LOWER + DIGITS;
const URL64 = ALNUM + '_-';
const B64 = ALNUM + '+/';
const HEX = '0123456789abcdef';
const UPHEX = UPPER + DIGITS;

/** A fixed-seed generator (mulberry32): the same bodies on every run, none of them filler by chance. */
function generator(seed: number): (alphabet: string, length: number) => string {
  const next = seededRandom(seed);
  return (alphabet, length) => {
    for (;;) {
      let s = '';
      for (let i = 0; i < length; i++) s += alphabet[Math.floor(next() * alphabet.length)];
      // Short bodies over small alphabets may repeat by chance; the detector calls those filler.
      if (length < 8 || !looksFake(s)) return s;
    }
  };
}

const random = generator(22);

/** The characters a token may not touch: both ends of each range of the token class, '_' and '-'. */
const GLUE = ['a', 'z', 'A', 'Z', '0', '9', '_', '-'];

/** A generator of its own for each case, so that a case's bodies do not depend on the cases before it. */
function generatorFor(key: string): (alphabet: string, length: number) => string {
  let h = 2166136261;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619);
  return generator(h);
}

// ---------------------------------------------------------------------------------------------
// Known token formats

type Part = string | { alphabet: string; min: number; max: number | undefined };
const cls = (alphabet: string, min: number, max?: number): Part => ({ alphabet, min, max });

interface Format {
  name: string;
  /** Alternatives of the literal choices are spelled out as separate formats. */
  parts: Part[];
  /** Lengths of class parts (by index) for which a shorter or longer body is still another format's token. */
  shorterStillToken?: number[];
  longerStillToken?: number[];
}

const f = (name: string, ...parts: Part[]): Format => ({ name, parts });

const FORMATS: Format[] = [
  ...['AKIA', 'ASIA', 'ABIA', 'ACCA', 'AGPA', 'AIDA', 'AROA', 'AIPA', 'ANPA', 'ANVA', 'APKA'].map((p) =>
    f(`AWS ${p}`, p, cls(UPHEX, 16, 16)),
  ),
  ...'pousr'.split('').map((c) => f(`GitHub gh${c}_`, `gh${c}_`, cls(ALNUM, 36, 251))),
  f('GitHub fine-grained', 'github_pat_', cls(ALNUM + '_', 22, 255)),
  ...['pat', 'dt', 'rt', 'ptt', 'cbt', 'ft', 'imt', 'oas', 'soat', 'agent'].map((p) =>
    f(`GitLab gl${p}-`, `gl${p}-`, cls(URL64, 20, 64)),
  ),
  // A longer user id is a user id and the start of the tail.
  ...['b', 'p'].map((c) => ({
    ...f(`Slack xox${c}`, `xox${c}-`, cls(DIGITS, 8, 13), '-', cls(DIGITS, 8, 13), '-', cls(ALNUM + '-', 0, 249)),
    longerStillToken: [3],
  })),
  ...'aorse'.split('').map((c) => f(`Slack xox${c}`, `xox${c}-`, cls(ALNUM + '-', 10, 250))),
  // Without the digit, "7-" and the body are a body of the plain form.
  { ...f('Slack xoxa with a digit', 'xoxa-7-', cls(ALNUM + '-', 10, 250)), shorterStillToken: [1] },
  ...['b', 'p'].map((c) => f(`Slack configuration xoxe.xox${c}`, `xoxe.xox${c}-4-`, cls(UPHEX, 100, 200))),
  f('Slack app', 'xapp-1-', cls(ALNUM + '-', 10, 250)),
  f(
    'Slack webhook',
    'https://hooks.slack.com/services/T',
    cls(UPHEX, 6, 12),
    '/B',
    cls(UPHEX, 6, 12),
    '/',
    cls(ALNUM, 16, 32),
  ),
  ...['sk_live_', 'sk_test_', 'rk_live_', 'rk_test_'].map((p) => f(`Stripe ${p}`, p, cls(ALNUM, 10, 247))),
  f('Stripe webhook', 'whsec_', cls(ALNUM + '+/=', 20, 80)),
  f('OpenAI', 'sk-', cls(URL64, 20, 250)),
  { ...f('OpenAI svcacct', 'sk-svcacct-', cls(URL64, 20, 250)), shorterStillToken: [1] }, // "svcacct-" and the body are a plain body
  // A longer signature is cut at 2,000 (below).
  {
    ...f('JWT', 'eyJ', cls(URL64, 8, 2000), '.eyJ', cls(URL64, 4, 8000), '.', cls(URL64, 0, 2000)),
    longerStillToken: [5],
  },
  f('Google', 'AIza', cls(URL64, 35, 35)),
  f('npm', 'npm_', cls(ALNUM, 36, 36)),
  f('Hugging Face', 'hf_', cls(ALNUM, 30, 40)),
  f('SendGrid', 'SG.', cls(URL64, 22, 22), '.', cls(URL64, 43, 43)),
  f('Grafana service account', 'glsa_', cls(ALNUM, 32, 32), '_', cls(HEX + 'ABCDEF', 8, 8)),
  f('DigitalOcean', 'dop_v1_', cls(HEX, 64, 64)),
  ...['at', 'ca', 'pa', 'ss'].map((p) => f(`Shopify shp${p}_`, `shp${p}_`, cls(HEX + 'ABCDEF', 32, 32))),
  f('age', 'AGE-SECRET-KEY-1', cls('QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L', 58, 58)),
  f('1Password service account', 'ops_eyJ', cls(ALNUM + '+/', 250, undefined), cls('=', 0, 3)),
  f(
    '1Password secret key (long)',
    'A3-',
    cls(UPHEX, 6, 6),
    '-',
    cls(UPHEX, 11, 11),
    '-',
    cls(UPHEX, 5, 5),
    '-',
    cls(UPHEX, 5, 5),
    '-',
    cls(UPHEX, 5, 5),
  ),
  f(
    '1Password secret key (split)',
    'A3-',
    cls(UPHEX, 6, 6),
    '-',
    cls(UPHEX, 6, 6),
    '-',
    cls(UPHEX, 5, 5),
    '-',
    cls(UPHEX, 5, 5),
    '-',
    cls(UPHEX, 5, 5),
    '-',
    cls(UPHEX, 5, 5),
  ),
  f('Amazon Bedrock', 'ABSK', cls(B64, 109, 269), cls('=', 0, 2)),
  f('Meta EAAM', 'EAAM', cls(ALNUM, 100, 400)),
  f('Meta EAAC', 'EAAC', cls(ALNUM, 100, 400)),
  f('Square access', 'EAAA', cls(URL64, 60, 60)),
  ...['csp', 'atp'].map((p) => f(`Square sq0${p}`, `sq0${p}-`, cls(URL64, 22, 43))),
  f('Fly.io', 'fo1_', cls(URL64, 43, 43)),
  ...['fm1_', 'fm2_', 'fm1a_', 'fm2r_'].map((p) =>
    f(`Fly.io macaroon ${p}`, p, cls(B64, 100, undefined), cls('=', 0, 3)),
  ),
  f('Grafana cloud', 'glc_', cls(B64, 32, 400), cls('=', 0, 2)),
  ...['hvs.', 'hvb.'].map((p) => f(`Vault ${p}`, p, cls(URL64, 90, 300))),
  f('Heroku', 'HRKU-AA', cls(URL64, 58, 58)),
  f('Hugging Face organisation', 'api_org_', cls(UPPER + LOWER, 34, 34)),
  ...['ud', 'af'].map((p) => f(`42 intra ${p}`, `s-s4t2${p}-`, cls(HEX, 64, 64))),
  f('Notion', 'ntn_', cls(DIGITS, 11, 11), cls(UPPER + LOWER, 1, 1), cls(ALNUM, 34, 34)),
  ...['sntrys_', 'sntryu_'].map((p) => f(`Sentry ${p}`, p, cls(ALNUM + '+/=_', 60, 400))),
  f('Sourcegraph', 'sgp_', cls(HEX, 40, 40)),
  f('Sourcegraph with an id', 'sgp_', cls(HEX, 16, 16), '_', cls(HEX, 40, 40)),
  f('Sourcegraph local', 'sgp_local_', cls(HEX, 40, 40)),
  f('PyPI', 'pypi-AgEIcHlwaS5vcmc', cls(URL64, 50, 300)),
  ...['pt', 'st', 'ct', 'sa', 'scim', 'audit'].map((p) => f(`Doppler dp.${p}`, `dp.${p}.`, cls(ALNUM, 40, 44))),
  f('Postman', 'PMAK-', cls(HEX, 24, 24), '-', cls(HEX, 34, 34)),
  f('Mailgun', 'key-', cls(HEX, 32, 32)),
  f('Linear', 'lin_api_', cls(ALNUM, 40, 40)),
  f('Databricks', 'dapi', cls(HEX, 32, 32)),
  f('Databricks with a suffix', 'dapi', cls(HEX, 32, 32), '-', cls(DIGITS, 1, 1)),
  f('Atlassian', 'ATATT3', cls(ALNUM + '_=-', 186, 186)),
  ...['M', 'N', 'O'].map((p) =>
    f(`Discord ${p}`, p, cls(URL64, 23, 25), '.', cls(URL64, 6, 6), '.', cls(URL64, 27, 38)),
  ),
  f('Dynatrace', 'dt0c01.', cls(UPHEX, 24, 24), '.', cls(UPHEX, 64, 64)),
  f('New Relic', 'NRAK-', cls(UPHEX, 27, 27)),
  ...['tkn', 'pw', 'oauth'].map((p) => f(`PlanetScale ${p}`, `pscale_${p}_`, cls(ALNUM + '_=.-', 32, 64))),
  f('Pulumi', 'pul-', cls(HEX, 40, 40)),
  f('RubyGems', 'rubygems_', cls(HEX, 48, 48)),
  f('Brevo', 'xkeysib-', cls(HEX, 64, 64), '-', cls(ALNUM, 16, 16)),
  f('Alibaba', 'LTAI', cls(ALNUM, 20, 20)),
  f('JFrog', 'AKCp', cls(ALNUM, 69, 69)),
  ...['duffel_test_', 'duffel_live_'].map((p) => f(`Duffel ${p}`, p, cls(ALNUM + '_=-', 43, 43))),
  ...['shippo_live_', 'shippo_test_'].map((p) => f(`Shippo ${p}`, p, cls(HEX, 40, 40))),
  f('Flutterwave', 'FLWSECK-', cls('abcdefgh' + DIGITS, 32, 32), '-X'),
  f('Flutterwave test', 'FLWSECK_TEST-', cls('abcdefgh' + DIGITS, 32, 32), '-X'),
  f('Scalingo', 'tk-us-', cls(URL64, 48, 48)),
  f('Prefect', 'pnu_', cls(ALNUM, 36, 36)),
  f('ReadMe', 'rdme_', cls(LOWER + DIGITS, 70, 70)),
  f('Cloudflare origin CA', 'v1.0-', cls(HEX, 24, 24), '-', cls(HEX, 146, 146)),
];

/** A token with each class part at the given length (default: its shortest), random bodies. */
function build(
  format: Format,
  lengths: Record<number, number> = {},
  fill?: (alphabet: string, length: number) => string,
  longer?: number,
): string {
  const random = generatorFor(`${format.name} ${JSON.stringify(lengths)} ${longer}`);
  return format.parts
    .map((p, i) => {
      if (typeof p === 'string') return p;
      if (i === longer)
        return random(p.alphabet, p.max as number) + ([...p.alphabet].find((c) => /[A-Za-z0-9_-]/.test(c)) as string);
      const n = lengths[i] ?? p.min;
      return (fill ?? random)(p.alphabet, n);
    })
    .join('');
}

const classParts = (format: Format): number[] => format.parts.flatMap((p, i) => (typeof p === 'string' ? [] : [i]));
const partOf = (format: Format, i: number) =>
  format.parts[i] as { alphabet: string; min: number; max: number | undefined };

describe('known token formats: found with their exact span at every allowed length', () => {
  for (const format of FORMATS) {
    it(format.name, () => {
      const tokens = [build(format)];
      for (const i of classParts(format)) {
        const { max } = partOf(format, i);
        if (max !== undefined) tokens.push(build(format, { [i]: max }));
      }
      for (const token of tokens) {
        expect(secrets(token), token).toEqual([token]);
        expect(secrets(`note ${token} end`), token).toEqual([token]);
        expect(secrets(`(${token}), "${token}"`), token).toEqual([token, token]);
      }
    });
  }
});

describe('known token formats: one character outside a length, a glued neighbour, a wrong first letter', () => {
  for (const format of FORMATS) {
    it(format.name, () => {
      for (const i of classParts(format)) {
        const { alphabet, min, max } = partOf(format, i);
        if (min > 0 && !(format.shorterStillToken ?? []).includes(i)) {
          const token = build(format, { [i]: min - 1 });
          expect(secrets(`note ${token} end`), `shorter ${token}`).toEqual([]);
        }
        // A body longer than the format allows runs into a token character after it.
        if (max !== undefined && /[A-Za-z0-9_-]/.test(alphabet) && !(format.longerStillToken ?? []).includes(i)) {
          const token = build(format, {}, undefined, i);
          expect(secrets(`note ${token} end`), `longer ${token}`).toEqual([]);
        }
      }
      const token = build(format);
      for (const glue of GLUE) {
        expect(secrets(`note ${glue}${token} end`), `${glue} before`).toEqual([]);
      }
      // After the token: at the longest length of its last part a character of any kind that
      // makes up tokens; at any length one that the last part cannot take.
      const last = classParts(format).at(-1) as number;
      const lastPart = partOf(format, last);
      const endsWithClass = last === format.parts.length - 1;
      for (const glue of GLUE) {
        if (endsWithClass && lastPart.max === undefined && lastPart.alphabet.includes(glue)) continue;
        if (endsWithClass && lastPart.alphabet.includes(glue)) {
          const longest = build(format, { [last]: lastPart.max as number });
          expect(secrets(`note ${longest}${glue} end`), `${glue} after the longest`).toEqual(
            format.name === 'JWT' ? [longest] : [], // a JWT's signature may run on (it ends the token)
          );
        } else if (!(endsWithClass && lastPart.alphabet === '=')) {
          expect(secrets(`note ${token}${glue} end`), `${glue} after`).toEqual(
            format.name === 'JWT' && URL64.includes(glue) ? [token + glue] : [],
          );
        }
      }
      const first = token[0] as string;
      const flipped = (first === first.toUpperCase() ? first.toLowerCase() : first.toUpperCase()) + token.slice(1);
      if (flipped !== token) expect(secrets(`note ${flipped} end`), 'wrong first letter').toEqual([]);
    });
  }
});

describe('known token formats: a placeholder body is not a token', () => {
  const repeat = (alphabet: string, n: number): string =>
    (alphabet[Math.min(1, alphabet.length - 1)] as string).repeat(n);
  const ascending = (alphabet: string, n: number): string => {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[i % alphabet.length];
    return s;
  };
  for (const format of FORMATS) {
    it(format.name, () => {
      const lengths: Record<number, number> = {};
      for (const i of classParts(format))
        lengths[i] = Math.max(partOf(format, i).min, Math.min(partOf(format, i).max ?? 120, 60));
      const filler = build(format, lengths, repeat);
      expect(secrets(`note ${filler} end`), filler).toEqual([]);
      if (format.name.startsWith('OpenAI')) {
        const run = build(format, lengths, ascending);
        expect(secrets(`note ${run} end`), run).toEqual([]);
      }
    });
  }
});

describe('known token formats: what is read as the body, what may follow', () => {
  it('a JWT signature longer than 2,000 characters is cut there (a JWT ends the token)', () => {
    const head = `eyJ${random(URL64, 20)}.eyJ${random(URL64, 20)}.`;
    const sig = random(URL64, 2001);
    expect(secrets(`jwt ${head}${sig} end`)).toEqual([head + sig.slice(0, 2000)]);
    expect(secrets(`jwt ${head} end`)).toEqual([head]);
  });

  it('a Slack token is checked for filler in its tail, after its numeric ids', () => {
    const tail = random(ALNUM, 24);
    expect(secrets(`slack xoxb-11111111-11111111-${tail}`)).toEqual([`xoxb-11111111-11111111-${tail}`]);
    expect(secrets(`slack xoxb-${random(DIGITS, 10)}-${random(DIGITS, 12)}-${'x'.repeat(24)}`)).toEqual([]);
    expect(secrets(`slack xoxb-${random(DIGITS, 10)}-${random(DIGITS, 12)}-a${'x'.repeat(24)}`)).toEqual([]);
    // Five 'x' of nine: filler, read from after the last dash (with that dash and the digit before it, five of eleven would not be).
    expect(secrets(`slack xoxb-12345678-87654321-xaxbxcxdx`)).toEqual([]);
    const rest = random(ALNUM, 12);
    expect(secrets(`slack xoxp-${random(DIGITS, 10)}-${random(DIGITS, 12)}-${rest}-${'Q'.repeat(20)}`)).toEqual([]);
  });

  it('other formats are checked for filler after their first four characters', () => {
    const body = random(ALNUM, 36);
    // The prefix is not counted: "ghp_" repeats no character of the body.
    expect(secrets(`gh ghp_${body}`)).toEqual([`ghp_${body}`]);
    expect(secrets(`gh ghp_${'h'.repeat(19)}${random(ALNUM, 17)}`)).toEqual([]);
    // "dapi" + 32 hex: sixteen '0's (half the body, one run) are not filler yet, seventeen are.
    const half = `dapi${'0'.repeat(16)}13579bdf2468ace5`;
    expect(secrets(`db ${half}`)).toEqual([half]);
    expect(secrets(`db dapi${'0'.repeat(17)}13579bdf2468ace`)).toEqual([]);
  });

  it('only the loose OpenAI form is checked for runs of the alphabet; prefixed formats and Anthropic keys are not', () => {
    const ascending = 'abcdefghijklmnopqrstuvwxyz0123456789';
    expect(secrets(`gh ghp_${ascending}`)).toEqual([`ghp_${ascending}`]);
    expect(secrets(`sk sk-${ascending}`)).toEqual([]);
    expect(secrets(`sk sk-proj-${ascending}`)).toEqual([]);
    const anthropic = `sk-ant-api03-${(URL64 + URL64).slice(0, 90)}AA`; // every edge of its class, mostly ascending
    expect(secrets(`key ${anthropic}`)).toEqual([anthropic]);
    const admin = `sk-ant-admin01-${(ascending + ascending + ascending).slice(0, 80)}AA`;
    expect(secrets(`key ${admin}`)).toEqual([admin]);
    // Without the closing "AA" it is a loose OpenAI key, and its run of the alphabet is filler.
    expect(secrets(`key sk-ant-api03-${(ascending + ascending + ascending).slice(0, 90)}`)).toEqual([]);
    // Longer than an Anthropic key may be: the loose form again.
    expect(secrets(`key sk-ant-api03-${(ascending + ascending + ascending + ascending).slice(0, 130)}AA`)).toEqual([]);
    // An OAuth token has no "AA" check: its run of the alphabet is filler too.
    expect(secrets(`key sk-ant-oat01-${(ascending + ascending + ascending).slice(0, 90)}`)).toEqual([]);
  });

  it('the shortest token (a Slack xoxa- token of 15 characters) is read at the start, the end and alone', () => {
    const token = `xoxa-${random(ALNUM, 10)}`;
    expect(token).toHaveLength(15);
    expect(secrets(token)).toEqual([token]);
    expect(secrets(`${token} x`)).toEqual([token]);
    expect(secrets(`x ${token}`)).toEqual([token]);
    expect(secrets(`é${token}é`)).toEqual([token]);
  });

  it('tokens end at characters outside tokens, and several in one text are all found', () => {
    const a = `ghp_${random(ALNUM, 36)}`;
    const b = `glpat-${random(URL64, 20)}`;
    for (const sep of [
      ' ',
      '\n',
      '\t',
      ',',
      ';',
      '"',
      "'",
      '(',
      ')',
      '[',
      ']',
      '<',
      '>',
      '{',
      '}',
      '!',
      '?',
      '*',
      '&',
      '#',
      '%',
      '@',
      '\\',
      '^',
      '`',
      '$',
      'é',
    ]) {
      expect(secrets(`${a}${sep}${b}`), JSON.stringify(sep)).toEqual([a, b]);
    }
    // Characters that continue a run of token characters but not a token: the token still ends there.
    for (const sep of ['.', '+', '/', '=', '~', '|', ':']) expect(secrets(`${a}${sep}${b}`), sep).toEqual([a, b]);
  });

  it('Fly.io macaroons joined by commas are one secret', () => {
    const m1 = `fm2_${random(B64, 120)}`;
    const m2 = `fm2_${random(B64, 110)}`;
    const m3 = `fm1r_${random(B64, 100)}`;
    expect(secrets(`FlyV1 ${m1},${m2}`)).toEqual([`${m1},${m2}`]);
    expect(secrets(`FlyV1 ${m1},${m2},${m3} end`)).toEqual([`${m1},${m2},${m3}`]);
    expect(secrets(`FlyV1 ${m1}, ${m2}`)).toEqual([m1, m2]);
    expect(secrets(`FlyV1 ${m1};${m2}`)).toEqual([m1, m2]);
    const gh = `ghp_${random(ALNUM, 36)}`;
    expect(secrets(`${m1},${gh}`)).toEqual([m1, gh]);
    expect(secrets(`${gh},${m1}`)).toEqual([gh, m1]);
    const fo = `fo1_${random(URL64, 43)}`;
    expect(secrets(`${fo},${m1}`)).toEqual([fo, m1]);
    expect(secrets(`${m1},${fo}`)).toEqual([m1, fo]);
    // The joined macaroons are one candidate, not one and its parts.
    const out: Candidate[] = [];
    detectSecrets(`${m1},${m2},${m3}`, { phoneRegions: [], allIps: false }, out);
    expect(out).toEqual([{ type: 'SECRET', start: 0, end: m1.length + m2.length + m3.length + 2, priority: 100 }]);
  });
});

// ---------------------------------------------------------------------------------------------
// Formats found by their middle

interface MiddleFormat {
  name: string;
  before: { alphabet: string; min: number; max: number };
  middle: string;
  body: { alphabet: string; min: number; max: number };
  after?: string;
}

const MIDDLE: MiddleFormat[] = [
  {
    name: 'Azure AD client secret',
    before: { alphabet: ALNUM, min: 3, max: 3 },
    middle: '7Q~',
    body: { alphabet: ALNUM + '_~.-', min: 31, max: 34 },
  },
  {
    name: 'Mailchimp',
    before: { alphabet: HEX, min: 32, max: 32 },
    middle: '-us',
    body: { alphabet: DIGITS, min: 1, max: 2 },
  },
  {
    name: 'Telegram bot',
    before: { alphabet: DIGITS, min: 8, max: 10 },
    middle: ':AA',
    body: { alphabet: URL64, min: 33, max: 33 },
  },
  {
    name: 'Terraform Cloud',
    before: { alphabet: LOWER + DIGITS, min: 14, max: 14 },
    middle: '.atlasv1.',
    body: { alphabet: LOWER + DIGITS + '_=-', min: 60, max: 70 },
  },
  {
    name: 'Facebook app',
    before: { alphabet: DIGITS, min: 15, max: 16 },
    middle: '|',
    body: { alphabet: URL64, min: 27, max: 27 },
  },
];

const middleToken = (m: MiddleFormat, before: number, body: number): string =>
  random(m.before.alphabet, before) + m.middle + random(m.body.alphabet, body);

describe('formats found by their middle', () => {
  for (const m of MIDDLE) {
    it(`${m.name}: found at every allowed length, with its exact span`, () => {
      for (const before of [m.before.min, m.before.max]) {
        for (const body of [m.body.min, m.body.max]) {
          const token = middleToken(m, before, body);
          expect(secrets(token), token).toEqual([token]);
          expect(secrets(`id ${token} end`), token).toEqual([token]);
          expect(secrets(`two: ${token}\n${token},`), token).toEqual([token, token]);
        }
      }
    });

    it(`${m.name}: not one character shorter or longer on either side, nor glued`, () => {
      const shortBefore = middleToken(m, m.before.min - 1, m.body.min);
      expect(secrets(`id ${shortBefore} end`), shortBefore).toEqual([]);
      const longBefore = middleToken(m, m.before.max + 1, m.body.min);
      expect(secrets(`id ${longBefore} end`), longBefore).toEqual([]);
      const shortBody = middleToken(m, m.before.min, m.body.min - 1);
      if (m.body.min > 1) expect(secrets(`id ${shortBody} end`), shortBody).toEqual([]);
      const longBody = middleToken(m, m.before.min, m.body.max) + (m.body.alphabet.includes('a') ? 'a' : '7');
      expect(secrets(`id ${longBody} end`), longBody).toEqual([]);
      const token = middleToken(m, m.before.max, m.body.max);
      for (const glue of GLUE) {
        expect(secrets(`id ${glue}${token} end`), `${glue} before`).toEqual([]);
        expect(secrets(`id ${token}${glue} end`), `${glue} after`).toEqual([]);
      }
    });

    it(`${m.name}: a filler token is a placeholder`, () => {
      const filler = m.before.alphabet[1]!.repeat(m.before.max) + m.middle + m.body.alphabet[1]!.repeat(m.body.max);
      expect(secrets(`id ${filler} end`)).toEqual([]);
    });
  }

  it('formats found by their middle are checked for filler, not for runs of the alphabet', () => {
    const ascending = `${HEX}${HEX}-us12`;
    expect(secrets(`id ${ascending} end`)).toEqual([ascending]);
  });

  it('the characters before the middle must be of their class', () => {
    expect(secrets(`id abc${'x'}Q~${random(URL64, 32)} end`)).toEqual([]); // a letter where the digit goes
    expect(secrets(`id ab-7Q~${random(ALNUM, 32)} end`)).toEqual([]);
    const tilde = `~.a7Q~${random(ALNUM, 32)}`;
    expect(secrets(`id ${tilde} end`)).toEqual([tilde]);
    expect(secrets(`id ${random(HEX, 31)}G-us1 end`)).toEqual([]);
    expect(secrets(`id ${random(HEX, 31).toUpperCase()}A-us1 end`)).toEqual([]);
    expect(secrets(`id 1234567a:AA${random(URL64, 33)} end`)).toEqual([]);
    expect(secrets(`id ${random(LOWER, 13)}A.atlasv1.${random(LOWER, 60)} end`)).toEqual([]);
    expect(secrets(`id 12345678901234a|${random(URL64, 27)} end`)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// PEM private key blocks

const pemLine = (n = 64): string => random(B64, n);

describe('PEM private key blocks', () => {
  const body = `${pemLine()}\n${pemLine()}\n${pemLine(20)}==`;

  it.each([
    'RSA PRIVATE KEY',
    'EC PRIVATE KEY',
    'OPENSSH PRIVATE KEY',
    'PGP PRIVATE KEY BLOCK',
    'PRIVATE KEY',
    'ENCRYPTED PRIVATE KEY',
    'DSA PRIVATE KEY',
  ])('%s: from the header to the end of the footer', (kind) => {
    const block = `-----BEGIN ${kind}-----\n${body}\n-----END ${kind}-----`;
    expect(secrets(`key:\n${block}\nafter`)).toEqual([block]);
    expect(secrets(block)).toEqual([block]);
    expect(secrets(`${block}${block}`)).toEqual([block, block]); // back to back
    expect(secrets(`${block}\n\n${block}`)).toEqual([block, block]);
  });

  it.each(['PUBLIC KEY', 'CERTIFICATE', 'RSA PUBLIC KEY', 'CERTIFICATE REQUEST', 'PRIVATE  KEY', 'private key'])(
    'a %s block is not a secret',
    (kind) => {
      expect(secrets(`-----BEGIN ${kind}-----\n${body}\n-----END ${kind}-----`)).toEqual([]);
    },
  );

  it('the header must close within 80 characters', () => {
    const long = `-----BEGIN ${'X'.repeat(57)} PRIVATE KEY-----\n${body}\n-----END PRIVATE KEY-----`;
    expect(long.indexOf('-----', 5)).toBe(80);
    expect(secrets(long)).toEqual([]);
    const longest = `-----BEGIN ${'X'.repeat(56)} PRIVATE KEY-----\n${body}\n-----END PRIVATE KEY-----`;
    expect(secrets(longest)).toEqual([longest]);
    expect(secrets(`-----BEGIN RSA PRIVATE KEY\n${body}\n-----END RSA PRIVATE KEY-----`)).toEqual([]);
  });

  it('a footer without its closing dashes ends after "-----END "; a closing far away is not its end', () => {
    const open = `-----BEGIN RSA PRIVATE KEY-----\n${body}\n-----END `;
    expect(secrets(`${open}RSA PRIVATE KEY`)).toEqual([open]);
    const far = `${open}${'R'.repeat(71)}-----`;
    expect(secrets(far)).toEqual([open]);
    const near = `${open}${'R'.repeat(70)}-----`;
    expect(secrets(near)).toEqual([near]);
  });

  it('blocks pasted one after another are each found, also when they share dashes', () => {
    const block = (kind: string) => `-----BEGIN ${kind} PRIVATE KEY-----\n${body}\n-----END ${kind} PRIVATE KEY-----`;
    const [a, b] = [block('RSA'), block('EC')];
    expect(secrets(a + b)).toEqual([a, b]);
    expect(secrets(`${a}\n${b}`)).toEqual([a, b]);
    // "…KEY-----BEGIN …": the closing dashes of one are the opening dashes of the next.
    const shared = a.slice(0, -5);
    expect(secrets(shared + b)).toEqual([shared, b]);
    const redacted = redact(shared + b).text;
    expect(redacted).not.toContain(body.slice(0, 20));
    // Six dashes: the next header starts one character into the closing dashes.
    expect(secrets(`${a.slice(0, -4)}${b}`)).toEqual([a.slice(0, -4), b]);
  });

  it('a body needs 16 base64 characters (letters, digits, + and /) before the footer', () => {
    const block = (inner: string) => `-----BEGIN PRIVATE KEY-----\n${inner}\n-----END PRIVATE KEY-----`;
    expect(secrets(block('Ab3+/cD4eF5gH6iJ'))).toEqual([block('Ab3+/cD4eF5gH6iJ')]);
    expect(secrets(block('Ab3+/cD4eF5gH6i'))).toEqual([]);
    expect(secrets(block('Ab3+/cD4 eF5gH6i ==== ----'))).toEqual([]);
    expect(secrets(block('...anything...'))).toEqual([]);
    expect(secrets(block(''))).toEqual([]);
    // The footer's own letters are not counted as body.
    expect(secrets(`-----BEGIN PRIVATE KEY-----\nAb3\n-----END PRIVATE KEY WITH A LONG NAME-----`)).toEqual([]);
  });

  it('a block cut off before its footer runs to the end of its last base64 line', () => {
    const head = '-----BEGIN RSA PRIVATE KEY-----';
    const lines = [pemLine(), pemLine(), pemLine(17)];
    const key = `${head}\n${lines.join('\n')}`;
    expect(secrets(`pasted: ${key}\nand then some prose.`)).toEqual([key]);
    expect(secrets(`pasted: ${key}`)).toEqual([key]);
    expect(secrets(`pasted: ${key}\n\n${pemLine()}`)).toEqual([key]); // an empty line ends it
    expect(secrets(`pasted: ${key}\n   \n${pemLine()}`)).toEqual([key]);
    const crlf = `${head}\r\n${lines.join('\r\n')}\r`;
    expect(secrets(`pasted: ${crlf}\nnext line`)).toEqual([crlf]);
    const onlyHeader = `${head}\n${pemLine(10)}`;
    expect(secrets(onlyHeader)).toEqual([]); // ten characters of base64 are no key
    const encrypted = `${head}\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,${random(HEX, 32).toUpperCase()}\n\n${pemLine()}`;
    expect(secrets(encrypted)).toEqual([
      `${head}\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,${encrypted.split('CBC,')[1]!.split('\n')[0]}`,
    ]);
    const encryptedNoBlank = `${head}\nProc-Type: 4,ENCRYPTED\n${pemLine()}`;
    expect(secrets(encryptedNoBlank)).toEqual([encryptedNoBlank]);
    expect(secrets(`${head}\nnot-base64 line\n${pemLine()}`)).toEqual([]);
    expect(secrets(`${head}\n${pemLine()}-\n${pemLine()}`)).toEqual([]);
  });

  it('a base64 line of 128 characters is key material, one of 129 is not', () => {
    const head = '-----BEGIN EC PRIVATE KEY-----';
    const l128 = pemLine(128);
    const l129 = pemLine(129);
    const withLong = `${head}\n${l128}`;
    expect(secrets(`${withLong}\nsome prose`)).toEqual([withLong]);
    const first = pemLine();
    expect(secrets(`${head}\n${first}\n${l129}\n${pemLine()}`)).toEqual([`${head}\n${first}`]);
  });

  it('a block without a footer stops at the next header; a footer after the next header is not its own', () => {
    const a = `-----BEGIN RSA PRIVATE KEY-----\n${pemLine()}`;
    const b = `-----BEGIN EC PRIVATE KEY-----\n${pemLine()}\n-----END EC PRIVATE KEY-----`;
    expect(secrets(`${a}\n${b}`)).toEqual([a, b]);
    const c = `-----BEGIN CERTIFICATE-----\n${pemLine()}\n-----END CERTIFICATE-----`;
    expect(secrets(`${c}\n${b}`)).toEqual([b]);
    expect(secrets(`${b}\n${c}\n${a}`)).toEqual([b, a]);
    // Many headers and one footer at the end: each header before it is cut off at its own body.
    const many = Array.from({ length: 5 }, () => `-----BEGIN PRIVATE KEY-----\n${pemLine()}`);
    expect(secrets(`${many.join('\n')}\n-----END PRIVATE KEY-----`)).toEqual([
      ...many.slice(0, 4),
      `${many[4]}\n-----END PRIVATE KEY-----`,
    ]);
  });

  it('a footer up to 64 KiB from the header closes the block; farther, the block is cut at 64 KiB', () => {
    const head = '-----BEGIN PRIVATE KEY-----\n';
    const lineCount = Math.floor((65536 - head.length) / 65);
    let inner = Array.from({ length: lineCount }, () => pemLine()).join('\n');
    // Pad so that the footer starts exactly 65,536 characters after the header's first dash.
    inner += '\n' + pemLine(65536 - head.length - inner.length - 2);
    const atLimit = `${head}${inner}\n-----END PRIVATE KEY-----`;
    expect(atLimit.indexOf('-----END')).toBe(65536);
    expect(secrets(atLimit)).toEqual([atLimit]);
    expect(secrets(`key:\n${atLimit}`)).toEqual([atLimit]);
    const beyond = `${head}${inner}AB\n-----END PRIVATE KEY-----`;
    expect(beyond.indexOf('-----END')).toBe(65538);
    expect(secrets(beyond)).toEqual([beyond.slice(0, 65536)]); // cut in the middle of a line
    expect(secrets(`key:\n${beyond}`)).toEqual([beyond.slice(0, 65536)]);
  });
});

// ---------------------------------------------------------------------------------------------
// URL passwords, Bundler credentials, authorization headers

describe('passwords in URLs', () => {
  it.each([
    ['https://bot:Tr0ub4dor&3@git.example.com/x.git', 'Tr0ub4dor&3'],
    ['postgres://app:p@ss#w?rd@db:5432/app', 'p@ss#w?rd'],
    // The password-only form is a password too (was: null, not reported).
    ['redis://:only-a-password@cache', 'only-a-password'],
    ['amqp://u:a:b:c@mq', 'a:b:c'],
    ['see ftp://anna:hunter22@files.example.org and ssh://bob:S3cure!@host', 'hunter22|S3cure!'],
    ['mongodb+srv://user:pw@cluster/db', 'pw'],
  ])('%s', (text, expected) => {
    expect(secrets(text)).toEqual(expected === null ? [] : expected.split('|'));
  });

  it('a user and a password of any length, the password to the last @ before the host', () => {
    const pw = random(ALNUM, 256);
    for (const userLength of [1, 128, 129, 1000, 20_000])
      expect(secrets(`https://${'u'.repeat(userLength)}:${pw}@host`)).toEqual([pw]);
    expect(secrets(`https://:${pw}@host`)).toEqual([pw]); // no user, as Redis URLs give it (was [])
    // A "://" right after a user-like run is the next URL, whose password is still found.
    expect(secrets(`see a://b://user:${pw}@host`)).toEqual([pw]);
    expect(secrets(`proxy=http://proxy://bot:${pw}@git.example.com`)).toEqual([pw]);
    // Past 256 characters the password is still read whole: no tail of it is left in the text.
    for (const length of [257, 1000, 5000]) {
      const long = random(ALNUM + '+=_~!$&*', length);
      expect(secrets(`clone https://user:${long}@git.example.com/x.git now`)).toEqual([long]);
    }
    expect(secrets(`https://user:p@host`)).toEqual(['p']);
    expect(secrets(`https://user:a@b@c@host/x@y`)).toEqual(['a@b@c']);
    // The run ends at whitespace, '/' and Unicode spaces: an '@' after them is not this URL's.
    expect(secrets(`https://user:${pw} mail@host`)).toEqual([]);
    expect(secrets(`https://host:8080/path@x`)).toEqual([]);
    expect(secrets(`https://user:${pw}\u2028@host`)).toEqual([]);
    expect(secrets(`https://user:@host`)).toEqual([]);
    // What the run may hold is the former pattern's [^\s/]: control characters too, raw as a detector may be given them.
    const raw = (text: string) => {
      const out: Candidate[] = [];
      detectSecrets(text, { phoneRegions: [], allIps: false }, out);
      return out.map((c) => text.slice(c.start, c.end));
    };
    expect(raw('https://u:pa\u0001ss\u001f@host')).toEqual(['pa\u0001ss\u001f']);
    for (const c of ['\t', '\n', '\u000b', '\u000c', '\r', ' '])
      expect(raw(`https://u:pa${c}ss@host`), JSON.stringify(c)).toEqual([]);
  });

  it('every URL in a long run of them is read once (linear)', () => {
    const pw = random(ALNUM, 20);
    const text = `https://u:${pw}@h `.repeat(2000) + 'https://u:x'.repeat(20_000);
    expect(secrets(text)).toEqual(Array(2000).fill(pw));
  });

  it.each([
    '${DB_PASSWORD}',
    '{{password}}',
    '<password>',
    '%s',
    '[pw]',
    '****',
    'xxx',
    '...',
    'REDACTED',
    'your-password',
    'http://x',
  ])('a placeholder password %s is left', (pw) => {
    expect(secrets(`https://user:${pw}@host/db`)).toEqual([]);
  });

  it('no password without a user part and a scheme', () => {
    expect(secrets('user:Tr0ub4dor&3@host')).toEqual([]);
    expect(secrets('https://user@host:Tr0ub4dor3@x')).toEqual([]);
    expect(secrets('https://us er:Tr0ub4dor3@x')).toEqual([]);
  });
});

describe('Bundler credentials', () => {
  it.each([
    ['BUNDLE_GEMS__CONTRIBSYS__COM=user:s3cr3tPass', 'user:s3cr3tPass'],
    ['export BUNDLE_RUBYGEMS__PKG__GITHUB__COM="octocat:ghp_token123"', 'octocat:ghp_token123'],
    ["BUNDLE_GEMS__EXAMPLE__COM: 'deploy:abc123'", 'deploy:abc123'],
    ['BUNDLE_ENTERPRISE__CONTRIBSYS__COM = u:p4ss', 'u:p4ss'],
    ['"BUNDLE_GEMS__CONTRIBSYS__COM": "u:p4ss"', 'u:p4ss'],
    ['BUNDLE_GEMS__CONTRIBSYS__COM:\tu:p4ss;', 'u:p4ss'],
  ])('%s', (text, value) => {
    expect(secrets(text)).toEqual([value]);
  });

  it('the key names a host; its last label has up to 20 characters', () => {
    expect(secrets(`BUNDLE_GEMS__${'C'.repeat(20)}=u:p4ss`)).toEqual(['u:p4ss']);
    expect(secrets(`BUNDLE_GEMS__${'C'.repeat(21)}=u:p4ss`)).toEqual([]);
    expect(secrets('BUNDLE_PATH=vendor:bundle')).toEqual([]);
    expect(secrets('BUNDLE_GEMS__COMx=u:p4ss')).toEqual([]);
    expect(secrets('BUNDLE_GEMS__COM_=u:p4ss')).toEqual([]);
    expect(secrets('XBUNDLE_GEMS__COM=u:p4ss')).toEqual([]);
    expect(secrets('bundle_gems__com=u:p4ss')).toEqual([]);
    expect(secrets('BUNDLE___COM=u:p4ss')).toEqual([]);
    expect(secrets('BUNDLE_A__COM=u:p4ss')).toEqual(['u:p4ss']);
  });

  it('the value is user:password, quoted with the same quote or not at all, bounded', () => {
    expect(secrets('BUNDLE_GEMS__COM="u:p4ss\'')).toEqual([]);
    expect(secrets('BUNDLE_GEMS__COM=p4ssword')).toEqual([]);
    expect(secrets('BUNDLE_GEMS__COM=:p4ss')).toEqual([]);
    expect(secrets('BUNDLE_GEMS__COM=u:')).toEqual([]);
    expect(secrets(`BUNDLE_GEMS__COM=${'u'.repeat(64)}:p4ss`)).toEqual([`${'u'.repeat(64)}:p4ss`]);
    expect(secrets(`BUNDLE_GEMS__COM=${'u'.repeat(65)}:p4ss`)).toEqual([]);
    const pw = random(ALNUM, 128);
    expect(secrets(`BUNDLE_GEMS__COM=u:${pw}`)).toEqual([`u:${pw}`]);
    expect(secrets('BUNDLE_GEMS__COM    =u:p4ss')).toEqual(['u:p4ss']);
  });

  it.each(['${TOKEN}', 'xxx', '****', 'REDACTED', '<token>'])('a placeholder password %s is left', (pw) => {
    expect(secrets(`BUNDLE_GEMS__CONTRIBSYS__COM=user:${pw}`)).toEqual([]);
  });
});

describe('authorization headers and schemes', () => {
  const token = random(ALNUM, 32);

  it.each(['Bearer', 'Token', 'Basic'])('%s and a random value of 16 or more characters', (scheme) => {
    expect(secrets(`curl -H "${scheme} ${token}"`)).toEqual([token]);
    expect(secrets(`${scheme}\t${token}`)).toEqual([token]);
    expect(secrets(`${scheme}${' '.repeat(8)}${token}`)).toEqual([token]);
    expect(secrets(`${scheme}${' '.repeat(9)}${token}`)).toEqual([]);
    // ("xToken <value>" is a key name and its value: the assignments below.)
    if (scheme !== 'Token') expect(secrets(`x${scheme} ${token}`)).toEqual([]);
    expect(secrets(`${scheme}${token}`)).toEqual([]);
    const short = 'aB3dE5gH7jK9mN1'; // 15
    expect(secrets(`${scheme} ${short}`)).toEqual([]);
    expect(secrets(`${scheme} ${short}P`)).toEqual([`${short}P`]);
    expect(secrets(`${scheme} ${'ab'.repeat(10)}`)).toEqual([]);
    expect(secrets(`${scheme} ${token}==`)).toEqual([`${token}==`]);
    expect(secrets(`${scheme} a.b~c+d/e-f_${token}`)).toEqual([`a.b~c+d/e-f_${token}`]);
  });

  it.each([
    'Authorization',
    'Proxy-Authorization',
    'X-Api-Key',
    'Api-Key',
    'X-Auth-Token',
    'Api-Token',
    'X-Access-Token',
    'authorization',
    'X-API-KEY',
  ])('%s: a random value, a UUID, a Basic credential', (header) => {
    const value = 'aB3dE5gH7j'; // 10 characters, random enough
    expect(secrets(`${header}: ${value}`)).toEqual([value]);
    expect(secrets(`${header}:${value}`)).toEqual([value]);
    expect(secrets(`${header}  :  ${value}`)).toEqual([value]);
    expect(secrets(`${header}: aB3dE5gH7`)).toEqual([]);
    const uuid = '5eb4223e-09b0-4b52-8c3a-7f1e2d9c6a41';
    expect(secrets(`${header}: ${uuid}`)).toEqual([uuid]);
    expect(secrets(`${header}: 00000000-0000-0000-0000-000000000000`)).toEqual([]);
    expect(secrets(`${header}: Basic YnJvd3Nlcjo=`)).toEqual(['YnJvd3Nlcjo=']);
    expect(secrets(`${header}: basic YnJvd3Nl`)).toEqual(['YnJvd3Nl']);
    expect(secrets(`${header}: Basic YnJvd3N`)).toEqual([]);
    expect(secrets(`${header}: Basic YnJvd3Nlcjo===`)).toEqual([]);
    expect(secrets(`${header}: Basic YnJv-d3Nlcjo`)).toEqual([]);
    expect(secrets(`${header}: Basic xxxxxxxxxxxx`)).toEqual([]);
    expect(secrets(`${header}: Bearer ${value}`)).toEqual([value]);
    expect(secrets(`${header}: Token ${value}`)).toEqual([value]);
    expect(secrets(`${header}: application/json`)).toEqual([]);
    expect(secrets(`${header}x: ${value}`)).toEqual([]);
  });

  it('a header value is read up to the characters a token may hold', () => {
    expect(secrets('Authorization: aB3dE5gH7j!rest of it')).toEqual(['aB3dE5gH7j']);
    expect(secrets('X-Auth-Token: aB3dE5gH7jkL9mN1pQ!rest')).toEqual(['aB3dE5gH7jkL9mN1pQ']);
  });
});

// ---------------------------------------------------------------------------------------------
// AWS secret access keys near a key id

describe('AWS secrets within 160 characters after a key id', () => {
  const keyId = `AKIA${random(UPHEX, 16)}`;
  const secret = random(B64, 40);

  it('found after AKIA and ASIA key ids, in CSV exports and unlabeled files', () => {
    expect(secrets(`${keyId},${secret}`)).toEqual([keyId, secret]);
    expect(secrets(`${keyId}\n${secret}\n`)).toEqual([keyId, secret]);
    const asia = `ASIA${random(UPHEX, 16)}`;
    expect(secrets(`${asia} ${secret}`)).toEqual([asia, secret]);
    // Other key id prefixes name no secret access key.
    const aida = `AIDA${random(UPHEX, 16)}`;
    expect(secrets(`${aida} ${secret}`)).toEqual([aida]);
  });

  it('the secret may start up to 160 characters after the key id, not 161', () => {
    for (const gap of [1, 100, 159, 160])
      expect(secrets(`${keyId}${' '.repeat(gap)}${secret}`), String(gap)).toEqual([keyId, secret]);
    expect(secrets(`${keyId}${' '.repeat(161)}${secret}`)).toEqual([keyId]);
    // At the far end of the window its right neighbour is still read.
    expect(secrets(`${keyId}${' '.repeat(160)}${secret}A`)).toEqual([keyId]);
    expect(secrets(`${keyId}${' '.repeat(160)}${secret}=`)).toEqual([keyId]);
    expect(secrets(`${keyId}${' '.repeat(160)}${secret}.`)).toEqual([keyId, secret]);
  });

  it('only the first 40-character run after a key id, and exactly 40', () => {
    const other = random(B64, 40);
    expect(secrets(`${keyId} ${secret} ${other}`)).toEqual([keyId, secret]);
    expect(secrets(`${keyId} ${secret.slice(1)}`)).toEqual([keyId]);
    expect(secrets(`${keyId} ${secret}x`)).toEqual([keyId]);
    expect(secrets(`${keyId} x${secret}`)).toEqual([keyId]);
    expect(secrets(`${keyId} +${secret}`)).toEqual([keyId]);
    expect(secrets(`${keyId} ${secret}/`)).toEqual([keyId]);
    expect(secrets(`${keyId} -${secret}-`)).toEqual([keyId, secret]);
    // A first run that is not random is not the secret; the one after it is not looked at.
    expect(secrets(`${keyId} ${'a'.repeat(40)} ${secret}`)).toEqual([keyId]);
    expect(secrets(`${keyId} ${random(UPPER + LOWER, 40)}`)).toEqual([keyId]);
  });

  it('a secret before the key id is not read', () => {
    expect(secrets(`${secret} ${keyId}`)).toEqual([keyId]);
  });

  it('each key id reads its own window', () => {
    const second = `AKIA${random(UPHEX, 16)}`;
    const secret2 = random(B64, 40);
    const text = `${keyId} ${secret}\n${'.'.repeat(300)}\n${second} ${secret2}`;
    expect(secrets(text)).toEqual([keyId, secret, second, secret2]);
    // A second key id far behind: its window starts at its own end.
    expect(secrets(`${secret2}${' '.repeat(200)}${keyId}${' '.repeat(200)}${second} ${secret}`)).toEqual([
      keyId,
      second,
      secret,
    ]);
  });

  it('after a key id already stored as [REDACTED:SECRET], the secret a later edit adds is still found', () => {
    expect(secrets(`aws_access_key_id = [REDACTED:SECRET]\n${secret}`)).toEqual([secret]);
    expect(secrets(`[REDACTED:SECRET]${secret}`)).toEqual([secret]);
    expect(secrets(`[REDACTED:SECRET]${' '.repeat(160)}${secret}`)).toEqual([secret]);
    expect(secrets(`[REDACTED:SECRET]${' '.repeat(161)}${secret}`)).toEqual([]);
    expect(secrets(`[REDACTED:SECRET] [REDACTED:SECRET]${' '.repeat(150)}${secret}`)).toEqual([secret]);
    expect(secrets(`${secret} [REDACTED:SECRET]`)).toEqual([]);
    expect(secrets(`[REDACTED:EMAIL] ${secret}`)).toEqual([]);
    // Windows of several key ids, sorted: a placeholder before a key id and a key id before a placeholder.
    const later = random(B64, 40);
    expect(secrets(`${keyId} ${secret} [REDACTED:SECRET] ${later}`)).toEqual([keyId, secret, later]);
    expect(secrets(`[REDACTED:SECRET] ${secret} ${keyId} ${later}`)).toEqual([secret, keyId, later]);
  });

  it('a secret read after a key id wins over a longer value read from its key name', () => {
    expect(secrets(`${keyId}\nsecret = ${secret}!x`)).toEqual([keyId, secret]);
  });

  it('as an assignment, the secret wins over nothing: one finding with its exact span', () => {
    const text = `aws_access_key_id=${keyId}\naws_secret_access_key=${secret}`;
    expect(secrets(text)).toEqual([keyId, secret]);
  });
});

// ---------------------------------------------------------------------------------------------
// key = value assignments

describe('assignments: keywords', () => {
  const key = 'aB3dE5gH7jK9mN1pQ2'; // random, 18 characters, digits and both cases
  it.each([
    'password',
    'Passwd',
    'PWD',
    'passwd',
    'passphrase',
    'pass',
    'Kennwort',
    'Passwort',
    'mot de passe',
    'contraseña',
    'contrasena',
    'secret',
    'client_secret',
    'token',
    'api_key',
    'api key',
    'api-key',
    'apikey',
    'ApiKey',
    'access_key',
    'access key',
    'private_key',
    'signing-key',
    'auth_key',
    'encryption key',
    'master_key',
    'license-key',
    'credential',
    'credentials',
    'clave',
    'Schlüssel',
    'schlussel',
    'clé',
    'cle',
    'account_key',
    'shared access key',
    'SharedAccessKey',
    'subscription-key',
    'consumer_key',
    'client key',
    'app_key',
    'session-key',
    'storage_key',
    'STRIPE_KEY',
    'stripe-key',
    'stripekey',
    'db2_key',
  ])('%s = <random>', (word) => {
    expect(secrets(`${word} = ${key}`)).toEqual([key]);
    expect(secrets(`${word}: ${key}\n`)).toEqual([key]);
  });

  it.each(['pas', 'passing', 'compass', 'bypass', 'keyring', 'keys', 'cl', 'clear', 'sumoX', 'sourcegraphx'])(
    '%s names no credential',
    (word) => {
      expect(secrets(`${word} = ${key}`)).toEqual([]);
    },
  );

  it('Sumo Logic and Sourcegraph: the service name alone, then a key word later in the name', () => {
    expect(secrets(`SUMO_ACCESS_ID = su${key}`)).toEqual([`su${key}`]);
    expect(secrets(`sumologic: ${key}`)).toEqual([key]);
    expect(secrets(`sumo = ${key}`)).toEqual([key]);
    expect(secrets(`sourcegraph = ${key}`)).toEqual([key]);
    expect(secrets('SOURCEGRAPH_URL = https://sourcegraph.example.com')).toEqual([]);
    expect(secrets(`SOURCEGRAPH_URL_TOKEN = ${key}`)).toEqual([key]);
    expect(secrets(`SUMO_ENDPOINT_KEY = ${key}`)).toEqual([key]);
    expect(secrets(`SUMO_ENDPOINT = ${key}`)).toEqual([]);
  });

  it('CJK keywords, and values written right before CJK text', () => {
    expect(secrets('パスワード：abc123XYZです')).toEqual(['abc123XYZ']);
    expect(secrets('パスワードはTr0ub4dor&3です')).toEqual(['Tr0ub4dor&3']);
    expect(secrets('暗証番号: 4821x')).toEqual(['4821x']);
    expect(secrets(`トークン: ${key}`)).toEqual([key]);
    expect(secrets(`シークレットは${key}。`)).toEqual([key]);
    expect(secrets(`トークンが${key}`)).toEqual([key]);
    expect(secrets('トークン: abc')).toEqual([]);
  });
});

describe('assignments: operators, quotes, spacing', () => {
  const pw = 'Tr0ub4dor&3';
  it.each([
    ['password=', pw],
    ['password =', pw],
    ['password   =   ', pw],
    ['password :', pw],
    ['password=>', pw],
    ['password :=', pw],
    ['password：', pw],
    ['"password": ', pw],
    ["'password' => ", pw],
    ["['password'] = ", pw],
    ['password"] = ', pw],
    ['password is ', pw],
    ['Passwort ist ', pw],
    ['mot de passe est ', pw],
    ['contraseña es ', pw],
    ['Kennwort lautet ', pw],
    ['mot de passe était ', pw],
    ['password era ', pw],
    ['password was ', pw],
    ['password\tis\t', pw],
  ])('%j', (prefix, value) => {
    expect(secrets(`${prefix}${value}`)).toEqual([value]);
    expect(secrets(`${prefix}${value} and more`)).toEqual([value]);
  });

  it('at most three spaces on each side of the operator', () => {
    expect(secrets(`password    = ${pw}`)).toEqual([]);
    expect(secrets(`password =    ${pw}`)).toEqual([]);
    expect(secrets(`password\t\t\t= ${pw}`)).toEqual([pw]);
  });

  it('quoted values: up to the same quote on the same line; spaces allowed for passwords', () => {
    expect(secrets('password = "S3cr3t pass!"')).toEqual(['S3cr3t pass!']);
    expect(secrets("password = 'S3cr3t pass!'")).toEqual(['S3cr3t pass!']);
    expect(secrets('password = `S3cr3t pass!`')).toEqual(['S3cr3t pass!']);
    expect(secrets('password = "S3cr3t \'pass\'!"')).toEqual(["S3cr3t 'pass'!"]);
    expect(secrets('password = "S3cr3t pass!')).toEqual([]);
    expect(secrets('password = "S3cr3t\npass!"')).toEqual([]);
    expect(secrets('password = "S3cr3t pass!\'')).toEqual([]);
    expect(secrets(`password = "${pw}`)).toEqual([]);
    expect(secrets('password = ""')).toEqual([]);
    // A quoted value is taken as it is: punctuation inside the quotes stays.
    expect(secrets(`password = "${pw}."`)).toEqual([`${pw}.`]);
  });

  it('a bare value ends at whitespace, quotes, commas, semicolons, markup and CJK; sentence punctuation is dropped', () => {
    for (const end of [' ', '\t', '\n', '"', "'", '`', ',', ';', '<', '>', 'です', '。']) {
      expect(secrets(`password=${pw}${end}rest`), JSON.stringify(end)).toEqual([pw]);
    }
    for (const trailing of ['.', ',', ';', ':', ')', ']', '}', '>', '.)', '...']) {
      expect(secrets(`(password: ${pw}${trailing}`), trailing).toEqual([pw]);
    }
    expect(secrets(`password: ${pw}!`)).toEqual([`${pw}!`]);
    expect(secrets(`password = ${pw}!`)).toEqual([`${pw}!`]); // a text ending in '!' after an "=" assignment
    expect(secrets(`password: ${pw}?`)).toEqual([`${pw}?`]);
    expect(secrets(`password: ${pw}.x`)).toEqual([`${pw}.x`]);
    expect(secrets(`password: ${pw}/`)).toEqual([`${pw}/`]);
  });

  it('comparisons in code are not assignments', () => {
    for (const op of ['==', '===', '!=', '!==', '<=', '>=', '=<', ':=']) {
      const text = `if (password ${op} "${pw}") {}`;
      expect(secrets(text), op).toEqual(op === ':=' ? [pw] : []);
    }
    const key = 'aB3dE5gH7jK9mN1pQ2';
    expect(secrets(`token = =${key}`)).toEqual([]);
    expect(secrets(`token: >${key}`)).toEqual([]);
    expect(secrets(`token: <${key}`)).toEqual([]);
    expect(secrets(`token: !${key}`)).toEqual([]);
    expect(secrets(`token: =${key}`)).toEqual([]);
    expect(secrets(`token => ${key}`)).toEqual([key]);
    expect(secrets(`token := ${key}`)).toEqual([key]);
    expect(secrets(`token is =${key}`)).toEqual([`=${key}`]);
  });

  it('up to three words between the keyword and the operator', () => {
    expect(secrets(`password for the NAS: ${pw}`)).toEqual([pw]);
    expect(secrets(`Mot de passe du Wi-Fi : ${pw}`)).toEqual([pw]);
    expect(secrets(`contraseña del router es ${pw}`)).toEqual([pw]);
    expect(secrets(`password of my old NAS: ${pw}`)).toEqual([]);
    expect(secrets(`password for ${'n'.repeat(15)}: ${pw}`)).toEqual([pw]);
    expect(secrets(`password for ${'n'.repeat(16)}: ${pw}`)).toEqual([]);
    expect(secrets(`password for NAS   : ${pw}`)).toEqual([]);
    expect(secrets(`password for NAS is ${pw}`)).toEqual([pw]);
  });

  it('the value is read after the whole key name, and the next keyword after the value', () => {
    expect(secrets(`DB_PASSWORD_PROD=${pw}`)).toEqual([pw]);
    expect(secrets(`apiKeySecondary: aB3dE5gH7jK9mN1pQ2`)).toEqual(['aB3dE5gH7jK9mN1pQ2']);
    expect(secrets(`my.app.secret.value=aB3dE5gH7jK9mN1pQ2`)).toEqual(['aB3dE5gH7jK9mN1pQ2']);
    expect(secrets(`password=${pw} token=aB3dE5gH7jK9mN1pQ2 secret=${pw}x`)).toEqual([
      pw,
      'aB3dE5gH7jK9mN1pQ2',
      `${pw}x`,
    ]);
    // A key name is read over at most 48 characters after the keyword's start.
    expect(secrets(`password${'_x'.repeat(20)}=${pw}`)).toEqual([pw]);
    expect(secrets(`password${'_x'.repeat(21)}=${pw}`)).toEqual([]);
  });
});

describe('assignments: which values count', () => {
  it('passwords: 4 characters or more (with spaces: up to 128), not a stopword, not a short lowercase word', () => {
    expect(secrets('password: hunter2')).toEqual(['hunter2']);
    expect(secrets('password: h4x!')).toEqual(['h4x!']);
    expect(secrets('password: h4x')).toEqual([]);
    const long = random(ALNUM, 128);
    expect(secrets(`password: ${long}`)).toEqual([long]);
    // Longer than anyone types: a generated value pasted as the password, redacted whole.
    expect(secrets(`password: ${long}x`)).toEqual([`${long}x`]);
    expect(secrets(`password = "${long}${long}"`)).toEqual([`${long}${long}`]);
    expect(secrets(`password = ${long.repeat(5)};`)).toEqual([long.repeat(5)]);
    // A quoted value with spaces is a password up to 128 characters; longer, it is prose.
    const spaced = `${long.slice(0, 60)} ${long.slice(60, 127)}`;
    expect(secrets(`password: "${spaced}"`)).toEqual([spaced]);
    expect(secrets(`password: "${spaced}x"`)).toEqual([]);
    expect(secrets('password: correcthorse')).toEqual(['correcthorse']); // ten letters or more
    expect(secrets('password: horsebatt')).toEqual([]);
    expect(secrets('password: horsebatte')).toEqual(['horsebatte']);
    expect(secrets('password: Horsebatt')).toEqual(['Horsebatt']);
    expect(secrets('password: élèveàü')).toEqual([]);
    expect(secrets('password: "two words"')).toEqual(['two words']);
  });

  it.each([
    'None',
    'Null',
    'Undefined',
    'True',
    'False',
    'Empty',
    'Required',
    'Optional',
    'Redacted',
    'Hidden',
    'Masked',
    'Secret',
    'Password',
    'Passwort',
    'Token',
    'Changeme',
    'Example',
    'Todo',
    'Siehe',
    'Voir',
    'Stored',
    'Saved',
    'Managed',
    'Rotated',
    'Changed',
    'Reset',
    'Unset',
    'Protected',
    'Encrypted',
    'Hashed',
    'Removed',
    'Omitted',
    'Provided',
    'Needed',
    'Missing',
    'Expired',
    'Invalid',
    'Incorrect',
    'Wrong',
    'From',
    'Will',
    'Must',
    'Should',
    'String',
    'Bool',
    'Boolean',
    'Number',
    'Value',
    'Default',
    'Same',
    'Unknown',
    'Bearer',
    'Basic',
    'OAuth',
    'OAuth2',
    'Header',
    'Cookie',
    'File',
    'Vault',
    'Keychain',
    '1Password',
    'Bitwarden',
    'LastPass',
    'With',
    'This',
    'That',
    'Oder',
    'Generated',
    'Auto',
    'Random',
    'Updated',
    'Pending',
    'Revoked',
    'Valid',
    'Active',
    'Disabled',
  ])('password: %s is a word about the password, not one', (word) => {
    expect(secrets(`password: ${word}`)).toEqual([]);
    expect(secrets(`password: "${word}"`)).toEqual([]);
  });

  it('keys and tokens must look random: 12 characters (16 and 3 digits after a bare "key")', () => {
    expect(secrets('api_key = aB3dE5gH7jK9')).toEqual(['aB3dE5gH7jK9']);
    expect(secrets('api_key = aB3dE5gH7jK')).toEqual([]);
    expect(secrets('api_key = correct-horse-battery')).toEqual([]);
    expect(secrets('HEROKU_KEY = aB3dE5gH7jK9mN1p')).toEqual(['aB3dE5gH7jK9mN1p']);
    expect(secrets('HEROKU_KEY = aB3dE5gH7jK9mN1')).toEqual([]);
    expect(secrets('HEROKU_KEY = aBcdEwgH7jK9mNxpQ')).toEqual([]); // two digits
    expect(secrets('heroku-key: aB3dE5gHwjKxmN1pQ')).toEqual(['aB3dE5gHwjKxmN1pQ']);
    expect(secrets('key = aB3dE5gH7jK9mN1p')).toEqual([]); // "key" alone after a space is a word
  });

  it('access ids (the half of a key pair that names it) need 3 digits and are no UUID', () => {
    expect(secrets('SUMO_ACCESS_ID = suAB3dE5gH7j')).toEqual(['suAB3dE5gH7j']);
    expect(secrets('SUMO_ACCESS-ID: suABwdExgH7j')).toEqual([]);
    expect(secrets('SUMO_ACCESSID: suAB3dE5gH7')).toEqual([]);
    expect(secrets('SUMO_ACCESS_ID = 5eb4223e-09b0-4b52-8c3a-7f1e2d9c6a41')).toEqual([]);
    expect(secrets('secret_access_id = suAB3dE5gH7j')).toEqual(['suAB3dE5gH7j']);
    expect(secrets('secret_id = suAB3dE5gH7j')).toEqual([]);
    expect(secrets('secret_accessId = suAB3dE5gH7j')).toEqual(['suAB3dE5gH7j']);
    expect(secrets('secret_access_id_url = suAB3dE5gH7j')).toEqual([]);
  });

  it('a UUID after a key or token name is the credential, unless it is filler', () => {
    const uuid = '5eb4223e-09b0-4b52-8c3a-7f1e2d9c6a41';
    expect(secrets(`HEROKU_API_KEY=${uuid}`)).toEqual([uuid]);
    expect(secrets(`token: ${uuid.toUpperCase()}`)).toEqual([uuid.toUpperCase()]);
    expect(secrets(`token: ${uuid}0`)).toEqual([`${uuid}0`].filter(() => looksRandom(`${uuid}0`, 12)));
    expect(secrets('token: 00000000-0000-0000-0000-000000000000')).toEqual([]);
    // Filler only: a UUID whose characters run in order is still the credential after a key name.
    const ordered = '01234567-89ab-cdef-0123-456789abcdef';
    expect(looksRandom(ordered, 12)).toBe(false);
    expect(secrets(`token: ${ordered}`)).toEqual([ordered]);
    expect(secrets('token: 11111111-1111-1111-1111-111111111111')).toEqual([]);
    expect(secrets('token: 5eb4223e-09b0-4b52-8c3a-7f1e2d9c6a4')).toEqual(
      ['5eb4223e-09b0-4b52-8c3a-7f1e2d9c6a4'].filter(() => looksRandom('5eb4223e-09b0-4b52-8c3a-7f1e2d9c6a4', 12)),
    );
  });

  it('a value of up to 512 characters is read whole', () => {
    const value = random(ALNUM, 512);
    expect(secrets(`token=${value}`)).toEqual([value]);
  });

  it.each([
    '${API_TOKEN}',
    'abc${X}def123',
    '{{ token }}',
    '{{token}}',
    '<your-token>',
    '%TOKEN%',
    '[token]',
    'https://vault.example.com/v1/secret/data/app',
    'vault://kv/app/token1',
    'xxxxxxxxxxxx',
    '************',
    '............',
    '------------',
    '____________',
    '############',
    '••••••••••••',
    '000000000000',
    'your_token_here',
    'your-api-key-here',
    'my_secret_value',
    'insert-token-here',
    'replace_me_please',
    'enter-your-token',
    'put_token_here',
    'example-token-value',
    'dummy_token',
    'fake_token_value',
    'test_token_value',
    'your_token_123456',
    'insert_key_1234567',
    'aB3dREDACTEDgH7jK9',
  ])('a placeholder %s is left', (value) => {
    expect(secrets(`token: ${value}`)).toEqual([]);
    expect(secrets(`password: ${value}`)).toEqual([]);
  });

  it.each(['1234', '12345', '123456', 'xxxx', '****', '....', '----', '____', '####', '••••', '0000'])(
    'a password placeholder %s is left',
    (value) => {
      expect(secrets(`password: ${value}`)).toEqual([]);
    },
  );

  it('words that start like placeholders but carry digits are values', () => {
    expect(secrets('password: test1234')).toEqual(['test1234']);
    expect(secrets('password: dummy2024!')).toEqual(['dummy2024!']);
    expect(secrets('password: mypass99')).toEqual(['mypass99']);
    expect(secrets('password: 1234567')).toEqual(['1234567']);
    expect(secrets('password: Testing')).toEqual([]);
    expect(secrets('password: yours1')).toEqual(['yours1']);
    expect(secrets('password: your1_x')).toEqual(['your1_x']);
  });

  it('code references are not values', () => {
    for (const value of [
      'getPassword()',
      'get_password(user)',
      'process.env.TOKEN',
      'os.environ["TOKEN"]',
      'env.SECRET',
      'config.secret',
      'settings.API_KEY',
      'self.token',
      'this.password',
      'cfg.pw',
      'secrets.GITHUB_TOKEN',
      'vars.TOKEN',
      'params.key',
      'args.token',
      'req.body.password',
      'request.token',
      'ctx.secret',
      'userPassword',
      'user_password',
      'app.config.secret',
    ]) {
      expect(secrets(`password = ${value}`), value).toEqual([]);
      expect(secrets(`token: ${value}`), value).toEqual([]);
    }
    expect(secrets('password = getPassword ()')).toEqual([]);
    expect(secrets('password = Password1')).toEqual(['Password1']);
    expect(secrets('password = "userPassword"')).toEqual(['userPassword']);
    expect(secrets('password = Tr0ub4dor.Xyz')).toEqual(['Tr0ub4dor.Xyz']);
    expect(secrets('password = processing.x1')).toEqual(['processing.x1']);
  });

  it('a value shown cut off is documentation, not a token; a password may end in dots', () => {
    expect(secrets('token: aB3dE5gH7jK9mN1pQ2...')).toEqual([]);
    expect(secrets('token: aB3dE5gH7jK9mN1pQ2…')).toEqual([]);
    expect(secrets('token: "aB3dE5gH7jK9mN1pQ2"...')).toEqual(['aB3dE5gH7jK9mN1pQ2']);
    expect(secrets('token: "aB3dE5gH7jK9mN1pQ2…"')).toEqual(['aB3dE5gH7jK9mN1pQ2…']); // quoted: taken as written
    expect(secrets('password: Tr0ub4dor&3...')).toEqual(['Tr0ub4dor&3']);
    expect(secrets('token: aB3dE5gH7jK9mN1pQ2..')).toEqual(['aB3dE5gH7jK9mN1pQ2']);
  });
});

describe('assignments: key names that describe the secret', () => {
  const key = 'aB3dE5gH7jK9mN1pQ2';
  it.each([
    'token_id',
    'token-id',
    'secretId',
    'api_key_name',
    'token_type',
    'secret_url',
    'token_uri',
    'key_path',
    'secret_file',
    'password_length',
    'password_len',
    'token_count',
    'token_expiry',
    'token_expires',
    'token_ttl',
    'token_endpoint',
    'password_policy',
    'password_hint',
    'password_reset',
    'password_prompt',
    'password_field',
    'token_label',
    'key_format',
    'token_header',
    'key_usage',
    'token_limit',
    'key_rotation',
    'password_required',
    'token_enabled',
    'password_manager',
    'token_store',
    'secret_vault',
    'password_hash_alg',
    'password_strength',
    'password_min',
    'password_max',
    'token_provider',
    'token_issuer',
    'token_audience',
    'token_scope',
    'token_lifetime',
    'secret_env',
    'token_variable',
    'password_placeholder',
    'password_character',
    'public_key',
    'publicKey',
    'VAPID_PUB_KEY',
    'pubkey',
    'ssh_pub_key',
    'publishable_key',
    'tokenizer',
    'keyboard',
    'secretary',
    'passwordless',
    'master-keying',
  ])('%s = <random> is not a secret', (name) => {
    expect(secrets(`${name} = ${key}`)).toEqual([]);
  });

  it.each(['apikeys', 'secretkey', 'tokensecret', 'passwords', 'tokenpwd', 'secretpass', 'tokens', 'passwordid'])(
    '%s = <random> still names one',
    (name) => {
      expect(secrets(`${name} = ${key}`)).toEqual(name === 'passwordid' ? [] : [key]);
    },
  );

  it('descriptions before the keyword do not count, only after it', () => {
    expect(secrets(`MAX_TOKEN = ${key}`)).toEqual([key]);
    expect(secrets(`url_token = ${key}`)).toEqual([key]);
    expect(secrets(`id_token = ${key}`)).toEqual([key]);
  });

  it('a keyword continued by up to 12 lowercase letters is another word', () => {
    expect(secrets(`tokenabcdefghijk = ${key}`)).toEqual([]);
    expect(secrets(`token${'z'.repeat(12)} = ${key}`)).toEqual([]);
    expect(secrets(`tokenZ = ${key}`)).toEqual([key]);
    expect(secrets(`token9 = ${key}`)).toEqual([key]);
  });
});

describe('assignments: the loose form without an operator', () => {
  it('a password needs letters and digits or symbols and 6 characters', () => {
    expect(secrets('password Tr0ut&Pine2023')).toEqual(['Tr0ut&Pine2023']);
    expect(secrets('password Tr0ut!')).toEqual(['Tr0ut!']);
    expect(secrets('password Tr0ut')).toEqual([]);
    expect(secrets('password 123456789')).toEqual([]);
    expect(secrets('password TroutPine')).toEqual([]);
    expect(secrets('password !@#$%^&*')).toEqual([]);
    expect(secrets('the password rotated monthly')).toEqual([]);
    expect(secrets('password   Tr0ut&Pine2023')).toEqual(['Tr0ut&Pine2023']);
    expect(secrets('password    Tr0ut&Pine2023')).toEqual([]);
    expect(secrets('password\tTr0ut&Pine2023')).toEqual(['Tr0ut&Pine2023']);
  });

  it('a key or token needs 20 random characters', () => {
    expect(secrets('deploy token aB3dE5gH7jK9mN1pQ2rS')).toEqual(['aB3dE5gH7jK9mN1pQ2rS']);
    expect(secrets('deploy token aB3dE5gH7jK9mN1pQ2r')).toEqual([]);
    expect(secrets('api key abcdefghijklmnopqrstuvwxyz')).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// The randomness tests

describe('looksFake', () => {
  it('strings shorter than 8 are never filler', () => {
    expect(looksFake('aaaaaaa')).toBe(false);
    expect(looksFake('aaaaaaaa')).toBe(true);
    expect(looksFake('EXAMPLE')).toBe(false);
  });

  it('EXAMPLE marks a body of up to 40 characters', () => {
    const body = (n: number) => `EXAMPLE${'q7Wz3Kp9Xv2Lm8Rt5Yb4Nc6Hd1Jf0Gs'.repeat(2)}`.slice(0, n);
    expect(looksFake(body(8))).toBe(true);
    expect(looksFake(body(40))).toBe(true);
    expect(looksFake(body(41))).toBe(false);
    expect(looksFake(`q7Wz3Kp9XvEXAMPLE2Lm8Rt`)).toBe(true);
    expect(looksFake(`q7Wz3Kp9XvExample2Lm8Rt`)).toBe(false);
  });

  it('one character in more than half of the places', () => {
    expect(looksFake('a1a2a3a4a5', false)).toBe(false); // exactly half
    expect(looksFake('a1a2a3a4a5a', false)).toBe(true);
    expect(looksFake('é1é2é3é4é5', false)).toBe(false);
    expect(looksFake('é1é2é3é4é5é', false)).toBe(true);
    expect(looksFake('éèéèéèéè', false)).toBe(false);
    expect(looksFake('日本日本日本日本日', false)).toBe(true);
  });

  it('more than half of the characters in runs of four or more', () => {
    // Eight in two runs of four, among 16 and 15 characters.
    expect(looksFake('aaaabbbbcdefghij'.replace('cdefghij', 'c1e3g5i7'), false)).toBe(false);
    expect(looksFake('aaaabbbbc1e3g5i', false)).toBe(true);
    // A run of five counts five.
    expect(looksFake('aaaaa1c3e5', false)).toBe(false);
    expect(looksFake('aaaaabbbbbc1e3g5i7z', false)).toBe(true); // ten of 19
    expect(looksFake('aaaaabbbbbc1e3g5i7zx', false)).toBe(false); // ten of 20
    // Runs of three do not count.
    expect(looksFake('aaabbbccc1e3g5', false)).toBe(false);
    expect(looksFake('aaabbbcccddd1e', false)).toBe(false);
  });

  it('more than 30% ascending neighbours, only when sequences are checked', () => {
    // 10 neighbour pairs: 3 ascending is not filler, 4 is.
    const three = 'ab9cd7ef5Q3';
    const four = 'ab9cd7ef5gh';
    expect(looksFake(three)).toBe(false);
    expect(looksFake(four)).toBe(true);
    expect(looksFake(four, false)).toBe(false);
    expect(looksFake('abcdefghijklmnopqrstuvwxyz')).toBe(true);
    expect(looksFake('zyxwvutsrqponmlkjihgfedcba')).toBe(false);
  });

  it('leaves no count behind for the next call', () => {
    for (let i = 0; i < 3; i++) {
      expect(looksFake('a1b2c3d4e5f6')).toBe(false);
      expect(looksFake('a9b8c7d6e5f4')).toBe(false);
      expect(looksFake('é1è2ê3ë4')).toBe(false);
    }
    expect(shannonEntropy('aabb')).toBe(1);
  });
});

describe('shannonEntropy', () => {
  it.each([
    ['', 0],
    ['a', 0],
    ['ab', 1],
    ['aabb', 1],
    ['abcd', 2],
    ['abcdefgh', 3],
    ['éè', 1],
    ['éèêë', 2],
    ['aé', 1],
    ['aaéé', 1],
  ])('%j has %d bits per character', (value, bits) => {
    expect(shannonEntropy(value)).toBeCloseTo(bits, 10);
    expect(shannonEntropy(value)).toBeCloseTo(bits, 10); // and again: no counts left over
  });

  it('uneven counts', () => {
    expect(shannonEntropy('aaab')).toBeCloseTo(0.8112781244591328, 12);
    expect(shannonEntropy('ééée')).toBeCloseTo(0.8112781244591328, 12);
  });
});

describe('looksRandom', () => {
  it('length between the minimum and 2,048', () => {
    const v = random(ALNUM, 2048);
    expect(looksRandom(v, 16)).toBe(true);
    expect(looksRandom(v + 'x', 16)).toBe(false);
    expect(looksRandom('a1b2c3d4', 8)).toBe(true);
    expect(looksRandom('a1b2c3d4', 9)).toBe(false);
  });

  it('no whitespace, letters and digits both', () => {
    expect(looksRandom('a1b2 c3d4e5', 8)).toBe(false);
    expect(looksRandom('a1b2\tc3d4e5', 8)).toBe(false);
    expect(looksRandom('abcXdefYghiZ', 8)).toBe(false);
    expect(looksRandom('1357924680', 8)).toBe(false);
    expect(looksRandom('a1!@#$%^&*', 8)).toBe(true);
    expect(looksRandom('Z1!@#$%^&*()', 8)).toBe(true);
  });

  it('not filler, and not words joined by _ or - unless the entropy is 4 or more', () => {
    expect(looksRandom('a1a1a1a1a1a1', 8)).toBe(false);
    expect(looksRandom('abcdef1234567', 8)).toBe(false);
    expect(looksRandom('my_api_key_v2', 8)).toBe(false);
    expect(looksRandom('prod_data-pass9', 8)).toBe(false);
    // Sixteen distinct characters: entropy 4, words or not.
    expect(looksRandom('qwe_rty9517364ZK', 8)).toBe(true);
    expect(looksRandom('qwe_rty9517364ZZ', 8)).toBe(false);
    expect(looksRandom('qwerty9517364ZK_', 8)).toBe(true);
  });

  it('entropy of at least 3.0 for lowercase and digits shorter than 32; 3.2 with capitals or from 32 characters', () => {
    expect(looksRandom('a1c3e5g7', 8)).toBe(true); // 3.0
    expect(looksRandom('a1c3e5gg', 8)).toBe(false);
    expect(looksRandom('A1c3e5g7', 8)).toBe(false); // 3.0 with a capital
    expect(looksRandom('A1c3e5g7i9', 8)).toBe(true); // 3.32
    expect(looksRandom('A1c3e5g7i', 8)).toBe(false); // 3.17
    // Nine characters, evenly repeated: 3.17 bits.
    const nine = 'a1c3e5g7i';
    const of = (n: number) => nine.repeat(4).slice(0, n);
    expect(shannonEntropy(of(31))).toBeGreaterThan(3.0);
    expect(shannonEntropy(of(32))).toBeLessThan(3.2);
    expect(looksRandom(of(31), 8)).toBe(true);
    expect(looksRandom(of(32), 8)).toBe(false);
  });
});

describe('the detector appends to what other detectors found', () => {
  it('candidates of earlier detectors are kept and not joined or read as key ids', () => {
    const out: Candidate[] = [{ type: 'EMAIL', start: 0, end: 4, priority: 70 }];
    const m = `fm2_${random(B64, 100)}`;
    const text = `fm2_,${m} AKIA${random(UPHEX, 16)}`;
    detectSecrets(text, { phoneRegions: [], allIps: false }, out);
    expect(out[0]).toEqual({ type: 'EMAIL', start: 0, end: 4, priority: 70 });
    expect(out.slice(1).map((c) => text.slice(c.start, c.end))).toEqual([m, text.slice(-20)]);
  });

  it('formats are certain, values read from context less so: an e-mail inside a URL password loses, a phone-like value wins', () => {
    const pw = 'anna@example.org';
    expect(redact(`https://u:${pw}@host`).findings.map((f) => f.type)).toEqual(['SECRET']);
    expect(redact('password: +1 415 555 2671').findings.map((f) => f.type)).toEqual(['PHONE']);
  });
});

// ---------------------------------------------------------------------------------------------
// The ends of each character class, and the words around a value

describe('PEM bodies: what a body line may hold', () => {
  const head = '-----BEGIN RSA PRIVATE KEY-----';
  it("a cut-off block is counted up to its own end, not up to a later block's footer", () => {
    const b = `-----BEGIN EC PRIVATE KEY-----\n${pemLine()}\n-----END EC PRIVATE KEY-----`;
    expect(secrets(`${head}\nAbc\n${b}`)).toEqual([b]);
  });

  it('a blank CRLF line ends a cut-off body', () => {
    const key = `${head}\r\n${pemLine()}\r`;
    expect(secrets(`${key}\n\r\n${pemLine()}\r\n`)).toEqual([key]);
  });

  it('base64 with padding, and armor headers of letters and dashes', () => {
    const lines = ['AZaz09+/' + pemLine(56), pemLine(30) + '=='];
    const key = `${head}\n${lines.join('\n')}`;
    expect(secrets(`${key}\nsome prose`)).toEqual([key]);
    const armored = `${head}\nVersion: GnuPG v2\nZaz-Az: any text: here\n${pemLine()}`;
    expect(secrets(`${armored}\nsome prose`)).toEqual([armored]);
    expect(secrets(`${head}\nVersion:GnuPG\n${pemLine()}`)).toEqual([]);
    expect(secrets(`${head}\nVers1on: GnuPG\n${pemLine()}`)).toEqual([]);
    expect(secrets(`${head}\n${pemLine(20)} x\n${pemLine()}`)).toEqual([]);
    expect(secrets(`${head}\n${pemLine(20)}\r\r\n${pemLine()}`)).toEqual([]);
  });
});

describe('URLs: what the user and the password may hold', () => {
  it.each([
    'https://host/a:Tr0ub4dor3@x',
    'https://h?a:Tr0ub4dor3@x',
    'https://h#a:Tr0ub4dor3@x',
    'https://a@b:Tr0ub4dor3@x',
    'https://u:pa ss@host',
    'https://u:pa/ss@host',
  ])('no password in %s', (text) => {
    expect(secrets(text)).toEqual([]);
  });
});

describe('Bundler: the ends of each class of the key and the value', () => {
  it.each(['BUNDLE_AZ09__A__AZ09', 'BUNDLE_X__Z__AZ09', 'BUNDLE_X__0__Z', 'BUNDLE_X__9__0', 'BUNDLE_A_Z__9'])(
    '%s',
    (key) => {
      expect(secrets(`${key}=u:p4ss`)).toEqual(['u:p4ss']);
    },
  );

  it('the user stops at whitespace, quotes, colons, semicolons and ampersands; the password at all but colons', () => {
    for (const c of [' ', '"', "'", ';', '&'])
      expect(secrets(`BUNDLE_X__COM=u${c}x:p4ss`), JSON.stringify(c)).toEqual([]);
    for (const c of [' ', '"', "'", ';', '&'])
      expect(secrets(`BUNDLE_X__COM=u:p4ss${c}x`), JSON.stringify(c)).toEqual(['u:p4ss']);
    expect(secrets('BUNDLE_X__COM=u:p4ss:x')).toEqual(['u:p4ss:x']);
  });
});

describe('authorization values: the ends of each class', () => {
  it('every character a value may hold', () => {
    const value = 'AZaz09.b_c~d+e/f=g-h';
    expect(secrets(`Authorization: ${value}`)).toEqual([value]);
    expect(secrets('Bearer AZaz09.b_c~d+e/f-gh==')).toEqual(['AZaz09.b_c~d+e/f-gh==']);
    expect(secrets('Authorization: Basic AZaz09+/YnJv')).toEqual(['AZaz09+/YnJv']);
    expect(secrets('Authorization: Basic YnJvd3Nlcg==')).toEqual(['YnJvd3Nlcg==']);
    expect(secrets('Authorization: Basic YnJvd3Nlcjo-x')).toEqual([]);
    expect(secrets('Authorization: Basic -YnJvd3Nlcjo')).toEqual([]);
  });

  it('a value read after a scheme word is the scheme rule\'s, not the longer value of a "token" assignment', () => {
    expect(secrets('Token aB3dE5gH7jK9mN1pQ2rS!tail')).toEqual(['aB3dE5gH7jK9mN1pQ2rS']);
  });

  it('a UUID of few distinct characters is still a UUID; one a character longer or shorter is not', () => {
    const uuid = '09af09af-09af-09af-09af-09af09af09af';
    expect(looksRandom(uuid, 10)).toBe(false);
    for (const v of [uuid, uuid.toUpperCase(), '09AF09af-09Af-09aF-09AF-09af09AF09aF']) {
      expect(secrets(`Authorization: ${v}`), v).toEqual([v]);
      expect(secrets(`token: ${v}`), v).toEqual([v]);
    }
    for (const v of [
      `${uuid}0`,
      `0${uuid}`,
      uuid.slice(1),
      uuid.slice(0, -1),
      uuid.replace('-09af-', '-09a-'),
      uuid.replace('-', ''),
    ]) {
      expect(secrets(`Authorization: ${v}`), v).toEqual([]);
      expect(secrets(`token: ${v}`), v).toEqual([]);
    }
  });
});

describe('AWS secrets: the ends of each class', () => {
  const keyId = `AKIA${random(UPHEX, 16)}`;
  const secret = 'AZaz09+/' + random(B64, 32);
  it('every character a secret may hold, and each that may not touch it', () => {
    expect(secrets(`${keyId} ${secret}`)).toEqual([keyId, secret]);
    for (const c of ['A', 'Z', 'a', 'z', '0', '9', '+', '/'])
      expect(secrets(`${keyId} ${c}${secret}`), `${c} before`).toEqual([keyId]);
    for (const c of ['A', 'Z', 'a', 'z', '0', '9', '+', '/', '='])
      expect(secrets(`${keyId} ${secret}${c}`), `${c} after`).toEqual([keyId]);
  });
});

describe('assignments: more edges', () => {
  const key = 'aB3dE5gH7jK9mN1pQ2';
  it.each(['PASSWORD', 'Passwort', 'KENNWORT', 'contraseña', 'Contrasena', 'PWD', 'db-pwd', 'パスワード', '暗証番号'])(
    '%s: a short password is a password',
    (word) => {
      expect(secrets(`${word}: hunt3r`)).toEqual(['hunt3r']);
    },
  );

  it.each([
    'private key',
    'signing key',
    'auth key',
    'master key',
    'license key',
    'account key',
    'subscription key',
    'consumer key',
    'app key',
    'session key',
    'storage key',
  ])('%s with a space', (word) => {
    expect(secrets(`${word} = ${key}`)).toEqual([key]);
  });

  it.each(['xpwd', 'xpass', 'passx', 'xcle', 'clex', 'clé9x'])('%s is not a keyword', (word) => {
    expect(secrets(`${word} = ${key}`)).toEqual(word === 'clé9x' ? [key] : []);
  });

  it('a key name is read 48 characters forward and 40 back', () => {
    expect(secrets(`password${'_x'.repeat(20)}y=hunt3r`)).toEqual([]);
    expect(secrets(`public_${'x'.repeat(32)}_token = ${key}`)).toEqual([]);
    expect(secrets(`public_${'x'.repeat(33)}_token = ${key}`)).toEqual([key]);
    expect(secrets(`token-url = ${key}`)).toEqual([]);
    expect(secrets(`token.url = ${key}`)).toEqual([]);
    expect(secrets(`token.id = ${key}`)).toEqual([]);
    expect(secrets(`public.token = ${key}`)).toEqual([]);
    expect(secrets(`VAPID-PUB-KEY = ${key}`)).toEqual([]);
    expect(secrets(`epub_token = ${key}`)).toEqual([key]);
    expect(secrets(`token_lenient = ${key}`)).toEqual([key]);
  });

  it('after a value the scan goes on behind it: a keyword inside a value is not a key name', () => {
    expect(secrets(`password=Xyz1token = ${key}`)).toEqual(['Xyz1token']);
    expect(secrets(`password=Xyz1 token = ${key}`)).toEqual(['Xyz1', key]);
  });

  it('a name that ends in an id is an id; an id earlier in the name is not', () => {
    expect(secrets(`APP_ID_TOKEN = ${key}`)).toEqual([key]);
    expect(secrets(`client_id_secret = ${key}`)).toEqual([key]);
    expect(secrets(`TOKEN_APPID = ${key}`)).toEqual([key]);
    expect(secrets(`TOKEN_APP_ID = ${key}`)).toEqual([]);
    expect(secrets(`tokenAppId = ${key}`)).toEqual([]);
  });

  it('keywords that must stand alone or end a word', () => {
    for (const word of ['monkeys', 'sumos', 'clesecretary', 'uncle'])
      expect(secrets(`${word} = ${key}`), word).toEqual([]);
    for (const word of ['token.idx']) expect(secrets(`${word} = ${key}`), word).toEqual([key]);
  });

  it('what a keyword may be continued by', () => {
    expect(secrets(`tokena = ${key}`)).toEqual([]);
    expect(secrets(`tokenz = ${key}`)).toEqual([]);
    expect(secrets(`tokenxkey = ${key}`)).toEqual([]);
    expect(secrets(`tokenkey = ${key}`)).toEqual([key]);
    expect(secrets(`tokenskey = ${key}`)).toEqual([key]);
  });

  it('a bare "key" suffix needs 16 characters with three digits, at the ends of the digit range too', () => {
    expect(secrets('herokukey = aB3dE5gH7jK9mN1')).toEqual([]);
    expect(secrets('herokukey = aB3dE5gH7jK9mN1p')).toEqual(['aB3dE5gH7jK9mN1p']);
    expect(secrets('HEROKU_KEY = aB0dE0gH9jKxmNxp')).toEqual(['aB0dE0gH9jKxmNxp']);
    expect(secrets('HEROKU_KEY = aB0dEwgH9jKxmNxp')).toEqual([]);
  });

  it('qualifier words: one or two spaces, letters, digits, apostrophes and dashes, before any operator', () => {
    const pw = 'Tr0ub4dor&3';
    expect(secrets(`password  for  NAS: ${pw}`)).toEqual([pw]);
    expect(secrets(`password   for NAS: ${pw}`)).toEqual([]);
    expect(secrets(`password for NAS2: ${pw}`)).toEqual([pw]);
    expect(secrets(`password for Bob's NAS: ${pw}`)).toEqual([pw]);
    expect(secrets(`password for Bob’s NAS = ${pw}`)).toEqual([pw]);
    expect(secrets(`password for the NAS：${pw}`)).toEqual([pw]);
    expect(secrets(`password for NAS was ${pw}`)).toEqual([pw]);
    expect(secrets(`password for NAS lautet ${pw}`)).toEqual([pw]);
    expect(secrets(`password for NAS\tist ${pw}`)).toEqual([pw]);
  });

  it('the loose form: letters at the ends of the alphabet count as letters, and only non-letters as the rest', () => {
    for (const v of ['12345a', '12345z', '12345A', '12345Z']) expect(secrets(`password ${v}`), v).toEqual([v]);
    for (const v of ['Abcdefgh', 'Zbcdefgh', 'Qwertya', 'Qwertyz']) expect(secrets(`password ${v}`), v).toEqual([]);
  });

  it('short lowercase words, accented too, are prose', () => {
    for (const v of ['puzzle', 'voilà', 'naÿve', 'azure']) expect(secrets(`password: ${v}`), v).toEqual([]);
  });

  it.each(['abc{{x}}123', 'git+ssh://host/repo', 'a.b://x', 'x-y://z', 'XXXXXXXX', 'some_token'])(
    'a placeholder %s is left',
    (value) => {
      expect(secrets(`password: ${value}`)).toEqual([]);
    },
  );

  it('references with digits: the known objects of code', () => {
    for (const p of [
      'process',
      'os',
      'env',
      'config',
      'settings',
      'self',
      'this',
      'cfg',
      'secrets',
      'vars',
      'params',
      'args',
      'req',
      'request',
      'ctx',
    ]) {
      expect(secrets(`password = ${p}.KEY_2`), p).toEqual([]);
      expect(secrets(`password = ${p}['k1']`), p).toEqual([]);
      expect(secrets(`password = ${p}x.KEY2`), p).toEqual([`${p}x.KEY2`]);
    }
    expect(secrets('password = Hunterx')).toEqual(['Hunterx']);
  });
});

describe('the randomness tests: the ends of each range', () => {
  it('digits 0 and 9, letters A, Z, a and z', () => {
    expect(looksRandom('qWeRtY0uIoPzXc', 8)).toBe(true);
    expect(looksRandom('qWeRtY9uIoPzXc', 8)).toBe(true);
    for (const v of ['1A2!3@4#5$6%', '1Z2!3@4#5$6%', '1a2!3@4#5$6%', '1z2!3@4#5$6%'])
      expect(looksRandom(v, 8), v).toBe(true);
    expect(looksRandom('Z1c3e5g7', 8)).toBe(false); // a capital asks for 3.2
  });

  it('words joined by _ or -, of three letters or more, any case', () => {
    expect(looksRandom('qwe_rty7', 8)).toBe(false);
    expect(looksRandom('qw_erty7', 8)).toBe(true);
    expect(looksRandom('zqa_bcx7', 8)).toBe(false);
    expect(looksRandom('zqa-bcx7', 8)).toBe(false);
    expect(looksRandom('ZQA_BCX7WE', 8)).toBe(false);
    expect(looksRandom('ZQ_ABCX7WE', 8)).toBe(true);
  });

  it('characters past ASCII are counted apart', () => {
    expect(looksFake('\x80'.repeat(8))).toBe(true);
    expect(looksFake('\x80a\x80b\x80c\x80d\x80', false)).toBe(true); // five of nine, no run
    expect(looksFake('\x80a\x80b\x80c\x80d', false)).toBe(false);
    expect(looksFake('\x80\x81'.repeat(4), false)).toBe(false);
    expect(shannonEntropy('\x80\x81')).toBe(1);
    expect(shannonEntropy('\x7f\x80')).toBe(1);
  });
});

describe('keywords with each separator before "key", and a value only a named key accepts', () => {
  // Twelve random characters: enough after "api key", not after a bare "_key" (16 and three digits).
  const value = 'aB3dE5gH7jK9';
  const bases = [
    'api',
    'access',
    'private',
    'signing',
    'auth',
    'encryption',
    'master',
    'license',
    'account',
    'subscription',
    'consumer',
    'client',
    'app',
    'session',
    'storage',
  ];
  for (const base of bases) {
    it(base, () => {
      for (const sep of ['_', ' ', '-', ''])
        expect(secrets(`${base}${sep}key = ${value}`), JSON.stringify(sep)).toEqual([value]);
      expect(secrets(`${base.toUpperCase()}_KEY = ${value}`)).toEqual([value]);
    });
  }

  it('a bare "key" suffix does not accept it', () => {
    for (const name of ['stripe_key', 'stripe-key', 'stripekey', 'STRIPE_KEY'])
      expect(secrets(`${name} = ${value}`), name).toEqual([]);
  });
});

describe('the formats found by their middle, at both ends of each class', () => {
  it.each([
    'AZa0Q~AZaz09_~.-' + 'q7Wz3Kp9Xv2Lm8Rt5Yb4Nc6', // Azure: 3 + digit, Q~, 31 to 34
    'z_~9Q~' + 'q7Wz3Kp9Xv2Lm8Rt5Yb4Nc6Hd1Jf0Gs-~',
    '.Zz0Q~' + '.~_-09azAZq7Wz3Kp9Xv2Lm8Rt5Yb4N',
    '09af' + 'c3e5b7d1c3e5b7d1c3e5b7d1c3e5' + '-us09', // Mailchimp
    '09af' + 'c3e5b7d1c3e5b7d1c3e5b7d1c3e5' + '-us0',
    '0912345678' + ':AA' + 'AZaz09_-q7Wz3Kp9Xv2Lm8Rt5Yb4Nc6Hd', // Telegram
    '98765432' + ':AA' + '-_90zaZAq7Wz3Kp9Xv2Lm8Rt5Yb4Nc6Hd',
    'az09q7w3kp9xv2' + '.atlasv1.' + 'az09_=-' + 'q7wz3kp9xv2lm8rt5yb4nc6hd1jf0gsq7wz3kp9xv2lm8rt5yb4nc6', // Terraform
    '0912345678901234' + '|' + 'AZaz09_-q7Wz3Kp9Xv2Lm8Rt5Yb', // Facebook
    '987654321098765' + '|' + '-_90zaZAq7Wz3Kp9Xv2Lm8Rt5Yb',
  ])('%s', (token) => {
    expect(secrets(`id ${token} end`)).toEqual([token]);
  });
});

describe('more separators and words', () => {
  const pw = 'Tr0ub4dor&3';
  it('tabs where spaces may stand', () => {
    expect(secrets(`password =\t${pw}`)).toEqual([pw]);
    expect(secrets(`password\t=${pw}`)).toEqual([pw]);
    expect(secrets('Authorization:\taB3dE5gH7j')).toEqual(['aB3dE5gH7j']);
    expect(secrets('Authorization\t: aB3dE5gH7j')).toEqual(['aB3dE5gH7j']);
    expect(secrets('Authorization: Bearer\taB3dE5gH7j')).toEqual(['aB3dE5gH7j']);
    expect(secrets('BUNDLE_X__COM\t= u:p4ss')).toEqual(['u:p4ss']);
  });

  it('qualifiers before each operator word', () => {
    for (const word of ['is', 'ist', 'est', 'es', 'lautet', 'era', 'was'])
      expect(secrets(`password for NAS ${word} ${pw}`), word).toEqual([pw]);
  });

  it('identifiers at the ends of their classes are code', () => {
    for (const v of [
      'Abc_def',
      'Zbc_def',
      'abc_def',
      'zbc_def',
      '_bc_def',
      'bAc_de',
      'bZc_de',
      'bac_de',
      'bzc_de',
      'b_cde',
      'xaAy',
      'xzZy',
      'xaZy',
      'xzAy',
    ]) {
      expect(secrets(`password = ${v}`), v).toEqual([]);
    }
    for (const v of [
      'ab.Acd',
      'ab.Zcd',
      'ab.acd',
      'ab.zcd',
      'ab._cd',
      'ab.cAd',
      'ab.cZd',
      'ab.cad',
      'ab.czd',
      'ab.c_d',
    ]) {
      expect(secrets(`password = ${v}`), v).toEqual([]);
    }
  });

  it('URL-shaped placeholders: a scheme of a letter and up to 20 letters, digits, +, . or -', () => {
    for (const v of ['az09://x', 'za://x', 'Az://x', 'Zz://x', `a${'b'.repeat(20)}://x`])
      expect(secrets(`password: ${v}`), v).toEqual([]);
    expect(secrets(`password: a${'b'.repeat(21)}://x`)).toEqual([`a${'b'.repeat(21)}://x`]);
    expect(secrets('password: 9ab://x')).toEqual(['9ab://x']);
  });

  it('placeholder words, with or without a separator after them', () => {
    for (const v of ['Dummy', 'Fake', 'Test', 'Some', 'Insert', 'Replace', 'Enter', 'Put', 'Example', 'Mytoken'])
      expect(secrets(`password: ${v}`), v).toEqual([]);
    for (const v of ['enter-key-123', 'replace-me-9', 'insert_9', 'your-1'])
      expect(secrets(`password: ${v}`), v).toEqual([]);
    expect(secrets('password: aB3dredactedgH7jK9')).toEqual([]);
    expect(secrets('password: entertain9')).toEqual(['entertain9']);
  });
});

// ---------------------------------------------------------------------------------------------
// Where a value longer than its rule reads ends: the character classes of the extension

describe('the end of a value longer than its rule reads', () => {
  const spans = (text: string): string[] => {
    const out: Candidate[] = [];
    detectSecrets(text, { phoneRegions: [], allIps: false }, out);
    return out.map((c) => text.slice(c.start, c.end));
  };

  it('a Bearer or header credential past 2,048 characters runs over every credential character, and stops at any other', () => {
    const v = random(ALNUM, 2048);
    for (const c of ['a', 'z', 'A', 'Z', '0', '9', '.', '_', '~', '+', '/', '=', '-']) {
      for (const form of ['Bearer ', 'Authorization: '])
        expect(spans(`${form}${v}${c}q7 next`), `${form}${c}`).toEqual([`${v}${c}q7`]);
    }
    for (const c of [
      ' ',
      '"',
      "'",
      ',',
      ';',
      ':',
      '!',
      '@',
      '#',
      '%',
      '&',
      '*',
      '?',
      '`',
      '(',
      '[',
      '{',
      '<',
      '\\',
      '|',
      '^',
      '\u00e9',
      '\u2028',
    ]) {
      for (const form of ['Bearer ', 'Authorization: '])
        expect(spans(`${form}${v}${c}q7 next`), `${form}${JSON.stringify(c)}`).toEqual([v]);
    }
  });

  it("a 2,048-character Bearer credential with '=' padding after it is redacted whole (was: judged with its padding, refused as too long)", () => {
    const v = random(ALNUM, 2048);
    expect(spans(`Bearer ${v}=`)).toEqual([`${v}=`]);
    expect(spans(`Bearer ${v}== next`)).toEqual([`${v}==`]);
    expect(spans(`Bearer ${random(ALNUM, 2047)}=`)).toHaveLength(1);
  });

  it('a Bundler password past 128 characters runs to whitespace, a quote, ";" or "&", and over anything else', () => {
    const pw = random(ALNUM, 128);
    const key = 'BUNDLE_GEMS__CONTRIBSYS__COM=';
    for (const c of [
      'a',
      '!',
      ':',
      '@',
      '/',
      '=',
      '-',
      '\u0000',
      '\u0008',
      '\u000e',
      '\u001f',
      '\u00e9',
      '\u2027',
      '\u202a',
    ]) {
      expect(spans(`${key}u:${pw}${c}q7`), JSON.stringify(c)).toEqual([`u:${pw}${c}q7`]);
    }
    for (const c of [
      ' ',
      '\t',
      '\n',
      '\u000b',
      '\u000c',
      '\r',
      '"',
      "'",
      ';',
      '&',
      '\u00a0',
      '\u2028',
      '\u2029',
      '\u3000',
    ]) {
      expect(spans(`${key}u:${pw}${c}q7`), JSON.stringify(c)).toEqual([`u:${pw}`]);
    }
  });

  it('a value ends at every Unicode space and line separator, raw as a detector may be given it, and runs over their neighbours', () => {
    const spaces = [0x85, 0xa0, 0x1680, 0x2000, 0x2005, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff];
    const others = [
      0x84,
      0x86,
      0x9f,
      0xa1,
      0x167f,
      0x1681,
      0x1fff,
      0x200b,
      0x2027,
      0x202a,
      0x202e,
      0x2030,
      0x205e,
      0x2060,
      0xfefe,
      0xff00 - 0x100,
    ];
    for (const code of spaces) {
      const c = String.fromCharCode(code);
      expect(spans(`password = hunter22${c}rest`), code.toString(16)).toEqual(['hunter22']);
      expect(spans(`https://u:hunter22${c}x@host`), code.toString(16)).toEqual([]);
    }
    for (const code of others) {
      const c = String.fromCharCode(code);
      expect(spans(`password = hunter22${c}rest`), code.toString(16)).toEqual([`hunter22${c}rest`]);
      expect(spans(`https://u:hunter22${c}x@host`), code.toString(16)).toEqual([`hunter22${c}x`]);
    }
  });
});
