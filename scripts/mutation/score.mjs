/**
 * Scores per mutation target, read from the target's incremental file (a full mutation-testing
 * report), with the target's listed equivalent mutants counted apart.
 */
import { createHash } from 'node:crypto';
import { existsSync, globSync, readFileSync } from 'node:fs';
import { incrementalFileOf } from './targets.mjs';

export function readReport(target) {
  const file = incrementalFileOf(target.name);
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8'));
}

function isListedEquivalent(target, file, mutant) {
  return target.equivalent.some(
    (e) =>
      e.file === file &&
      e.line === mutant.location.start.line &&
      (e.column === undefined || e.column === mutant.location.start.column) &&
      e.mutator === mutant.mutatorName &&
      (e.replacement === undefined || e.replacement === mutant.replacement),
  );
}

/** Counts as Stryker defines them; the score is detected / (detected + undetected), in percent. */
export function scoreOf(target, report) {
  const counts = { mutants: 0, killed: 0, survived: 0, timeout: 0, noCoverage: 0, equivalent: 0, errors: 0, ignored: 0 };
  const survivors = [];
  for (const [file, entry] of Object.entries(report.files)) {
    for (const mutant of entry.mutants) {
      counts.mutants += 1;
      const undetected = mutant.status === 'Survived' || mutant.status === 'NoCoverage';
      if (undetected && isListedEquivalent(target, file, mutant)) counts.equivalent += 1;
      else if (mutant.status === 'Killed') counts.killed += 1;
      else if (mutant.status === 'Timeout') counts.timeout += 1;
      else if (mutant.status === 'Survived') counts.survived += 1;
      else if (mutant.status === 'NoCoverage') counts.noCoverage += 1;
      else if (mutant.status === 'Ignored') counts.ignored += 1;
      else counts.errors += 1; // CompileError, RuntimeError: invalid mutants, not counted
      if (undetected && !isListedEquivalent(target, file, mutant)) {
        survivors.push(
          `${file}:${mutant.location.start.line}:${mutant.location.start.column} ${mutant.mutatorName} ${JSON.stringify(mutant.replacement ?? '')} (${mutant.status})`,
        );
      }
    }
  }
  const detected = counts.killed + counts.timeout;
  const valid = detected + counts.survived + counts.noCoverage;
  const score = valid === 0 ? 0 : (100 * detected) / valid;
  return { ...counts, score, survivors };
}

const sha = (text) => createHash('sha256').update(text).digest('hex');

/**
 * What the committed report does not cover: a mutated file or a covering test file whose content
 * differs from the source recorded in the report, or that the report lacks. Empty: the report is
 * the result for the current code.
 */
export function staleFiles(target, report) {
  if (!report) return ['(no report)'];
  const stale = [];
  const sources = globSync(target.mutate).sort();
  for (const file of sources) {
    const recorded = report.files[file]?.source;
    if (recorded === undefined || sha(recorded) !== sha(readFileSync(file, 'utf8'))) stale.push(file);
  }
  for (const file of Object.keys(report.files)) if (!sources.includes(file)) stale.push(`${file} (gone)`);
  const tests = globSync(target.tests).sort();
  const recordedTests = report.testFiles ?? {};
  for (const file of tests) {
    const recorded = recordedTests[file]?.source;
    if (recorded === undefined || sha(recorded) !== sha(readFileSync(file, 'utf8'))) stale.push(file);
  }
  return stale;
}

export function formatTable(rows) {
  const header = ['module', 'threshold', 'score', 'mutants', 'killed', 'survived', 'timeout', 'no-cov', 'equiv', 'invalid'];
  const lines = rows.map((r) =>
    r.missing
      ? [r.name, `${r.threshold}%`, 'no report', '', '', '', '', '', '', '']
      : [r.name, `${r.threshold}%`, `${r.score.toFixed(2)}%`, r.mutants, r.killed, r.survived, r.timeout, r.noCoverage, r.equivalent, r.errors + r.ignored].map(
          String,
        ),
  );
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => String(l[i]).length)));
  const fmt = (cells) => cells.map((c, i) => String(c).padEnd(widths[i])).join('  ');
  return [fmt(header), fmt(widths.map((w) => '-'.repeat(w))), ...lines.map(fmt)].join('\n');
}
