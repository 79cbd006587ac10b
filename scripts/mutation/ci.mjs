#!/usr/bin/env node
/**
 * The CI step of mutation testing (docs/testing.md, "Mutation testing").
 *
 * 1. For each target with a committed report, compare the mutated files and covering tests with the sources recorded in its
 *    committed report (reports/mutation/<target>.json). Targets whose report covers the current code
 *    are skipped, with the reason printed.
 * 2. Run Stryker, incrementally, for the others, within MUTATION_BUDGET_S seconds (default 300: the
 *    rest of CI takes about 17 of its 25 minutes). Past the budget the run is stopped and the step
 *    fails closed: the change is too large to test in CI; run `npm run mutation` locally and commit
 *    the reports.
 * 3. Check every target's score against its threshold (scripts/mutation/check.mjs), printing the
 *    table of every target. A target never scored (no committed report) fails CI (fail closed: a
 *    module without a score has not been shown to have tests that notice a broken check); its first
 *    full run is longer than CI's budget, so it is not run here: run `npm run mutation -- <target>`
 *    and commit its report with the target.
 */
import { spawn, spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureNode22 } from './node.mjs';

const here = dirname(fileURLToPath(import.meta.url));
process.chdir(resolve(here, '../..'));
ensureNode22(fileURLToPath(import.meta.url), process.argv.slice(2));
const { targets } = await import('./targets.mjs');
const { readReport, staleFiles } = await import('./score.mjs');

const budgetSeconds = Number(process.env.MUTATION_BUDGET_S ?? 300);
// A target with no committed report has never been measured: a full run of one takes longer than
// CI's budget, so CI does not start it; the check below fails on it.
const measured = targets.filter((t) => {
  if (readReport(t)) return true;
  console.log(
    `mutation: ${t.name}: not scored, no committed report (run \`npm run mutation -- ${t.name}\` and commit it)`,
  );
  return false;
});
const stale = measured.filter((t) => {
  const files = staleFiles(t, readReport(t));
  console.log(
    files.length === 0
      ? `mutation: ${t.name}: skipped, its committed report covers the current code`
      : `mutation: ${t.name}: to run, changed since its report: ${files.join(', ')}`,
  );
  return files.length > 0;
});

if (stale.length > 0) {
  const started = Date.now();
  const child = spawn(
    process.execPath,
    [resolve(here, 'run.mjs'), ...stale.map((t) => t.name), '--concurrency', process.env.MUTATION_CONCURRENCY ?? '2'],
    {
      stdio: 'inherit',
      detached: true, // its own process group, so that the budget stops Stryker's workers too
    },
  );
  let overBudget = false;
  const timer = setTimeout(() => {
    overBudget = true;
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      /* already gone */
    }
  }, budgetSeconds * 1000);
  const code = await new Promise((done) => child.on('exit', (c, signal) => done(c ?? (signal ? 1 : 0))));
  clearTimeout(timer);
  if (overBudget) {
    console.error(
      `mutation: stopped after ${budgetSeconds} s (the CI budget): the changes to ${stale.map((t) => t.name).join(', ')} need a longer run.\n` +
        'Run `npm run mutation` locally and commit reports/mutation/*.json.',
    );
    process.exit(1);
  }
  if (code !== 0) process.exit(code);
  console.log(`mutation: ran ${stale.map((t) => t.name).join(', ')} in ${Math.round((Date.now() - started) / 1000)} s`);
}

const check = spawnSync(process.execPath, [resolve(here, 'check.mjs')], { stdio: 'inherit' });
process.exit(check.status ?? 1);
