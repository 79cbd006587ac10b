#!/usr/bin/env node
/**
 * npm run mutation [-- <target>...] [--concurrency N] [--stale] [--force] [--survivors] [--no-bail]
 *
 * Runs StrykerJS once per target (scripts/mutation/targets.mjs), one after the other, in
 * incremental mode (only mutants whose code or covering tests changed since the committed report
 * are tested again), then prints the score per module. --stale runs only the targets whose
 * committed report does not cover the current code. --force tests every mutant again (Stryker reuses
 * a survivor's result when its old covering tests did not change, even when a new test would kill it).
 * --survivors tests again only the mutants the report records as survived or without coverage (after
 * adding tests: the same answer as --force for a fraction of its time). Exit status: non-zero when a Stryker run failed;
 * thresholds are checked by scripts/mutation/check.mjs (npm run mutation:check).
 */
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureNode22 } from './node.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
process.chdir(root);
ensureNode22(fileURLToPath(import.meta.url), process.argv.slice(2));

const { targets, targetByName } = await import('./targets.mjs');
const { dropSurvivors, formatTable, readReport, scoreOf, staleFiles, stripHostPaths } = await import('./score.mjs');

const args = process.argv.slice(2);
let concurrency = '1';
let onlyStale = false;
let force = false;
let noBail = false;
let survivors = false;
const names = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--concurrency') concurrency = args[++i] ?? '1';
  else if (args[i] === '--stale') onlyStale = true;
  else if (args[i] === '--force') force = true;
  else if (args[i] === '--survivors') survivors = true;
  // Every covering test runs against every mutant (slower): the report then names all the tests that kill it.
  else if (args[i] === '--no-bail') noBail = true;
  else names.push(args[i]);
}
if (Number(concurrency) > 2) {
  console.error('mutation: at most --concurrency 2 (the machine has two cores shared with other work)');
  process.exit(2);
}
let selected = names.length > 0 ? names.map(targetByName) : targets;
if (onlyStale) {
  selected = selected.filter((t) => {
    const stale = staleFiles(t, readReport(t));
    if (stale.length === 0) console.log(`mutation: ${t.name}: the committed report covers the current code, skipped`);
    else console.log(`mutation: ${t.name}: changed since its report: ${stale.join(', ')}`);
    return stale.length > 0;
  });
}

const stryker = resolve('node_modules/@stryker-mutator/core/bin/stryker.js');
const nodeBin = dirname(process.execPath);
let failed = false;
for (const target of selected) {
  console.log(`\nmutation: ${target.name} (${target.mutate.join(', ')})`);
  if (survivors) {
    const dropped = dropSurvivors(target);
    console.log(`mutation: ${target.name}: ${dropped} survived or uncovered mutants to test again`);
  }
  const result = spawnSync(
    process.execPath,
    [stryker, 'run', '--concurrency', concurrency, ...(force ? ['--force'] : []), ...(noBail ? ['--disableBail'] : [])],
    {
      stdio: 'inherit',
      env: {
        ...process.env,
        MUTATION_TARGET: target.name,
        MUTATION_CONCURRENCY: concurrency,
        PATH: `${nodeBin}:${process.env.PATH ?? ''}`,
      },
    },
  );
  // Stryker records the checkout's absolute path (and sandbox paths in error reasons): the committed report must not.
  stripHostPaths(target);
  if (result.status !== 0) {
    console.error(`mutation: Stryker failed for ${target.name} (exit ${result.status ?? result.signal})`);
    failed = true;
  }
}

const rows = selected.map((t) => {
  const report = readReport(t);
  return report
    ? { name: t.name, threshold: t.threshold, ...scoreOf(t, report) }
    : { name: t.name, threshold: t.threshold, missing: true };
});
if (rows.length > 0) console.log(`\n${formatTable(rows)}`);
process.exit(failed ? 1 : 0);
