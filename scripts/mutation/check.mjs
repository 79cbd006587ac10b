#!/usr/bin/env node
/**
 * npm run mutation:check [-- <target>...] [--allow-unscored]
 *
 * Fails (exit 1) when a target has no report, its report does not cover the current code (a
 * mutated file or a covering test changed since: run `npm run mutation` and commit the reports),
 * its report names a host path (Stryker's projectRoot, a sandbox path; scripts/mutation/strip.mjs
 * removes them), or its score is below the target's threshold. Prints the score per module and the survivors.
 * --allow-unscored (while a new target's first run is under way): a target that has never been
 * scored (no committed report) is printed as "not scored yet" and named, but does not fail the
 * check. CI does not pass it (scripts/mutation/ci.mjs): there every target needs its report.
 * Reads only the committed reports (no Stryker run); needs Node >= 22 for fs.globSync, found as for
 * npm run mutation.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureNode22 } from './node.mjs';

process.chdir(resolve(dirname(fileURLToPath(import.meta.url)), '../..'));
ensureNode22(fileURLToPath(import.meta.url), process.argv.slice(2));
const { formatTable, hostPathsIn, readReport, scoreOf, staleFiles } = await import('./score.mjs');
const { targetByName, targets } = await import('./targets.mjs');
const args = process.argv.slice(2);
const allowUnscored = args.includes('--allow-unscored');
const names = args.filter((a) => a !== '--allow-unscored');
const selected = names.length > 0 ? names.map(targetByName) : targets;

const problems = [];
const notes = [];
const rows = [];
for (const target of selected) {
  const report = readReport(target);
  if (!report) {
    rows.push({ name: target.name, threshold: target.threshold, missing: true });
    const what = `${target.name}: not scored yet, no committed report (run npm run mutation -- ${target.name} and commit reports/mutation/${target.name}.json)`;
    (allowUnscored ? notes : problems).push(what);
    continue;
  }
  const score = scoreOf(target, report);
  rows.push({ name: target.name, threshold: target.threshold, ...score });
  for (const e of score.unusedEquivalents)
    notes.push(
      `${target.name}: listed as equivalent but matches no surviving mutant (killed, timed out, or its code changed: check it): ${e}`,
    );
  const hostPaths = hostPathsIn(report);
  if (hostPaths.length > 0)
    problems.push(
      `${target.name}: the report names host paths (${hostPaths.join(', ')}): run node scripts/mutation/strip.mjs or rerun the target`,
    );
  const stale = staleFiles(target, report);
  if (stale.length > 0) problems.push(`${target.name}: the report does not cover the current ${stale.join(', ')}`);
  if (score.score < target.threshold) {
    problems.push(
      `${target.name}: score ${score.score.toFixed(2)}% is below its threshold ${target.threshold}%; survivors:\n    ${score.survivors.join('\n    ')}`,
    );
  }
}
console.log(formatTable(rows));
if (notes.length > 0) console.log(`\n${notes.join('\n')}`);
if (problems.length > 0) {
  console.error(`\nmutation check failed:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log('\nmutation check passed');
