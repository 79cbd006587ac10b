/**
 * Scoring a detector against the labelled corpus.
 *
 * Matching rule: a predicted span matches a labelled span when the types are equal and their
 * overlap covers at least half of EACH span (overlap >= 0.5 * max(len_gold, len_pred)). So a
 * prediction that is a bit wider or narrower (a trailing dot, a bracket) still counts, but one that
 * swallows a whole line or catches only a fragment does not. Matching is one-to-one, greedy by
 * overlap. A labelled span with no match is a false negative for its type; a prediction with no
 * match is a false positive for its type (so a type confusion costs both).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PiiFinding, PiiType } from '../../../src/pii/types.js';
import { PII_TYPES } from '../../../src/pii/types.js';
import type { CorpusNote, LabelledSpan } from './generate.js';

export function loadCorpus(): CorpusNote[] {
  const file = join(dirname(fileURLToPath(import.meta.url)), 'notes.jsonl');
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as CorpusNote);
}

export function spansMatch(gold: LabelledSpan, pred: PiiFinding): boolean {
  if (gold.type !== pred.type) return false;
  const overlap = Math.min(gold.end, pred.end) - Math.max(gold.start, pred.start);
  return overlap > 0 && overlap >= 0.5 * Math.max(gold.end - gold.start, pred.end - pred.start);
}

export interface TypeScore {
  tp: number;
  fp: number;
  fn: number;
  precision: number;
  recall: number;
  f1: number;
}

export interface Miss {
  noteId: string;
  kind: 'fn' | 'fp';
  type: PiiType;
  value: string;
  context: string;
}

export interface CorpusScore {
  perType: Record<PiiType, TypeScore>;
  overall: TypeScore;
  misses: Miss[];
}

function finish(tp: number, fp: number, fn: number): TypeScore {
  const precision = tp + fp === 0 ? 1 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 1 : tp / (tp + fn);
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { tp, fp, fn, precision, recall, f1 };
}

export function scoreCorpus(notes: readonly CorpusNote[], detect: (text: string) => PiiFinding[]): CorpusScore {
  const counts = Object.fromEntries(PII_TYPES.map((t) => [t, { tp: 0, fp: 0, fn: 0 }])) as Record<
    PiiType,
    { tp: number; fp: number; fn: number }
  >;
  const misses: Miss[] = [];
  for (const note of notes) {
    const preds = detect(note.text);
    const usedPred = new Set<number>();
    const ctx = (s: number, e: number) =>
      note.text.slice(Math.max(0, s - 30), Math.min(note.text.length, e + 30)).replace(/\n/g, '⏎');
    for (const gold of note.spans) {
      let best = -1;
      let bestOverlap = 0;
      preds.forEach((p, i) => {
        if (usedPred.has(i) || !spansMatch(gold, p)) return;
        const overlap = Math.min(gold.end, p.end) - Math.max(gold.start, p.start);
        if (overlap > bestOverlap) {
          best = i;
          bestOverlap = overlap;
        }
      });
      if (best >= 0) {
        usedPred.add(best);
        counts[gold.type].tp++;
      } else {
        counts[gold.type].fn++;
        misses.push({
          noteId: note.id,
          kind: 'fn',
          type: gold.type,
          value: note.text.slice(gold.start, gold.end),
          context: ctx(gold.start, gold.end),
        });
      }
    }
    preds.forEach((p, i) => {
      if (usedPred.has(i)) return;
      counts[p.type].fp++;
      misses.push({
        noteId: note.id,
        kind: 'fp',
        type: p.type,
        value: note.text.slice(p.start, p.end),
        context: ctx(p.start, p.end),
      });
    });
  }
  const perType = Object.fromEntries(
    PII_TYPES.map((t) => [t, finish(counts[t].tp, counts[t].fp, counts[t].fn)]),
  ) as Record<PiiType, TypeScore>;
  const sum = (k: 'tp' | 'fp' | 'fn') => PII_TYPES.reduce((acc, t) => acc + counts[t][k], 0);
  return { perType, overall: finish(sum('tp'), sum('fp'), sum('fn')), misses };
}
