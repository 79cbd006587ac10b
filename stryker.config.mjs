// StrykerJS configuration for one mutation target (scripts/mutation/targets.mjs), chosen with
// MUTATION_TARGET. Run through `npm run mutation` (scripts/mutation/run.mjs), which loops over the
// targets on Node >= 22 and prints the score per module; see docs/testing.md.
import { incrementalFileOf, targetByName } from './scripts/mutation/targets.mjs';

const target = targetByName(process.env.MUTATION_TARGET ?? 'path-guard');

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  vitest: { configFile: 'vitest.stryker.config.mjs', related: false },
  mutate: target.mutate,
  // Only the tests that cover each mutant run against it.
  coverageAnalysis: 'perTest',
  // The machine (and CI) has two cores; the runner script passes --concurrency 1 unless told otherwise.
  concurrency: Number(process.env.MUTATION_CONCURRENCY ?? 1),
  incremental: true,
  incrementalFile: incrementalFileOf(target.name),
  reporters: ['clear-text', 'progress'],
  clearTextReporter: {
    allowColor: false,
    logTests: false,
    reportScoreTable: true,
    reportMutants: true,
    skipFull: true,
  },
  // The sandbox copy needs only what the tests import.
  ignorePatterns: [
    'dist',
    'coverage',
    'bench',
    'infra',
    'reports',
    '.cache',
    '.tmp',
    '.scratch',
    '.memvault',
    'test/package',
    'test/pii/public',
    '*.log',
  ],
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  // A mutant that loops forever is a timeout (detected). 10 s, not less: on a loaded two-core machine
  // a 3 s limit turned slow but finished runs of equivalent mutants into "timeouts", counted as kills.
  timeoutMS: 10_000,
  timeoutFactor: 2,
  // Type errors in a mutant make it a compile error (not counted), not a survivor.
  checkers: [],
  thresholds: { high: target.threshold, low: target.threshold, break: null },
};
