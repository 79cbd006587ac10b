import { describe, it } from 'vitest';
import {
  droppedVersionScenario,
  keyLoadCostScenario,
  retiredRecordScenario,
  staleInstanceScenario,
} from '../crypto/key-rollback-scenarios.js';
import { recordS3SuiteRun, s3Available, s3SkipReason, suiteStores } from './helpers.js';

recordS3SuiteRun(import.meta.url);

// A retired key and a stale instance on a real S3 server: a retired key record put back is refused
// (the key state marks are create-only objects radosgw keeps), a dropped version stays unusable, and
// an instance that cached the record before a re-key runs every kind of command on re-sealed content.
describe.skipIf(!s3Available())(
  `key records never move backwards on S3${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`,
  () => {
    const makeStore = suiteStores('key-rollback');
    it(
      'the pre-re-key record put back is INTEGRITY for a fresh instance, the re-keying one and the re-key',
      () => retiredRecordScenario(makeStore),
      180_000,
    );
    it(
      'the record from before the drop put back: an object under the dropped version does not open, new content is sealed under the new one',
      () => droppedVersionScenario(makeStore),
      180_000,
    );
    it(
      'a key load costs one GET and one LIST of one key; a mark missing costs one PUT, once; a planted key one LIST more',
      () => keyLoadCostScenario(makeStore),
      180_000,
    );
    it(
      'an instance that cached the record before a re-key runs every kind of command on re-sealed content (history on)',
      () => staleInstanceScenario(makeStore, true),
      300_000,
    );
  },
);
