/**
 * Values in the forms people and their software write are found on a folded
 * view of the text, and the characters really written are replaced (the output keeps everything
 * around them, and none of the value).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import { redact } from '../../src/pii/index.js';
import { normalizedView, visibleAfter, visibleBefore } from '../../src/pii/normalize.js';
import { MemoryStore } from '../../src/store/memory.js';

const NBSP = '\u00a0';
const NNBSP = '\u202f';
const ZWSP = '\u200b';
const ZWJ = '\u200d';
const WJ = '\u2060';
const SHY = '\u00ad';
const EN = '\u2013';
const EM = '\u2014';
const MINUS = '\u2212';

/** Full-width form of an ASCII string (digits, letters, '@', '.', '+', '-'). */
function fullwidth(s: string): string {
  return [...s]
    .map((ch) => (ch === ' ' ? '\u3000' : ch >= '!' && ch <= '~' ? String.fromCharCode(ch.charCodeAt(0) + 0xfee0) : ch))
    .join('');
}

const CASES: Array<[string, string, string]> = [
  // [form, text, type]
  ['NBSP-grouped card', `carte 4111${NBSP}1111${NBSP}1111${NBSP}1111 expirée`, 'CREDIT_CARD'],
  ['narrow-NBSP-grouped card', `carte 4111${NNBSP}1111${NNBSP}1111${NNBSP}1111 expirée`, 'CREDIT_CARD'],
  ['NNBSP-grouped French phone', `tél.${NBSP}: 06${NNBSP}12${NNBSP}34${NNBSP}56${NNBSP}78 (portable)`, 'PHONE'],
  [
    'NBSP-grouped IBAN',
    `IBAN FR76${NNBSP}3000${NNBSP}6000${NNBSP}0112${NNBSP}3456${NNBSP}7890${NNBSP}189 merci`,
    'IBAN',
  ],
  ['full-width e-mail', `メール：${fullwidth('taro.yamada@example.co.jp')}です`, 'EMAIL'],
  ['full-width @ only', 'mail taro.yamada＠example.co.jp please', 'EMAIL'],
  ['full-width phone', `電話${fullwidth('090-1234-5678')}まで`, 'PHONE'],
  ['full-width card', `カード${fullwidth('4111 1111 1111 1111')}です`, 'CREDIT_CARD'],
  ['zero-width spaces in a card', `card 4111${ZWSP}1111${ZWSP}1111${ZWSP}1111 ok`, 'CREDIT_CARD'],
  ['zero-width joiner in an e-mail', `mail jane.doe${ZWJ}@exam${ZWJ}ple.com ok`, 'EMAIL'],
  ['word joiner and soft hyphen in an SSN', `SSN 536${WJ}-22-${SHY}8711 ok`, 'US_SSN'],
  ['zero-width space in a token', `token ghp_R8x2Lm4Nq7Vt${ZWSP}1Bz9Kc3Hw6Jy5Pd0Fs2Ga8Ue ok`, 'SECRET'],
  ['en dashes in an SSN', `SSN 536${EN}22${EN}8711 ok`, 'US_SSN'],
  ['em dashes in a phone', `call +1 415${EM}555${EM}0132 ok`, 'PHONE'],
  ['minus signs in a card', `card 4111${MINUS}1111${MINUS}1111${MINUS}1111 ok`, 'CREDIT_CARD'],
  ['en dashes in a card', `card 5555${EN}5555${EN}5555${EN}4444 ok`, 'CREDIT_CARD'],
  ['card wrapped over two lines', 'card 4111 1111\n1111 1111 ok', 'CREDIT_CARD'],
  ['card wrapped with CRLF', 'card 4111 1111 1111\r\n1111 ok', 'CREDIT_CARD'],
  ['IBAN wrapped over two lines', 'IBAN DE89 3704 0044\n0532 0130 00 ok', 'IBAN'],
  ['percent-encoded e-mail in a URL', 'https://crm.example/find?email=jane.doe%40example.com&x=1', 'EMAIL'],
  ['percent-encoded phone in a tel: link', '<a href="tel:%2B14155550132">call</a>', 'PHONE'],
  ['Arabic-Indic digits in a phone', 'هاتف +٩٧١ ٥٠ ١٢٣ ٤٥٦٧ شكرا', 'PHONE'],
];

