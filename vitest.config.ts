import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'infra/test/**/*.test.ts'],
    // A real S3 server (Ceph radosgw) for test/s3: started when radosgw is installed, required under CI.
    // The built CLI, compiled first when stale (test/setup/built.ts).
    globalSetup: ['test/setup/built.ts', 'test/setup/markers.ts', 'test/setup/rgw.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
