/**
 * The history checker's long run: 6 processes for 30 minutes on one bucket, a
 * SIGKILL or a SIGSTOP past resumeAfterMs every 4 to 10 s, then the checker's rules
 * (test/s3/history-checker.test.ts). Prints the run's counts
 * (operations, processes, crashes, seed, duration) as the test does.
 *
 *   MEMVAULT_S3_ENDPOINT=http://127.0.0.1:7480 npx tsx bench/history.ts
 *   env: MEMVAULT_CHECKER_SEED, MEMVAULT_CHECKER_SECONDS, MEMVAULT_CHECKER_PROCESSES override the size.
 */
import { spawnSync } from 'node:child_process';

const result = spawnSync(
  'npx',
  ['vitest', 'run', '--config', 'test/s3/vitest.config.ts', 'test/s3/history-checker.test.ts'],
  {
    stdio: 'inherit',
    env: { ...process.env, MEMVAULT_CHECKER_LONG: '1' },
  },
);
process.exit(result.status ?? 1);
