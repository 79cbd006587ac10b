/** test/entry/api-validation.ts on radosgw: every invalid public API call is refused and the bucket is unchanged. */
import { describe } from 'vitest';
import { runApiValidationSuite } from '../entry/api-validation.js';
import { recordS3SuiteRun, s3Available, s3SkipReason, suiteStores } from './helpers.js';

recordS3SuiteRun(import.meta.url);

describe.skipIf(!s3Available())(
  `public API arguments on S3${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`,
  () => {
    runApiValidationSuite('S3 store on RGW', suiteStores('api-validation'));
  },
);
