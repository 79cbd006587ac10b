/**
 * test/vault/recreate-races.ts on radosgw: a create under way while another instance (its own S3
 * client) deletes or renames the name away; the create that lands reads as the current file.
 */
import { randomBytes } from 'node:crypto';
import { describe } from 'vitest';
import { runRecreateRaceSuite } from '../vault/recreate-races.js';
import { recordS3SuiteRun, s3Available, s3SkipReason, suiteStores } from './helpers.js';

recordS3SuiteRun(import.meta.url);

const masterKey = randomBytes(32).toString('base64');

describe.skipIf(!s3Available())(`recreate races on S3${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`, () => {
  runRecreateRaceSuite('encrypted S3 store on RGW', suiteStores('recreate-races'), { encryption: { masterKey } });
});
