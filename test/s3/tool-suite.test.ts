import { randomBytes } from 'node:crypto';
import { describe } from 'vitest';
import { runToolSuite } from '../tool/suite.js';
import { recordS3SuiteRun, s3Available, s3SkipReason, suiteStores } from './helpers.js';

recordS3SuiteRun(import.meta.url);

// The foundation's memory tool suite, unchanged, on the S3 adapter against a real S3 server, run
// encrypted as production runs it. Every vault the suite opens gets a prefix of its own, so that
// its "the store is unchanged" snapshots see only its own keys.
const masterKey = randomBytes(32).toString('base64');

describe.skipIf(!s3Available())(
  `memory tool suite on S3${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`,
  () => {
    // The suite writes ~800 objects; every store is emptied after it.
    runToolSuite('encrypted S3 store on RGW', suiteStores('tool-suite'), { encryption: { masterKey } });
  },
);
