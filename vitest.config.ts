import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'infra/test/**/*.test.ts'],
    // The built CLI, compiled first when stale (test/setup/built.ts); the suite markers CI reads,
    // cleared (test/setup/markers.ts); a real S3 server (Ceph radosgw) for test/s3, started when
    // radosgw is installed, required under CI (test/setup/rgw.ts).
    globalSetup: ['test/setup/built.ts', 'test/setup/markers.ts', 'test/setup/rgw.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // vitest's default is one fewer than the cores: one worker on a 2-core machine, where most suites
    // wait on child processes, radosgw or Chromium rather than compute. Two keep both cores busy; each
    // file has its own store prefix, temp directories and ports, so files never share state.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
