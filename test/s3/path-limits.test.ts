/**
 * Path limits on radosgw: the documented deepest paths (src/vault/paths.ts) are stored and
 * read back on S3, history on and off, and one level more is refused by the vault as too long to
 * store, never by S3. Buckets of their own with no store prefix: the limits are documented for the
 * whole 1,024-byte key (a prefix takes its bytes off, as docs/paths-and-quotas.md says).
 */
import { afterAll, describe, it } from 'vitest';
import type { S3Store } from '../../src/store/s3.js';
import {
  MAX_SEGMENT_BYTES,
  STORABLE_LEVELS_OF_LONGEST_NAMES,
  STORABLE_LEVELS_OF_ONE_BYTE_NAMES,
} from '../../src/vault/paths.js';
import { expectDeepestStorable, longestNames, oneByteNames } from '../vault/path-limits.js';
import { makeS3StoreInFreshBucket, recordS3SuiteRun, s3Available, s3SkipReason } from './helpers.js';

recordS3SuiteRun(import.meta.url);

describe.skipIf(!s3Available())(
  `documented path limits on a real S3 server${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`,
  () => {
    const cleanups: Array<() => Promise<void>> = [];
    afterAll(async () => {
      for (const cleanup of cleanups) await cleanup();
    }, 300_000);
    const freshStore = async (): Promise<S3Store> => {
      const { store, cleanup } = await makeS3StoreInFreshBucket();
      cleanups.push(async () => {
        await cleanup();
        await store.close();
      });
      return store;
    };

    it(`${STORABLE_LEVELS_OF_ONE_BYTE_NAMES} levels of one-byte names`, async () => {
      await expectDeepestStorable(freshStore, oneByteNames, STORABLE_LEVELS_OF_ONE_BYTE_NAMES);
    }, 120_000);

    it(`${STORABLE_LEVELS_OF_LONGEST_NAMES} names of ${MAX_SEGMENT_BYTES} bytes`, async () => {
      await expectDeepestStorable(freshStore, longestNames, STORABLE_LEVELS_OF_LONGEST_NAMES);
    }, 120_000);
  },
);
