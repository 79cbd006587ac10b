#!/usr/bin/env node
/**
 * npm run mutation:check [-- <target>...]
 *
 * Fails (exit 1) when a target has no report, its report does not cover the current code (a
 * mutated file or a covering test changed since: run `npm run mutation` and commit the reports),
 * or its score is below the target's threshold. Prints the score per module and the survivors.
 * Reads only the committed reports (no Stryker run); needs Node >= 22 for fs.globSync, found as for
 * npm run mutation.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureNode22 } from './node.mjs';

process.chdir(resolve(dirname(fileURLToPath(import.meta.url)), '../..'));
ensureNode22(fileURLToPath(import.meta.url), process.argv.slice(2));
const { formatTable, readReport, scoreOf, staleFiles } = await import('./score.mjs');
const { targetByName, targets } = await import('./targets.mjs');
const names = process.argv.slice(2);
const selected = names.length > 0 ? names.map(targetByName) : targets;

const problems = [];
const rows = [];
for (const target of selected) {
  const report = readReport(target);
  if (!report) {
    rows.push({ name: target.name, threshold: target.threshold, missing: true });
    problems.push(`${target.name}: no report (run npm run mutation -- ${target.name})`);
    continue;
  }
  const score = scoreOf(target, report);
  rows.push({ name: target.name, threshold: target.threshold, ...score });
  const stale = staleFiles(target, report);
  if (stale.length > 0) problems.push(`${target.name}: the report does not cover the current ${stale.join(', ')}`);
  if (score.score < target.threshold) {
    problems.push(
      `${target.name}: score ${score.score.toFixed(2)}% is below its threshold ${target.threshold}%; survivors:\n    ${score.survivors.join('\n    ')}`,
    );
  }
}
console.log(formatTable(rows));
if (problems.length > 0) {
  console.error(`\nmutation check failed:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log('\nmutation check passed');
