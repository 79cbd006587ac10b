/**
 * Secrets longer than the part a rule reads to judge them: the whole value is redacted, never a
 * tail of it left in the stored text. And values end at Unicode spaces and line separators as
 * they do at a space.
 */
import { describe, expect, it } from 'vitest';
import { redact } from '../../src/pii/index.js';

/** A random-looking run of `n` characters (fixed seed). */
function randomRun(n: number, alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'): string {
  let seed = 0x2545f491 ^ n;
  let out = '';
  for (let i = 0; i < n; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    out += alphabet[(seed >>> 16) % alphabet.length];
  }
  return out;
}

describe('long secrets are redacted whole', () => {
  it.each([100, 511, 512, 513, 600, 5000])('token = <%i random characters>', (n) => {
    const value = randomRun(n);
    const text = `api_token = ${value} and more`;
    expect(redact(text).text).toBe('api_token = [REDACTED:SECRET] and more');
  });

  it('a long value ends before trailing sentence punctuation', () => {
    const value = randomRun(700);
    expect(redact(`secret: ${value}.`).text).toBe('secret: [REDACTED:SECRET].');
  });

  it.each([600, 3000])('a quoted value of %i characters is redacted to its closing quote', (n) => {
    const value = randomRun(n);
    expect(redact(`"client_secret": "${value}", "x": 1`).text).toBe('"client_secret": "[REDACTED:SECRET]", "x": 1');
  });

  it('a short quoted value without its closing quote is still no value', () => {
    expect(redact('token = "abc\nXyZ9Qw3Er7Ty1Ui5Op2As4Df"').findings.filter((f) => f.type === 'SECRET')).toEqual([]);
  });

  it.each([2048, 2049, 4000])('Authorization: Bearer <%i characters>', (n) => {
    const value = randomRun(n, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.');
    expect(redact(`curl -H "Authorization: Bearer ${value}" x`).text).toBe(
      'curl -H "Authorization: Bearer [REDACTED:SECRET]" x',
    );
    expect(redact(`Bearer ${value} x`).text).toBe('Bearer [REDACTED:SECRET] x');
  });

  it.each([128, 129, 400])('a Bundler password of %i characters', (n) => {
    const value = `user:${randomRun(n)}`;
    expect(redact(`BUNDLE_GEMS__CONTRIBSYS__COM=${value} bundle install`).text).toBe(
      'BUNDLE_GEMS__CONTRIBSYS__COM=[REDACTED:SECRET] bundle install',
    );
  });

  it('two long values in a row are each redacted, and nothing between them', () => {
    const a = randomRun(900);
    const b = randomRun(901);
    expect(redact(`token=${a}\npassword: Tr0ut&Pine2023\nsecret=${b}`).text).toBe(
      'token=[REDACTED:SECRET]\npassword: [REDACTED:SECRET]\nsecret=[REDACTED:SECRET]',
    );
  });
});

describe('values end at Unicode spaces', () => {
  // (U+FEFF is not among them: the engine drops zero-width characters before the detectors read the text.)
  it.each(['2028', '2029', '00a0', '3000', '2003', '202f', '0085', '1680'])(
    'password: Tr0ut&Pine2023, U+%s, more words',
    (hex) => {
      const space = String.fromCharCode(parseInt(hex, 16));
      const text = `password: Tr0ut&Pine2023${space}and then the note goes on`;
      const found = redact(text)
        .findings.filter((f) => f.type === 'SECRET')
        .map((f) => text.slice(f.start, f.end));
      expect(found).toEqual(['Tr0ut&Pine2023']);
    },
  );
});
