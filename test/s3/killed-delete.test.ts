/**
 * A directory delete killed (kill -9) part-way while another instance creates at its paths, on a
 * real S3 server (radosgw): what the crash left never breaks a read, a listing,
 * a history or the export, and the delete run again finishes the job. The rounds are
 * test/kit/killed-delete.ts.
 */
import { describe, expect, it } from 'vitest';
import { killedDeleteRounds } from '../kit/killed-delete.js';
import { recordS3SuiteRun, s3Available, s3SkipReason, s3WorkerEnv, suiteStoresWithUrl } from './helpers.js';

recordS3SuiteRun(import.meta.url);

/**
 * Killed right after a fence marker or a kept version landed (before the fence's clean-up, or
 * between a file's tombstone and its fence). Each of these rounds failed on the code before the
 * export's verified read skipped what a crash leaves (the export met a marker and answered
 * INTEGRITY); killing at fractions of the delete's measured time found the same, less surely.
 */
const KILLS = ['fence:30', 'version:20'];

describe.skipIf(!s3Available())(
  `a killed directory delete on S3${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`,
  () => {
    const open = suiteStoresWithUrl('killed-delete');
    it(
      'killed after a fence or a kept version landed, while creates run: reads, listings, histories and the export keep working',
      { timeout: 600_000 },
      async () => {
        const killedPartWay = await killedDeleteRounds({ open, env: s3WorkerEnv('') }, KILLS);
        console.log(`[killed-delete] radosgw: ${killedPartWay} of ${KILLS.length} deletes killed part-way`);
        expect(killedPartWay, 'every round killed the delete before it finished').toBe(KILLS.length);
      },
    );
  },
);
