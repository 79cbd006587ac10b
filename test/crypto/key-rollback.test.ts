/**
 * A retired key comes back, and a stale instance fails a directory rename, on the memory and the directory (file) store; test/s3/key-rollback.test.ts runs the same
 * scenarios on radosgw.
 */
import { beforeAll, describe, it } from 'vitest';
import { loadSodium } from '../../src/crypto/sodium.js';
import {
  droppedVersionScenario,
  keyLoadCostScenario,
  retiredRecordScenario,
  staleInstanceScenario,
} from './key-rollback-scenarios.js';
import { rekeyStores } from './rekey-scenarios.js';

beforeAll(async () => {
  await loadSodium();
});

const stores = rekeyStores('key-rollback');

describe.each(stores)('key records never move backwards, on the %s store', (_name, makeStore) => {
  it(
    'the pre-re-key record put back is INTEGRITY for a fresh instance, the re-keying one and the re-key',
    () => retiredRecordScenario(makeStore),
    60_000,
  );
  it(
    'the record from before the drop put back: an object under the dropped version does not open, new content is sealed under the new one',
    () => droppedVersionScenario(makeStore),
    60_000,
  );
  it(
    'a key load costs one GET and one LIST of one key; a mark missing costs one PUT, once; a planted key one LIST more',
    () => keyLoadCostScenario(makeStore),
    60_000,
  );
  it.each([false, true])(
    'an instance that cached the record before a re-key runs every kind of command on re-sealed content (history %s)',
    (history) => staleInstanceScenario(makeStore, history),
    120_000,
  );
});
