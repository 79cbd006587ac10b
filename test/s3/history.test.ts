/** File history on radosgw (docs/versions.md): the same suite as the memory and file stores. */
import { afterAll } from 'vitest';
import type { S3Store } from '../../src/store/s3.js';
import { historySuite } from '../vault/history-suite.js';
import { emptyStore, makeS3Store, recordS3SuiteRun, s3Available } from './helpers.js';

recordS3SuiteRun(import.meta.url);

const made: S3Store[] = [];
let n = 0;
afterAll(async () => {
  for (const store of made) await emptyStore(store);
}, 120_000);

if (s3Available()) {
  historySuite(
    'radosgw',
    {
      make: async () => {
        const store = makeS3Store(`history-${++n}`);
        made.push(store);
        return store;
      },
    },
    { timeoutMs: 60_000 },
  );
}
