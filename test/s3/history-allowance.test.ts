/** The history allowance on radosgw: creating and deleting empty files is refused within it (test/vault/history-allowance-suite.ts). */
import { describe } from 'vitest';
import { historyAllowanceSuite } from '../vault/history-allowance-suite.js';
import { recordS3SuiteRun, s3Available, s3SkipReason, suiteStores } from './helpers.js';

recordS3SuiteRun(import.meta.url);

describe.skipIf(!s3Available())(
  `history allowance on S3${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`,
  () => {
    historyAllowanceSuite('radosgw', suiteStores('history-allowance'), { timeoutMs: 120_000 });
  },
);
