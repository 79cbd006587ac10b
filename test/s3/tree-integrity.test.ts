import { randomBytes } from 'node:crypto';
import { describe } from 'vitest';
import { runTreeIntegritySuite } from '../tool/tree-integrity.js';
import { recordS3SuiteRun, s3Available, s3SkipReason, suiteStores } from './helpers.js';

recordS3SuiteRun(import.meta.url);

// Tree integrity on a real S3 server: resumed renames, the name invariant between two
// instances on one bucket, and the key limit (which the store's prefix lowers), encrypted.
const masterKey = randomBytes(32).toString('base64');

describe.skipIf(!s3Available())(`tree integrity on S3${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`, () => {
  runTreeIntegritySuite('encrypted S3 store on RGW', suiteStores('tree-integrity'), { encryption: { masterKey } }, 6);
});
