import { describe, it } from 'vitest';
import { plantedObjectsScenario } from '../vault/planted-objects.js';
import { emptyStore, makeS3Store, recordS3SuiteRun, s3Available, s3SkipReason } from './helpers.js';

recordS3SuiteRun(import.meta.url);

// Planted objects on a real S3 server: console folder markers (keys ending in '/'), an object copied
// from another user and garbage names under a user's prefix leave every listing working.
describe.skipIf(!s3Available())(`planted objects on S3${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`, () => {
  it("listings skip what is not the user's, reads of it stay integrity errors", async () => {
    const store = makeS3Store('planted-objects');
    try {
      await plantedObjectsScenario(store);
    } finally {
      await emptyStore(store);
      await store.close();
    }
  });
});
