import { randomBytes } from 'node:crypto';
import { afterAll, describe } from 'vitest';
import type { S3Store } from '../../src/store/s3.js';
import { runToolSuite } from '../tool/suite.js';
import { emptyStore, makeS3Store, recordS3SuiteRun, s3Available, s3SkipReason } from './helpers.js';

recordS3SuiteRun(import.meta.url);

// The foundation's memory tool suite, unchanged, on the S3 adapter against a real S3 server, run
// encrypted as production runs it. Every vault the suite opens gets a prefix of its own, so that
// its "the store is unchanged" snapshots see only its own keys.
const masterKey = randomBytes(32).toString('base64');
const opened: S3Store[] = [];
let vaults = 0;

describe.skipIf(!s3Available())(`memory tool suite on S3${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`, () => {
  afterAll(async () => {
    // Leave the shared bucket as we found it (the suite writes ~800 objects).
    for (const store of opened) {
      await emptyStore(store);
      await store.close();
    }
  }, 300_000);

  runToolSuite(
    'encrypted S3 store on RGW',
    async () => {
      vaults += 1;
      const store = makeS3Store(`tool-suite/${vaults}`);
      opened.push(store);
      return store;
    },
    { encryption: { masterKey } },
  );
});
