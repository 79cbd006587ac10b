import { describe, expect, it } from 'vitest';
import { PII_TYPES, redact, resolveOverlaps, scan } from '../../src/pii/index.js';
import type { Candidate } from '../../src/pii/index.js';

const NOTE =
  'Ann (ann@example.com, +1 212 555 0199) paid with 4111 1111 1111 1111; token ghp_abcdefghijklmnopqrstuvwxyz0123456789.';

describe('redact', () => {
  it('replaces each finding with [REDACTED:TYPE] and reports offsets into the input', () => {
    const result = redact(NOTE);
    expect(result.text).toBe(
      'Ann ([REDACTED:EMAIL], [REDACTED:PHONE]) paid with [REDACTED:CREDIT_CARD]; token [REDACTED:SECRET].',
    );
    expect(result.findings.map((f) => [f.type, NOTE.slice(f.start, f.end)])).toEqual([
      ['EMAIL', 'ann@example.com'],
      ['PHONE', '+1 212 555 0199'],
      ['CREDIT_CARD', '4111 1111 1111 1111'],
      ['SECRET', 'ghp_abcdefghijklmnopqrstuvwxyz0123456789'],
    ]);
  });

  it('leaves text without findings unchanged (same string)', () => {
    const text = 'Prefers dark mode; release v2.3.1 on 2024-05-01.';
    expect(redact(text)).toEqual({ text, findings: [] });
  });

  it('is idempotent: redacted text has nothing left to find', () => {
    const once = redact(NOTE).text;
    expect(redact(once)).toEqual({ text: once, findings: [] });
  });

  it('keeps offsets right around astral characters and CJK text', () => {
    const text = '😀😀 メール:hanako@example.jp 🎉 電話 03-1234-5678';
    const { findings } = redact(text);
    expect(findings.map((f) => text.slice(f.start, f.end))).toEqual(['hanako@example.jp', '03-1234-5678']);
  });

  it('findings are sorted and never overlap', () => {
    const text = `${NOTE}\nIBAN DE89 3704 0044 0532 0130 00 and 10.0.0.1 and SSN 123-45-6789`;
    const { findings } = redact(text);
    for (let i = 1; i < findings.length; i++) {
      expect(findings[i]!.start).toBeGreaterThanOrEqual(findings[i - 1]!.end);
    }
    expect(new Set(findings.map((f) => f.type))).toEqual(
      new Set(['EMAIL', 'PHONE', 'CREDIT_CARD', 'SECRET', 'IBAN', 'IP_ADDRESS', 'US_SSN']),
    );
  });
});

describe('policy', () => {
  it('reject lists the refused types and still reports findings', () => {
    const result = scan(NOTE, { policy: { EMAIL: 'reject', SECRET: 'reject' } });
    expect(result.rejected).toEqual(['EMAIL', 'SECRET']);
    expect(result.findings).toHaveLength(4);
  });

  it('allow leaves a type in place', () => {
    const result = redact(NOTE, { policy: { PHONE: 'allow', CREDIT_CARD: 'allow' } });
    expect(result.text).toContain('+1 212 555 0199');
    expect(result.text).toContain('4111 1111 1111 1111');
    expect(result.text).not.toContain('ann@example.com');
    expect(result.findings.map((f) => f.type)).toEqual(['EMAIL', 'SECRET']);
  });

  it('no rejection when nothing of a rejected type is present', () => {
    expect(scan('just 10.1.2.3', { policy: { EMAIL: 'reject' } }).rejected).toEqual([]);
  });

  it('allow-list skips known-safe values, case-insensitively and ignoring number formatting', () => {
    const text = 'Support: Help@Example.com or (415) 555-0132; Ann: ann@example.com';
    const result = redact(text, { allowList: ['help@example.com', '415-555-0132'] });
    expect(result.text).toBe('Support: Help@Example.com or (415) 555-0132; Ann: [REDACTED:EMAIL]');
  });

  it('an allow-listed value is not rejected either', () => {
    expect(
      scan('mail help@example.com', { policy: { EMAIL: 'reject' }, allowList: ['help@example.com'] }).rejected,
    ).toEqual([]);
  });

  it('redact replaces types under reject as well (it cannot refuse)', () => {
    expect(redact('mail a@b.io', { policy: { EMAIL: 'reject' } }).text).toBe('mail [REDACTED:EMAIL]');
  });

  it('knows all seven types', () => {
    expect(PII_TYPES).toEqual(['EMAIL', 'PHONE', 'CREDIT_CARD', 'IBAN', 'US_SSN', 'IP_ADDRESS', 'SECRET']);
  });
});

describe('overlap resolution', () => {
  const c = (type: Candidate['type'], start: number, end: number, priority: number): Candidate => ({
    type,
    start,
    end,
    priority,
  });

  it('the more specific detector wins, then the longer span', () => {
    expect(resolveOverlaps([c('PHONE', 0, 16, 40), c('IBAN', 0, 22, 90)])).toEqual([
      { type: 'IBAN', start: 0, end: 22 },
    ]);
    expect(resolveOverlaps([c('SECRET', 5, 10, 30), c('SECRET', 0, 20, 30)])).toEqual([
      { type: 'SECRET', start: 0, end: 20 },
    ]);
  });

  it('keeps disjoint members of a chain of overlaps', () => {
    // A overlaps B, B overlaps C; B is strongest, so neither A nor C survive; D is separate.
    const result = resolveOverlaps([
      c('PHONE', 0, 10, 40),
      c('CREDIT_CARD', 8, 20, 80),
      c('PHONE', 18, 30, 40),
      c('EMAIL', 40, 50, 70),
    ]);
    expect(result).toEqual([
      { type: 'CREDIT_CARD', start: 8, end: 20 },
      { type: 'EMAIL', start: 40, end: 50 },
    ]);
  });

  it('is deterministic whatever the input order', () => {
    const cands = [c('PHONE', 0, 10, 40), c('IP_ADDRESS', 0, 10, 50), c('SECRET', 3, 12, 30), c('EMAIL', 11, 20, 70)];
    const expected = resolveOverlaps(cands);
    expect(resolveOverlaps([...cands].reverse())).toEqual(expected);
    expect(expected).toEqual([
      { type: 'IP_ADDRESS', start: 0, end: 10 },
      { type: 'EMAIL', start: 11, end: 20 },
    ]);
  });

  it('a card inside a secret assignment is reported once, as the more specific type', () => {
    const text = 'token: 4111111111111111';
    expect(redact(text).findings.map((f) => f.type)).toEqual(['CREDIT_CARD']);
  });
});
