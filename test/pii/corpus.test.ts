import { isValidIBAN } from 'ibantools';
import { describe, expect, it } from 'vitest';
import { redact } from '../../src/pii/index.js';
import { luhnValid } from '../../src/pii/chars.js';
import { knownIssuer } from '../../src/pii/detectors/card.js';
import { generateCorpus } from './corpus/generate.js';
import { loadHandwritten } from './corpus/handwritten.js';
import { loadCorpus, scoreCorpus, spansMatch } from './corpus/score.js';

const corpus = loadCorpus();

describe('the labelled corpus', () => {
  it('is the committed output of the generator (regenerate with npx tsx test/pii/corpus/generate.ts)', () => {
    const regenerated = generateCorpus(corpus.length, 20260601);
    expect(regenerated).toEqual(corpus);
  });

  it('has at least 300 notes in several languages and formats, with every type well represented', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(300);
    expect(new Set(corpus.map((n) => n.lang))).toEqual(new Set(['en', 'de', 'fr', 'es', 'ja']));
    expect(new Set(corpus.map((n) => n.format)).size).toBeGreaterThanOrEqual(8);
    const counts: Record<string, number> = {};
    for (const n of corpus) for (const s of n.spans) counts[s.type] = (counts[s.type] ?? 0) + 1;
    for (const type of ['EMAIL', 'PHONE', 'CREDIT_CARD', 'IBAN', 'US_SSN', 'IP_ADDRESS', 'SECRET']) {
      expect(counts[type], type).toBeGreaterThanOrEqual(30);
    }
  });

  it('labels valid values: card numbers pass Luhn with an issuer prefix, IBANs their checksum', () => {
    for (const note of corpus) {
      for (const s of note.spans) {
        const value = note.text.slice(s.start, s.end);
        if (s.type === 'CREDIT_CARD') {
          const digits = value.replace(/[ -]/g, '');
          expect(luhnValid(digits) && knownIssuer(digits), value).toBe(true);
        }
        if (s.type === 'IBAN') expect(isValidIBAN(value.replace(/ /g, '')), value).toBe(true);
      }
    }
  });

  it('contains hard negatives: UUIDs, SHAs, timestamps, versions, Luhn-failing 16-digit numbers, URLs', () => {
    const all = corpus.map((n) => n.text).join('\n');
    expect(all).toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/);
    expect(all).toMatch(/\b[0-9a-f]{40}\b/);
    expect(all).toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/);
    expect(all).toMatch(/v\d+\.\d+\.\d+\.\d+/);
    expect(all).toMatch(/https:\/\/docs\.example\.com/);
    const luhnFailing =
      all.match(/\b[45]\d{3}[ -]?\d{4}[ -]?\d{4}[ -]?\d{4}\b/g)?.filter((m) => !luhnValid(m.replace(/\D/g, ''))) ?? [];
    expect(luhnFailing.length).toBeGreaterThanOrEqual(20);
  });
});

describe('the matching rule', () => {
  const gold = { type: 'EMAIL' as const, start: 10, end: 30 };
  it('accepts a slightly wider or narrower span of the same type', () => {
    expect(spansMatch(gold, { type: 'EMAIL', start: 9, end: 30 })).toBe(true);
    expect(spansMatch(gold, { type: 'EMAIL', start: 12, end: 30 })).toBe(true);
  });
  it('rejects another type, a fragment, or a span swallowing much more', () => {
    expect(spansMatch(gold, { type: 'PHONE', start: 10, end: 30 })).toBe(false);
    expect(spansMatch(gold, { type: 'EMAIL', start: 10, end: 15 })).toBe(false);
    expect(spansMatch(gold, { type: 'EMAIL', start: 0, end: 60 })).toBe(false);
  });
});

describe('scores on the corpus', () => {
  const score = scoreCorpus(corpus, (text) => redact(text).findings);
  const misses = (type: string) => score.misses.filter((m) => m.type === type).slice(0, 10);

  it.each(['EMAIL', 'CREDIT_CARD', 'IBAN', 'US_SSN', 'SECRET'] as const)(
    '%s: recall >= 0.98, precision >= 0.97',
    (type) => {
      const s = score.perType[type];
      expect(s.recall, JSON.stringify(misses(type))).toBeGreaterThanOrEqual(0.98);
      expect(s.precision, JSON.stringify(misses(type))).toBeGreaterThanOrEqual(0.97);
    },
  );

  it.each(['PHONE', 'IP_ADDRESS'] as const)('%s: recall >= 0.95, precision >= 0.95', (type) => {
    const s = score.perType[type];
    expect(s.recall, JSON.stringify(misses(type))).toBeGreaterThanOrEqual(0.95);
    expect(s.precision, JSON.stringify(misses(type))).toBeGreaterThanOrEqual(0.95);
  });

  it('every redacted note keeps none of its labelled values', () => {
    for (const note of corpus) {
      const redacted = redact(note.text).text;
      for (const s of note.spans) {
        const value = note.text.slice(s.start, s.end);
        if (value.length >= 6) expect(redacted.includes(value), `${note.id}: ${value}`).toBe(false);
      }
    }
  });
});

describe('the hand-written notes (not produced by the generator)', () => {
  const notes = loadHandwritten();
  const score = scoreCorpus(notes, (text) => redact(text).findings);

  it('parse into labelled spans whose text is exactly the marked value', () => {
    expect(notes.length).toBeGreaterThanOrEqual(50);
    const first = notes[0]!;
    expect(first.spans.map((s) => first.text.slice(s.start, s.end))).toEqual([
      'dana.whitfield@protonmail.com',
      '+1 (646) 555-0187',
    ]);
    for (const n of notes) expect(n.text).not.toMatch(/[⟦⟧]/);
  });

  it('overall precision and recall stay >= 0.95 on notes the detectors were not generated from', () => {
    expect(score.overall.recall, JSON.stringify(score.misses)).toBeGreaterThanOrEqual(0.95);
    expect(score.overall.precision, JSON.stringify(score.misses)).toBeGreaterThanOrEqual(0.95);
  });
});
