/**
 * The history checker (test/kit/history/run.ts) on radosgw: several processes,
 * each with its own S3 client, on one bucket prefix, killed with SIGKILL at random points.
 */
import {
  recordS3SuiteRun,
  emptyStore,
  s3Available,
  s3ClientConfig,
  s3Connection,
  s3SkipReason,
  s3Url,
  s3WorkerEnv,
} from './helpers.js';
import { runHistoryChecker } from '../kit/history/run.js';
import type { S3Store } from '../../src/store/s3.js';

recordS3SuiteRun(import.meta.url);

runHistoryChecker(
  {
    name: 'radosgw',
    url: (seed) => s3Url(`history-${seed}`),
    vaultOptions: { s3: s3ClientConfig() },
    workerEnv: () => s3WorkerEnv('', s3Connection()!),
    cleanup: (vault) => emptyStore(vault.store as S3Store),
  },
  s3Available() ? false : s3SkipReason(),
);
