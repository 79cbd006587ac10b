import { describe } from 'vitest';
import { runStoreContract } from '../store/contract.js';
import { makeS3StoreInFreshBucket, recordS3SuiteRun, s3Available, s3SkipReason } from './helpers.js';

recordS3SuiteRun(import.meta.url);

// The foundation's adapter contract, unchanged, against the S3 adapter on a real S3 server. A
// bucket of its own and no store prefix: the contract writes a key of 1,020 bytes, and a prefix
// would take part of S3's 1,024-byte budget.
describe.skipIf(!s3Available())(
  `S3Store on a real S3 server${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`,
  () => {
    runStoreContract('s3 (default check-first conditions)', () => makeS3StoreInFreshBucket());
  },
);
