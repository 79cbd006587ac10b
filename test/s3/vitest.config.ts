// Runs only the S3 suites, with the RGW global setup. The project's vitest.config.ts (the lead's)
// registers the same globalSetup for the full run.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/s3/**/*.test.ts'],
    globalSetup: ['test/setup/rgw.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
