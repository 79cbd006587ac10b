/**
 * Floors on public test data of other projects (test/pii/public/samples.jsonl: gitleaks rule
 * examples, Presidio, Phileas and scrubadub recognizer tests, Braintree and Stripe test cards;
 * libphonenumber's example number of every region). bench/pii.ts prints the full table; this keeps the figures from sliding.
 */
import { describe, expect, it } from 'vitest';
import { redact } from '../../src/pii/index.js';
import type { PiiType } from '../../src/pii/types.js';
import { libphonenumberSamples, loadExcludedSamples, loadPublicSamples, scorePublic, totals } from './public/score.js';

const samples = [...loadPublicSamples(), ...libphonenumberSamples()];
// Presidio labels every well-formed IP (loopback and documentation ranges too): scored in the mode that matches.
const score = scorePublic(
  samples,
  (t) =>
    redact(t, {
      ipAddresses: samples.some((s) => s.text === t && s.source === 'presidio' && s.type === 'IP_ADDRESS')
        ? 'all'
        : 'host',
    }).findings,
);

function byType(type: PiiType) {
  return totals([...score.bySource.values()].flatMap((m) => (m.get(type) ? [m.get(type)!] : [])));
}

describe('public test data', () => {
  it('holds every source named in its header, with a few hundred samples or fewer each', () => {
    const counts = new Map<string, number>();
    for (const s of samples) counts.set(s.source, (counts.get(s.source) ?? 0) + 1);
    for (const source of [
      'gitleaks',
      'presidio',
      'braintree',
      'stripe',
      'libphonenumber international',
      'libphonenumber national',
    ]) {
      expect(counts.get(source), source).toBeGreaterThan(20);
    }
    // The second and third sources of SSN (and e-mail) test cases are small.
    for (const source of ['phileas', 'scrubadub']) expect(counts.get(source), source).toBeGreaterThan(4);
  });

  it.each([
    ['CREDIT_CARD', 1, 1],
    ['IBAN', 1, 1],
    ['PHONE', 0.99, 0.97],
    ['IP_ADDRESS', 0.99, 0.97],
    // scrubadub's "john at gmail.com" (an address spelt out) is found: a plain "at" before a mailbox provider's domain.
    ['EMAIL', 1, 1],
    // Presidio's 5-4 grouping ("07805-1121": no state code, postal, phone or identifier word before it) is found.
    ['US_SSN', 1, 1],
    // The two misses are Sonar placeholders (alphabet runs); the false alarms are mostly real-looking keys gitleaks allow-lists by value.
    ['SECRET', 0.86, 0.98],
  ] as const)('%s: precision >= %d, recall >= %d', (type, precision, recall) => {
    const t = byType(type);
    expect(t.precision).toBeGreaterThanOrEqual(precision);
    expect(t.recall).toBeGreaterThanOrEqual(recall);
  });

  it('samples recorded as not of their type each say why, and are not scored', () => {
    const excluded = loadExcludedSamples();
    expect(excluded.length).toBeGreaterThan(0);
    expect(excluded.length).toBeLessThan(10);
    for (const s of excluded) {
      expect(s.excluded!.length, s.ref).toBeGreaterThan(40);
      expect(samples.some((x) => x.text === s.text && x.type === s.type && x.ref === s.ref)).toBe(false);
    }
  });

  it('overall precision >= 0.97', () => {
    const t = totals([...score.bySource.values()].flatMap((m) => [...m.values()]));
    expect(t.precision).toBeGreaterThanOrEqual(0.97);
  });

  it('every card network test number is found in each layout, and none with a broken check digit', () => {
    for (const source of ['braintree', 'stripe']) {
      const t = score.bySource.get(source)!.get('CREDIT_CARD')!;
      expect(t.fn, source).toBe(0);
      expect(t.fp, source).toBe(0);
    }
  });
});
