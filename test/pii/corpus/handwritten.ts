/**
 * The hand-written notes (handwritten.txt), labelled inline as ⟦TYPE|value⟧, turned into the same
 * shape as the generated corpus. A separate, smaller check that the detectors are not fitted to
 * the generator's templates.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PiiType } from '../../../src/pii/types.js';
import type { CorpusNote, LabelledSpan } from './generate.js';

const MARK = /⟦([A-Z_]+)\|([\s\S]*?)⟧/g;

export function parseLabelled(source: string, id: string): CorpusNote {
  let text = '';
  const spans: LabelledSpan[] = [];
  let last = 0;
  for (const m of source.matchAll(MARK)) {
    text += source.slice(last, m.index);
    const value = m[2] ?? '';
    spans.push({ type: m[1] as PiiType, start: text.length, end: text.length + value.length });
    text += value;
    last = m.index + m[0].length;
  }
  text += source.slice(last);
  return { id, lang: 'en', format: 'handwritten', text, spans };
}

export function loadHandwritten(): CorpusNote[] {
  const file = join(dirname(fileURLToPath(import.meta.url)), 'handwritten.txt');
  const body = readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => !line.startsWith('#'))
    .join('\n');
  return body
    .split(/^=====\n/m)
    .map((chunk) => chunk.trimEnd())
    .filter((chunk) => chunk.length > 0)
    .map((chunk, i) => parseLabelled(chunk, `h${String(i + 1).padStart(2, '0')}`));
}
