import { defineConfig } from 'vitest/config';
import { targetByName } from './scripts/mutation/targets.mjs';

/**
 * The vitest configuration StrykerJS uses: only the fast test files of one mutation target
 * (MUTATION_TARGET, see scripts/mutation/targets.mjs), no radosgw global setup (the S3 target's
 * tests use a mocked client), and the usual timeouts.
 */
const target = targetByName(process.env.MUTATION_TARGET ?? 'path-guard');

export default defineConfig({
  test: {
    include: target.tests,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
