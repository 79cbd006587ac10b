/**
 * PII redactor bench: accuracy on the labelled corpora and speed.
 *
 *   npx tsx bench/pii.ts
 *
 * Prints precision / recall / F1 per type and overall (matching rule in test/pii/corpus/score.ts),
 * throughput on ordinary note text in MB/s with a same-run baseline (one /\w+/g pass over the same
 * text) so the ratio can be compared across machines, the median cost of one 4 KiB note, and the
 * time for each 1 MB adversarial input; precision and recall per source and type on public test
 * data of other projects (test/pii/public), the redactor's cost of one edit (redactEdit: the file
 * after the edit, scanned around the change) and of a command's path (its segments, with and without
 * the memo of clean ones), and how many values survive base64 / percent-encoding.
 */
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { phoneParseStats } from '../src/pii/detectors/phone.js';
import { validSsnParts } from '../src/pii/detectors/ssn.js';
import { cleanSegmentsMemo, scopedSegments } from '../src/pii/clean-segments.js';
import { redactEdit, redactPathValues } from '../src/pii/edit.js';
import { detectAll } from '../src/pii/engine.js';
import { redact } from '../src/pii/index.js';
import { PII_TYPES } from '../src/pii/types.js';
import { ADVERSARIAL_INPUTS } from '../test/pii/adversarial.js';
import { loadHandwritten } from '../test/pii/corpus/handwritten.js';
import { loadCorpus, scoreCorpus, type CorpusScore } from '../test/pii/corpus/score.js';
import {
  libphonenumberSamples,
  loadExcludedSamples,
  loadPublicSamples,
  scorePublic,
  totals,
  type Tally,
} from '../test/pii/public/score.js';
import { median } from './stats.js';

const fmt = (n: number) => n.toFixed(3);

/**
 * CPU µs per call of each variant, measured in interleaved blocks (each variant's block in turn,
 * `rounds` times, after one untimed round), so that all see the same machine load: the medians.
 */
function interleavedCpu(variants: Array<(i: number) => unknown>, block: number, rounds: number): number[] {
  const samples = variants.map(() => [] as number[]);
  for (let round = 0; round <= rounds; round++) {
    variants.forEach((run, v) => {
      const c0 = process.cpuUsage();
      for (let i = 0; i < block; i++) run(i);
      const c = process.cpuUsage(c0);
      if (round > 0) samples[v]!.push((c.user + c.system) / block);
    });
  }
  return samples.map(median);
}

// PII_BASELINE_DIR=<dir holding an older src/pii> (e.g. `git archive <ref> src/pii | tar -x -C <dir>`, with a
// node_modules link) also measures that code's edit cost in the same run, for a before/after on one machine state.
const baselineDir = process.env.PII_BASELINE_DIR;
const baselineEdit: typeof redactEdit | undefined =
  baselineDir === undefined
    ? undefined
    : (
        (await import(pathToFileURL(join(resolve(baselineDir), 'src/pii/edit.ts')).href)) as {
          redactEdit: typeof redactEdit;
        }
      ).redactEdit;

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
printScores(
  `Generated corpus: ${corpus.length} notes`,
  scoreCorpus(corpus, (t) => redact(t).findings),
);
printScores(
  `Hand-written notes: ${handwritten.length} notes`,
  scoreCorpus(handwritten, (t) => redact(t).findings),
);

