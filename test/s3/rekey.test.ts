import { describe, it } from 'vitest';
import { concurrentEditsScenario, historyScenario, resealScenario } from '../crypto/rekey-scenarios.js';
import { hostRecordsScenario } from '../serve/rekey-records-scenario.js';
import { emptyStore, makeS3Store, recordS3SuiteRun, s3Available, s3SkipReason } from './helpers.js';

recordS3SuiteRun(import.meta.url);

// On a real S3 server: re-keying re-seals in place with If-Match (radosgw enforces
// it), an edit from another instance that races a re-seal wins, stale instances' writes during the
// settle time are re-sealed before the old version is dropped, names and audit pseudonyms stay; the
// host's records (idempotency, ended sessions) are re-sealed too.
describe.skipIf(!s3Available())(`re-keying on S3${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`, () => {
  for (const [name, scenario] of [
    ['re-seals every object in place, drops the old version, keeps names and audit pseudonyms', resealScenario],
    ['under concurrent edits from another instance loses nothing', concurrentEditsScenario],
    ['re-seals file history too, and a restore to before the re-key finds its versions', historyScenario],
    ['re-seals host records: a retry replays, a logged-out session stays out, after the drop', hostRecordsScenario],
  ] as const) {
    it(
      name,
      async () => {
        const stores: Awaited<ReturnType<typeof makeS3Store>>[] = [];
        try {
          await scenario(async () => {
            const store = makeS3Store(`rekey-${stores.length}-${name.slice(0, 8).replace(/\W/g, '')}`);
            stores.push(store);
            return store;
          });
        } finally {
          for (const store of stores) {
            await emptyStore(store);
            await store.close();
          }
        }
      },
      180_000,
    );
  }
});
