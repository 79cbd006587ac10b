import { randomBytes } from 'node:crypto';
import { afterAll, describe } from 'vitest';
import type { S3Store } from '../../src/store/s3.js';
import { runTreeIntegritySuite } from '../tool/tree-integrity.js';
import { emptyStore, makeS3Store, recordS3SuiteRun, s3Available, s3SkipReason } from './helpers.js';

recordS3SuiteRun(import.meta.url);

// Issue 11 (items 1, 6, 9) on a real S3 server: resumed renames, the name invariant between two
// instances on one bucket, and the key limit (which the store's prefix lowers), encrypted.
const masterKey = randomBytes(32).toString('base64');
const opened: S3Store[] = [];
let stores = 0;

describe.skipIf(!s3Available())(`tree integrity on S3${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`, () => {
  afterAll(async () => {
    for (const store of opened) {
      await emptyStore(store);
      await store.close();
    }
  }, 300_000);

  runTreeIntegritySuite(
    'encrypted S3 store on RGW',
    async () => {
      stores += 1;
      const store = makeS3Store(`tree-integrity/${stores}`);
      opened.push(store);
      return store;
    },
    { encryption: { masterKey } },
    6,
  );
});
