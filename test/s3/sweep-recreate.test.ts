/**
 * A sweep meeting re-creates of the names it expires, on radosgw with the S3 deleter. The server's clock cannot be set: the files age by a wait longer than VERSION_LAG_MS,
 * and the sweep's clock runs 31 days ahead.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'vitest';
import { DAY_MS } from '../../src/expiry/config.js';
import { s3Deleter } from '../../src/expiry/deleter.js';
import { VERSION_LAG_MS } from '../../src/expiry/history-retention.js';
import { parseS3Url } from '../../src/store/s3.js';
import { sweepMeetsRecreates } from '../kit/sweep-recreate.js';
import { recordS3SuiteRun, s3Available, s3SkipReason, suiteStoresWithUrl } from './helpers.js';

recordS3SuiteRun(import.meta.url);

describe.skipIf(!s3Available())(
  `a sweep meeting re-creates on S3${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`,
  () => {
    const nextStore = suiteStoresWithUrl('sweep-recreate');

    for (const mode of ['recheck', 'native'] as const) {
      it(
        `${mode} deleter: 8 names expired and made again mid-sweep keep their new versions`,
        { timeout: 180_000 },
        async () => {
          const { store, url } = await nextStore();
          const { bucket, prefix } = parseS3Url(url);
          const time = { age: () => sleep(VERSION_LAG_MS + 1_500), sweepNow: () => new Date(Date.now() + 31 * DAY_MS) };
          await sweepMeetsRecreates(store, 8, time, {
            deleter: s3Deleter({ client: store.client, bucket, prefix, mode }),
          });
        },
      );
    }
  },
);
