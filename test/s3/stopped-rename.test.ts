/**
 * On a real S3 server (radosgw): a directory rename paused past resumeAfterMs and taken over by
 * another instance loses nothing when it wakes, whatever step it was in (test/tool/paused-rename.ts),
 * and a rename stopped part-way (killed, or silent) is finished by memvault itself
 * (test/tool/stopped-rename.ts).
 */
import { describe } from 'vitest';
import { runPausedRenameSuite } from '../tool/paused-rename.js';
import { runStoppedRenameSuite } from '../tool/stopped-rename.js';
import { recordS3SuiteRun, s3Available, s3SkipReason, s3Url, s3WorkerEnv, suiteStores } from './helpers.js';

recordS3SuiteRun(import.meta.url);

describe.skipIf(!s3Available())(`stopped and paused directory renames on S3${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`, () => {
  const paused = suiteStores('paused-rename');
  runPausedRenameSuite([{ name: 'radosgw', make: paused, deleteExactly: false }]);
  const stopped = suiteStores('stopped-rename');
  let opened = 0;
  runStoppedRenameSuite('radosgw', {
    deleteExactly: false,
    env: s3Available() ? s3WorkerEnv('') : {},
    open: async () => {
      const store = await stopped();
      opened += 1;
      return { store, url: s3Url(`stopped-rename/${opened}`) };
    },
  });
});
