/** One verified read for every reader on radosgw: the swap and the raw PUT of an older object (test/vault/verified-read-suite.ts). */
import { describe } from 'vitest';
import { verifiedReadSuite } from '../vault/verified-read-suite.js';
import { recordS3SuiteRun, s3Available, s3SkipReason, suiteStores } from './helpers.js';

recordS3SuiteRun(import.meta.url);

describe.skipIf(!s3Available())(`verified reads on S3${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`, () => {
  verifiedReadSuite('radosgw', suiteStores('verified-read'), { timeoutMs: 60_000 });
});