// ---- Public test data of other projects (sources and licences: test/pii/public/samples.jsonl) ----
{
  const samples = [...loadPublicSamples(), ...libphonenumberSamples()];
  // Presidio's IP tests label every well-formed address (loopback, documentation ranges too);
  // the default reports only addresses that identify a host, so those samples are scored in the
  // mode that matches their labelling (ipAddresses: 'all'), and in the default, shown apart.
  const allIps = (s: { source: string; type: string }) => s.source === 'presidio' && s.type === 'IP_ADDRESS';
  const main = scorePublic(samples, (t) => redact(t).findings);
  const presidioAll = scorePublic(samples.filter(allIps), (t) => redact(t, { ipAddresses: 'all' }).findings);
  main.bySource
    .get('presidio')
    ?.set('IP_ADDRESS', presidioAll.bySource.get('presidio')?.get('IP_ADDRESS') ?? { tp: 0, fp: 0, fn: 0 });
  const presidioDefault = scorePublic(samples.filter(allIps), (t) => redact(t).findings)
    .bySource.get('presidio')
    ?.get('IP_ADDRESS');
  console.log(`\nPublic test data: ${samples.length} samples (only findings of each sample's type are judged)`);
  console.log('source                        type          gold   tp   fp   fn  precision  recall');
  const perType = new Map<string, Tally[]>();
  const all: Tally[] = [];
  for (const [source, types] of main.bySource) {
    for (const type of PII_TYPES) {
      const t = types.get(type);
      if (t === undefined) continue;
      const s2 = totals([t]);
      console.log(
        `${source.padEnd(29)} ${type.padEnd(12)} ${String(t.tp + t.fn).padStart(5)} ${String(t.tp).padStart(4)} ${String(t.fp).padStart(4)} ${String(t.fn).padStart(4)}   ${fmt(s2.precision)}      ${fmt(s2.recall)}`,
      );
      perType.set(type, [...(perType.get(type) ?? []), t]);
      all.push(t);
    }
  }
  if (presidioDefault) {
    const d = totals([presidioDefault]);
    console.log(
      `  (presidio IP_ADDRESS with the default ipAddresses 'host': recall ${fmt(d.recall)}; the misses are loopback, unspecified, documentation and multicast addresses)`,
    );
  }
  console.log('all public sources, per type:');
  for (const [type, tallies] of perType) {
    const t = totals(tallies);
    console.log(
      `  ${type.padEnd(12)} precision ${fmt(t.precision)}  recall ${fmt(t.recall)}  (tp ${t.tp}, fp ${t.fp}, fn ${t.fn})`,
    );
  }
  const o = totals(all);
  console.log(
    `  OVERALL      precision ${fmt(o.precision)}  recall ${fmt(o.recall)}  (tp ${o.tp}, fp ${o.fp}, fn ${o.fn})`,
  );
  const shown = main.misses.filter((x) => !allIps(x));
  for (const m of shown.filter((x) => x.kind === 'fn'))
    console.log(`  FN ${m.source} ${m.type} ${m.ref}: ${JSON.stringify(m.text.slice(0, 90))}`);
  for (const m of shown.filter((x) => x.kind === 'fp').slice(0, 30))
    console.log(`  FP ${m.source} ${m.type} ${m.ref}: ${JSON.stringify(m.text.slice(0, 90))}`);
  console.log("  not scored (not a value of their type by the issue's definitions; reason in samples.jsonl):");
  for (const s of loadExcludedSamples())
    console.log(`    ${s.source} ${s.type} ${s.ref}: ${JSON.stringify(s.text.slice(0, 60))}: ${s.excluded}`);
}

