/**
 * Scores the detectors on public test data from other projects (samples.jsonl, whose header names
 * each source and its licence) and on libphonenumber's example number of every region.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import examples from 'libphonenumber-js/examples.mobile.json';
import { getCountries, getExampleNumber, type CountryCode } from 'libphonenumber-js/max';
import type { PiiFinding, PiiType } from '../../../src/pii/types.js';

export interface PublicSample {
  source: string;
  ref: string;
  type: PiiType;
  text: string;
  /** Every value of `type` in the text; [] for a negative. */
  spans?: Array<[number, number]>;
  /** How many values of `type` the source expects, when it gives no positions. */
  count?: number;
  /** Why the sample is not scored: not a value of its type by the detectors' definitions (docs/pii.md). */
  excluded?: string;
}

function readSamples(): PublicSample[] {
  const file = join(dirname(fileURLToPath(import.meta.url)), 'samples.jsonl');
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0 && !line.startsWith('#'))
    .map((line) => JSON.parse(line) as PublicSample);
}

/** The samples that are scored. */
export function loadPublicSamples(): PublicSample[] {
  return readSamples().filter((s) => s.excluded === undefined);
}

/** The samples kept for the record but not scored, each with its reason. */
export function loadExcludedSamples(): PublicSample[] {
  return readSamples().filter((s) => s.excluded !== undefined);
}

/**
 * libphonenumber's example (mobile) number of every region it knows, written three ways after a
 * phone word: international format, E.164, and the national format (the region is not named: the
 * context says phone, nothing says which country).
 */
export function libphonenumberSamples(): PublicSample[] {
  const out: PublicSample[] = [];
  for (const region of getCountries()) {
    const number = getExampleNumber(region as CountryCode, examples);
    if (number === undefined) continue;
    const forms: Array<[string, string]> = [
      ['Phone: ', number.formatInternational()],
      ['call ', number.number],
      ['tel. ', number.formatNational()],
    ];
    for (const [label, value] of forms) {
      out.push({
        source: `libphonenumber ${label === 'tel. ' ? 'national' : 'international'}`,
        ref: `examples.mobile.json ${region}`,
        type: 'PHONE',
        text: `${label}${value} (mobile)`,
        spans: [[label.length, label.length + value.length]],
      });
    }
  }
  return out;
}

export interface Tally {
  tp: number;
  fp: number;
  fn: number;
}

export interface PublicScore {
  /** source -> type -> tally */
  bySource: Map<string, Map<PiiType, Tally>>;
  misses: Array<{ kind: 'fn' | 'fp'; source: string; type: PiiType; text: string; ref: string }>;
}

/** Only findings of the sample's type are judged; a gold span is found when a finding overlaps it. */
export function scorePublic(samples: readonly PublicSample[], detect: (text: string) => PiiFinding[]): PublicScore {
  const bySource = new Map<string, Map<PiiType, Tally>>();
  const misses: PublicScore['misses'] = [];
  for (const s of samples) {
    const found = detect(s.text).filter((f) => f.type === s.type);
    const perType = bySource.get(s.source) ?? new Map<PiiType, Tally>();
    bySource.set(s.source, perType);
    const t = perType.get(s.type) ?? { tp: 0, fp: 0, fn: 0 };
    perType.set(s.type, t);
    let tp: number;
    let fp = 0;
    let fn: number;
    if (s.spans !== undefined) {
      const matched = new Set<number>();
      for (const f of found) {
        const g = s.spans.findIndex(([a, b], i) => !matched.has(i) && f.start < b && f.end > a);
        if (g === -1) fp++;
        else matched.add(g);
      }
      tp = matched.size;
      fn = s.spans.length - matched.size;
    } else {
      const n = s.count ?? 0;
      tp = Math.min(found.length, n);
      fn = n - tp;
      fp = Math.max(0, found.length - n);
    }
    t.tp += tp;
    t.fp += fp;
    t.fn += fn;
    if (fn > 0) misses.push({ kind: 'fn', source: s.source, type: s.type, text: s.text, ref: s.ref });
    if (fp > 0) misses.push({ kind: 'fp', source: s.source, type: s.type, text: s.text, ref: s.ref });
  }
  return { bySource, misses };
}

export function totals(tallies: Iterable<Tally>): Tally & { precision: number; recall: number } {
  const sum = { tp: 0, fp: 0, fn: 0 };
  for (const t of tallies) {
    sum.tp += t.tp;
    sum.fp += t.fp;
    sum.fn += t.fn;
  }
  return {
    ...sum,
    precision: sum.tp + sum.fp === 0 ? 1 : sum.tp / (sum.tp + sum.fp),
    recall: sum.tp + sum.fn === 0 ? 1 : sum.tp / (sum.tp + sum.fn),
  };
}
