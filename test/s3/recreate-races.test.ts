/**
 * test/vault/recreate-races.ts on radosgw: a create under way while another instance (its own S3
 * client) deletes or renames the name away; the create that lands reads as the current file.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe } from 'vitest';
import type { S3Store } from '../../src/store/s3.js';
import { runRecreateRaceSuite } from '../vault/recreate-races.js';
import { emptyStore, makeS3Store, recordS3SuiteRun, s3Available, s3SkipReason } from './helpers.js';

recordS3SuiteRun(import.meta.url);

const masterKey = randomBytes(32).toString('base64');
const opened: S3Store[] = [];
let stores = 0;

describe.skipIf(!s3Available())(`recreate races on S3${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`, () => {
  afterAll(async () => {
    for (const store of opened) {
      await emptyStore(store);
      await store.close();
    }
  }, 300_000);

  runRecreateRaceSuite(
    'encrypted S3 store on RGW',
    async () => {
      stores += 1;
      const store = makeS3Store(`recreate-races/${randomBytes(4).toString('hex')}-${stores}`);
      opened.push(store);
      return store;
    },
    { encryption: { masterKey } },
  );
});
