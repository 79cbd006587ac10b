/**
 * A sweep meeting re-creates of the names it expires, on radosgw with the S3 deleter (issue 37,
 * class 3). The server's clock cannot be set: the files age by a wait longer than VERSION_LAG_MS,
 * and the sweep's clock runs 31 days ahead.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, it } from 'vitest';
import { DAY_MS } from '../../src/expiry/config.js';
import { s3Deleter } from '../../src/expiry/deleter.js';
import { VERSION_LAG_MS } from '../../src/expiry/history-retention.js';
import { parseS3Url, type S3Store } from '../../src/store/s3.js';
import { sweepMeetsRecreates } from '../kit/sweep-recreate.js';
import { emptyStore, makeS3Store, recordS3SuiteRun, s3Available, s3SkipReason, s3Url } from './helpers.js';

recordS3SuiteRun(import.meta.url);

describe.skipIf(!s3Available())(`a sweep meeting re-creates on S3${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`, () => {
  const opened: S3Store[] = [];
  afterAll(async () => {
    for (const store of opened) {
      await emptyStore(store);
      await store.close();
    }
  }, 300_000);

  for (const mode of ['recheck', 'native'] as const) {
    it(`${mode} deleter: 8 names expired and made again mid-sweep keep their new versions`, { timeout: 180_000 }, async () => {
      const label = `sweep-recreate/${mode}`;
      const store = makeS3Store(label);
      opened.push(store);
      const { bucket, prefix } = parseS3Url(s3Url(label));
      const time = { age: () => sleep(VERSION_LAG_MS + 1_500), sweepNow: () => new Date(Date.now() + 31 * DAY_MS) };
      await sweepMeetsRecreates(store, 8, time, { deleter: s3Deleter({ client: store.client, bucket, prefix, mode }) });
    });
  }
});