// ---- SSNs without a context word: what a looser rule would add on text that holds no SSN ----
{
  // Every text of the corpora and the public samples; the labelled SSNs are taken out first.
  const texts: Array<{ text: string; spans: Array<{ type: string; start: number; end: number }> }> = [
    ...[...corpus, ...handwritten].map((n) => ({ text: n.text, spans: n.spans })),
    ...[...loadPublicSamples(), ...libphonenumberSamples()].map((s) => ({
      text: s.text,
      // A sample that gives a count, not positions, has its whole text taken as its type's values.
      spans: (s.spans ?? ((s.count ?? 0) > 0 ? [[0, s.text.length] as const] : [])).map(([start, end]) => ({
        type: s.type,
        start,
        end,
      })),
    })),
  ];
  const bare = /(?<![\w.\-/:,+])(\d{3})(\d{2})(\d{4})(?![\w]|[.\-/:,]\d)/g;
  let candidates = 0;
  let otherType = 0;
  let grouped = 0;
  let groupedOther = 0;
  // This round's rules, apart: XXXXX-XXXX without an SSN word, and addresses with "at"/"dot" spelt out.
  let zipShaped = 0;
  let zipShapedOther = 0;
  let spelt = 0;
  let speltOther = 0;
  const speltShown: string[] = [];
  for (const { text, spans } of texts) {
    const ssnSpans = spans.filter((g) => g.type === 'US_SSN');
    const overlapsSsn = (a: number, b: number) => ssnSpans.some((g) => a < g.end && b > g.start);
    const other = (a: number, b: number) => spans.some((g) => g.type !== 'US_SSN' && a < g.end && b > g.start);
    bare.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = bare.exec(text)) !== null) {
      if (!validSsnParts(m[1] ?? '', m[2] ?? '', m[3] ?? '') || overlapsSsn(m.index, m.index + 9)) continue;
      candidates++;
      if (other(m.index, m.index + 9)) otherType++;
    }
    for (const f of detectAll(text).filter((c) => c.type === 'US_SSN')) {
      const value = text.slice(f.start, f.end);
      if (/^\d{3}-\d{2}-\d{4}$/.test(value) || overlapsSsn(f.start, f.end)) continue;
      grouped++;
      if (other(f.start, f.end)) groupedOther++;
      if (/^\d{5}-\d{4}$/.test(value)) {
        zipShaped++;
        if (other(f.start, f.end)) zipShapedOther++;
      }
    }
    const emailSpans = spans.filter((g) => g.type === 'EMAIL');
    for (const f of detectAll(text).filter((c) => c.type === 'EMAIL')) {
      const value = text.slice(f.start, f.end);
      if (value.includes('@') || emailSpans.some((g) => f.start < g.end && f.end > g.start)) continue;
      spelt++;
      if (other(f.start, f.end)) speltOther++;
      if (speltShown.length < 10) speltShown.push(value);
    }
  }
  console.log(`\nSSN rules on ${texts.length} texts (labelled SSNs excluded), findings that are not SSNs:`);
  console.log(
    `  every form but XXX-XX-XXXX (spaced, dotted, bare, XXX-XXXXXX) as the rules in use report it (detectAll, before overlaps): ${grouped} (${groupedOther} of them labelled as another type)`,
  );
  console.log(
    `  nine bare digits with valid SSA ranges and no exclusion at all (the naive rule): ${candidates} (${otherType} of them labelled as another type; every one a false alarm)`,
  );
  console.log(
    `  of the rules in use, XXXXX-XXXX without an SSN word (not after a state code, a postal, phone or identifier word): ${zipShaped} (${zipShapedOther} labelled as another type)`,
  );
  console.log(
    `E-mail addresses with "at"/"dot" spelt out on the same texts (labelled e-mails excluded): ${spelt} (${speltOther} labelled as another type)${speltShown.length > 0 ? `: ${speltShown.map((v) => JSON.stringify(v)).join(', ')}` : ''}`,
  );
}

// ---- Encoded values: what survives base64 and percent-encoding ----
{
  const values = [...handwritten, ...corpus].flatMap((n) =>
    n.spans.map((s) => ({ type: s.type, value: n.text.slice(s.start, s.end) })),
  );
  const rate = (encode: (v: string) => string) => {
    let found = 0;
    for (const { value } of values) if (redact(`data: ${encode(value)} end`).findings.length > 0) found++;
    return `${found}/${values.length} (${((100 * found) / values.length).toFixed(1)}%)`;
  };
  console.log('\nEncoded values (every labelled value of the two corpora, encoded, after "data: "): still found');
  console.log(`  as written          ${rate((v) => v)}`);
  console.log(
    `  percent-encoded     ${rate((v) => encodeURIComponent(v))}   (%40 %2B %20 %2D %2E are decoded in the folded view)`,
  );
  console.log(
    `  base64              ${rate((v) => Buffer.from(v).toString('base64'))}   (not decoded: see docs/pii.md)`,
  );
}

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

console.log(
  '\nThroughput (median of 9 runs; MB/s by wall time and by CPU time; baseline = one /\\w+/g pass over the same text)',
);
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
  console.log(
    `  ${label}: ${mb.toFixed(2)} MB, ${(findings / (mb * 1000)).toFixed(2)} findings/KB, ${(parses / mb).toFixed(0)} phone parses/MB`,
  );
  console.log(`    redact   ${rate(r.wall).padStart(6)} MB/s wall  ${rate(r.cpu).padStart(6)} MB/s cpu`);
  console.log(
    `    baseline ${rate(b.wall).padStart(6)} MB/s wall  ${rate(b.cpu).padStart(6)} MB/s cpu   (redact/baseline cpu ratio ${(r.cpu / b.cpu).toFixed(1)}x)`,
  );
}