describe.each(CASES)('%s', (_form, text, type) => {
  it('is found and its original characters are replaced', () => {
    const { text: out, findings } = redact(text);
    expect(findings.map((f) => f.type)).toContain(type);
    expect(out).toContain(`[REDACTED:${type}]`);
    const f = findings.find((x) => x.type === type)!;
    // Nothing of the value is left: no digit of the value's digits, no '@'.
    const value = text.slice(f.start, f.end);
    const left = out.replace(/\[REDACTED:[A-Z_]+\]/g, '');
    for (const piece of value
      .split(/[\s\u00a0\u202f\u3000\-\u2013\u2014\u2212\u200b-\u200d\u2060\u00ad]+/)
      .filter((p) => p.length >= 3)) {
      expect(left).not.toContain(piece);
    }
    // The text around the value is kept as written.
    expect(out.startsWith(text.slice(0, f.start))).toBe(true);
    expect(out.endsWith(text.slice(f.end))).toBe(true);
  });
});

describe('the folded view', () => {
  it('maps spans back to the input, invisible characters inside the span included, outside excluded', () => {
    const text = `a ${ZWSP}4111${ZWSP}1111${ZWSP}1111${ZWSP}1111${ZWSP} b`;
    const [f] = redact(text).findings;
    expect(text.slice(f!.start, f!.end)).toBe(`4111${ZWSP}1111${ZWSP}1111${ZWSP}1111`);
  });

  it('is the text itself when nothing needs folding, and folds each form to one character', () => {
    const plain = 'jane.doe@example.com 4111 1111';
    expect(normalizedView(plain).text).toBe(plain);
    const view = normalizedView(`x${NBSP}y${EN}z${ZWSP}１＠%40%2b`);
    expect(view.text).toBe('x y-z1@@+');
    expect(view.spanToOriginal(6, 8)).toEqual({ start: 7, end: 11 });
  });

  it('counts margins in characters of the view (invisible padding cannot push a value out of the window)', () => {
    const padded = `${ZWSP.repeat(10)}ab${ZWSP.repeat(10)}`;
    expect(visibleBefore(padded, padded.length, 2)).toBe(10);
    expect(visibleAfter(padded, 0, 2)).toBe(12);
    expect(visibleBefore('x%40y', 5, 2)).toBe(1);
  });

  it('does not fold what is not a value: percent signs, ordinary dashes in prose stay', () => {
    expect(redact('50% off — see page 12–14, 100%25 sure').findings).toEqual([]);
  });
});

describe('a value split across two lines by two inserts (through vault.run)', () => {
  let vault: Vault | undefined;
  afterEach(async () => {
    await vault?.close();
    vault = undefined;
  });

  it.each([
    ['card', 'card 4111 1111', '1111 1111'],
    ['IBAN', 'IBAN DE89 3704 0044', '0532 0130 00'],
  ])('%s', async (_kind, first, second) => {
    const store = new MemoryStore();
    vault = await createVault({ store, encryption: false });
    await vault.run('u', { command: 'create', path: '/memories/a.md', file_text: '# notes\n' });
    await vault.run('u', { command: 'insert', path: '/memories/a.md', insert_line: 1, insert_text: `${first}\n` });
    await vault.run('u', { command: 'insert', path: '/memories/a.md', insert_line: 2, insert_text: `${second}\n` });
    const body = Buffer.from((await store.get([...store.keys()][0]!))!.body).toString('utf8');
    expect(body).toContain('[REDACTED:');
    expect(body).not.toContain(second);
  });
});
