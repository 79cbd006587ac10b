/**
 * test/vault/integrity-races.ts on radosgw: a read meeting another instance's write, delete, rename
 * or renumbering create half-way answers what it left, a raw put-back is still INTEGRITY, and a
 * storm of three instances over three names answers no command with INTEGRITY.
 */
import { randomBytes } from 'node:crypto';
import { describe } from 'vitest';
import { runIntegrityRaceSuite } from '../vault/integrity-races.js';
import { recordS3SuiteRun, s3Available, s3SkipReason, suiteStores } from './helpers.js';

recordS3SuiteRun(import.meta.url);

const masterKey = randomBytes(32).toString('base64');

describe.skipIf(!s3Available())(`integrity races on S3${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`, () => {
  runIntegrityRaceSuite('encrypted S3 store on RGW', suiteStores('integrity-races'), { encryption: { masterKey } });
});
