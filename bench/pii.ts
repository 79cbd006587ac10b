/**
 * PII redactor bench: accuracy on the labelled corpora and speed.
 *
 *   npx tsx bench/pii.ts
 *
 * Prints precision / recall / F1 per type and overall (matching rule in test/pii/corpus/score.ts),
 * throughput on ordinary note text in MB/s with a same-run baseline (one /\w+/g pass over the same
 * text) so the ratio can be compared across machines, the median cost of one 4 KiB note, and the
 * time for each 1 MB adversarial input.
 */
import { cpus, loadavg } from 'node:os';
import { phoneParseStats } from '../src/pii/detectors/phone.js';
import { redact } from '../src/pii/index.js';
import { PII_TYPES } from '../src/pii/types.js';
import { ADVERSARIAL_INPUTS } from '../test/pii/adversarial.js';
import { loadHandwritten } from '../test/pii/corpus/handwritten.js';
import { loadCorpus, scoreCorpus, type CorpusScore } from '../test/pii/corpus/score.js';
import { median } from './stats.js';

const fmt = (n: number) => n.toFixed(3);

function printScores(title: string, score: CorpusScore): void {
  console.log(`\n${title}`);
  console.log('type          gold  tp   fp   fn   precision  recall  F1');
  const row = (name: string, s: CorpusScore['overall']) =>
    console.log(
      `${name.padEnd(12)} ${String(s.tp + s.fn).padStart(5)} ${String(s.tp).padStart(4)} ${String(s.fp).padStart(4)} ${String(s.fn).padStart(4)}   ${fmt(s.precision)}      ${fmt(s.recall)}   ${fmt(s.f1)}`,
    );
  for (const type of PII_TYPES) row(type, score.perType[type]);
  row('OVERALL', score.overall);
  const misses = score.misses.slice(0, 8);
  for (const m of misses) console.log(`  ${m.kind.toUpperCase()} ${m.type} ${m.noteId}: …${m.context}…`);
}


/**
 * Median over `runs` of the wall time and of the process CPU time of fn, in ms. CPU time is the
 * steadier figure on a shared machine (others' load stretches wall time, not our CPU time).
 */
function time(fn: () => void, runs: number): { wall: number; cpu: number } {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    fn();
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  return { wall: median(wall), cpu: median(cpu) };
}

const corpus = loadCorpus();
const handwritten = loadHandwritten();
printScores(`Generated corpus: ${corpus.length} notes`, scoreCorpus(corpus, (t) => redact(t).findings));
printScores(`Hand-written notes: ${handwritten.length} notes`, scoreCorpus(handwritten, (t) => redact(t).findings));

/**
 * Two texts, ~2 MB each, built from the notes (repeated):
 * - "ordinary": every line of every note that carries no labelled item, plus one PII-carrying line
 *   in twenty: realistic formats and hard negatives, about one item per KB;
 * - "PII-dense": the notes as they are (the corpus packs about one item per 100 characters).
 */
const allNotes = [...handwritten, ...corpus];
let piiLine = 0;
const ordinaryNotes = allNotes.map((n) => {
  const kept: string[] = [];
  let offset = 0;
  for (const line of n.text.split('\n')) {
    const end = offset + line.length;
    const carriesPii = n.spans.some((s) => s.start < end && s.end > offset);
    if (!carriesPii || piiLine++ % 20 === 0) kept.push(line);
    offset = end + 1;
  }
  return kept.join('\n');
});
const repeatTo = (unit: string, size: number) => unit.repeat(Math.ceil(size / unit.length));
const texts: Array<[string, string]> = [
  ['ordinary notes', repeatTo(ordinaryNotes.join('\n\n') + '\n\n', 2_000_000)],
  ['PII-dense corpus', repeatTo(allNotes.map((n) => n.text).join('\n\n') + '\n\n', 2_000_000)],
];

console.log('\nThroughput (median of 9 runs; MB/s by wall time and by CPU time; baseline = one /\\w+/g pass over the same text)');
for (const [label, text] of texts) {
  const mb = Buffer.byteLength(text, 'utf8') / 1e6;
  for (let i = 0; i < 5; i++) redact(text); // warm up the JIT and libphonenumber's metadata
  const findings = redact(text).findings.length;
  phoneParseStats.parses = 0;
  redact(text);
  const parses = phoneParseStats.parses;
  const r = time(() => redact(text), 9);
  const b = time(() => {
    const re = /\w+/g;
    let count = 0;
    while (re.exec(text) !== null) count++;
    if (count < 0) throw new Error('unreachable');
  }, 9);
  const rate = (ms: number) => (mb / (ms / 1000)).toFixed(1);
  console.log(`  ${label}: ${mb.toFixed(2)} MB, ${(findings / (mb * 1000)).toFixed(2)} findings/KB, ${(parses / mb).toFixed(0)} phone parses/MB`);
  console.log(`    redact   ${rate(r.wall).padStart(6)} MB/s wall  ${rate(r.cpu).padStart(6)} MB/s cpu`);
  console.log(`    baseline ${rate(b.wall).padStart(6)} MB/s wall  ${rate(b.cpu).padStart(6)} MB/s cpu   (redact/baseline cpu ratio ${(r.cpu / b.cpu).toFixed(1)}x)`);
}

// One 4 KiB note cut from each text at a line boundary.
for (const [label, text] of texts) {
  let note = text.slice(0, 4096);
  note = note.slice(0, note.lastIndexOf('\n') + 1).padEnd(4096, ' ');
  const noteFindings = redact(note).findings.length;
  for (let i = 0; i < 500; i++) redact(note);
  const noteMs = time(() => redact(note), 3000);
  console.log(`  one 4 KiB note, ${label} (${noteFindings} findings): median ${(noteMs.wall * 1000).toFixed(0)} µs wall over 3000 runs`);
}

console.log(`  (load average while running: ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${cpus().length} CPUs)`);
console.log('\nAdversarial inputs, 1 MB each (median of 3 runs)');
for (const input of ADVERSARIAL_INPUTS) {
  const text = input.make();
  redact(text);
  const ms = time(() => redact(text), 3);
  console.log(`  ${input.name.padEnd(26)} ${ms.wall.toFixed(0).padStart(6)} ms wall ${ms.cpu.toFixed(0).padStart(6)} ms cpu  (${redact(text).findings.length} findings)`);
}