// One 4 KiB note cut from each text at a line boundary.
for (const [label, text] of texts) {
  let note = text.slice(0, 4096);
  note = note.slice(0, note.lastIndexOf('\n') + 1).padEnd(4096, ' ');
  const noteFindings = redact(note).findings.length;
  for (let i = 0; i < 500; i++) redact(note);
  const noteMs = time(() => redact(note), 3000);
  console.log(
    `  one 4 KiB note, ${label} (${noteFindings} findings): median ${(noteMs.wall * 1000).toFixed(0)} µs wall over 3000 runs`,
  );
}

// The redactor's cost of one edit: a line replaced in a 4 KiB note, and in a 1 MiB file (the window);
// the same note with its blank lines taken out (the scan is bounded by line breaks, not paragraphs).
for (const [label, size, flat] of [
  ['4 KiB note', 4096, false],
  ['4 KiB note without blank lines', 4096, true],
  ['1 MiB file', 1024 * 1024, false],
] as const) {
  let before = texts[0]![1].slice(0, size);
  before = before.slice(0, before.lastIndexOf('\n') + 1);
  if (flat) before = before.replace(/\n\n+/g, '\n');
  const mid = before.indexOf('\n', Math.floor(before.length / 2)) + 1;
  const lineEnd = before.indexOf('\n', mid);
  const after = `${before.slice(0, mid)}Call Jane back about the quote on Tuesday.${before.slice(lineEnd)}`;
  for (let i = 0; i < 200; i++) redactEdit(before, after);
  const runs = size > 100_000 ? 50 : 3000;
  const t = time(() => redactEdit(before, after), runs);
  // Same-run baseline: one /\w+/g pass over the file after the edit (the cheapest full read of it).
  const b = time(() => {
    const re = /\w+/g;
    let count = 0;
    while (re.exec(after) !== null) count++;
    if (count < 0) throw new Error('unreachable');
  }, runs);
  console.log(
    `  one str_replace in a ${label}: redactor ${(t.wall * 1000).toFixed(0)} µs wall, ${(t.cpu * 1000).toFixed(0)} µs cpu (median of ${runs}; one /\\w+/g pass over the file ${(b.cpu * 1000).toFixed(0)} µs cpu, ratio ${(t.cpu / b.cpu).toFixed(1)}x)`,
  );
  if (baselineEdit !== undefined) {
    // Interleaved: blocks of each in turn, so both see the same machine load; medians of the blocks.
    for (let i = 0; i < 200; i++) baselineEdit(before, after);
    const block = Math.max(1, Math.floor(runs / 30));
    const [m, o] = interleavedCpu([() => redactEdit(before, after), () => baselineEdit(before, after)], block, 30) as [
      number,
      number,
    ];
    console.log(
      `    interleaved with the baseline code (${baselineDir}), 30 blocks of ${block}: this code ${m.toFixed(0)} µs cpu, baseline ${o.toFixed(0)} µs cpu (${(m / o).toFixed(2)}x)`,
    );
  }
}

// The redactor's cost of a command's path (every command has one or two): each segment scanned, or
// skipped once found clean (the redactor's memo); interleaved blocks of each, medians of the blocks.
{
  const paths = ['/memories/notes.md', '/memories/projects/memvault/todo.md', '/memories/people/jane.md'];
  const memo = scopedSegments(cleanSegmentsMemo(4096), 'user-1'); // as the redactor keeps them: per user
  const tag = () => '1a2b3c4d';
  const block = 2000;
  const path = (i: number) => paths[i % paths.length]!;
  const [s, r] = interleavedCpu(
    [(i) => redactPathValues(path(i), tag, undefined), (i) => redactPathValues(path(i), tag, undefined, memo)],
    block,
    30,
  ) as [number, number];
  console.log(
    `  one command's path (3 paths in turn): every segment scanned ${s.toFixed(2)} µs cpu, clean segments remembered ${r.toFixed(2)} µs cpu (${(r / s).toFixed(2)}x; medians of 30 interleaved blocks of ${block})`,
  );
}

console.log(
  `  (load average while running: ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} on ${cpus().length} CPUs)`,
);
console.log('\nAdversarial inputs, 1 MB each (median of 3 runs)');
for (const input of ADVERSARIAL_INPUTS) {
  const text = input.make();
  redact(text);
  const ms = time(() => redact(text), 3);
  console.log(
    `  ${input.name.padEnd(26)} ${ms.wall.toFixed(0).padStart(6)} ms wall ${ms.cpu.toFixed(0).padStart(6)} ms cpu  (${redact(text).findings.length} findings)`,
  );
}
