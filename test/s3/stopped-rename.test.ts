/**
 * On a real S3 server (radosgw): a directory rename paused past resumeAfterMs and taken over by
 * another instance loses nothing when it wakes, whatever step it was in (test/tool/paused-rename.ts),
 * and a rename stopped part-way (killed, or silent) is finished by memvault itself
 * (test/tool/stopped-rename.ts).
 */
import { describe, expect, it } from 'vitest';
import { createVault } from '../../src/index.js';
import { StoreWrapper } from '../kit/stores.js';
import { runPausedRenameSuite } from '../tool/paused-rename.js';
import { runStoppedRenameSuite } from '../tool/stopped-rename.js';
import { recordS3SuiteRun, s3Available, s3SkipReason, s3Url, s3WorkerEnv, suiteStores } from './helpers.js';

recordS3SuiteRun(import.meta.url);

describe.skipIf(!s3Available())(
  `stopped and paused directory renames on S3${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`,
  () => {
    const paused = suiteStores('paused-rename');
    runPausedRenameSuite([{ name: 'radosgw', make: paused, deleteExactly: false }]);
    const live = suiteStores('live-rename');
    it(
      'a live rename with a 1 s resumeAfterMs is never taken for silent (the store stamps whole seconds)',
      { timeout: 120_000 },
      async () => {
        const store = await live();
        const user = 'live';
        const seedVault = await createVault({ store: new StoreWrapper(store), encryption: false });
        const files = await seedVault.files(user);
        await Promise.all(
          Array.from({ length: 60 }, (_, i) =>
            files.write(`/memories/src/f${i}.md`, new TextEncoder().encode(`f${i}\n`)),
          ),
        );
        // The runner's requests each wait 40 ms: its rename runs for seconds, beating every 250 ms.
        class Slow extends StoreWrapper {
          protected override async step(): Promise<void> {
            await new Promise((r) => setTimeout(r, 40));
          }
          override async close(): Promise<void> {}
        }
        const runner = await createVault({
          store: new Slow(store),
          encryption: false,
          limits: { resumeAfterMs: 1_000 },
        });
        const observer = await createVault({
          store: new StoreWrapper(store),
          encryption: false,
          limits: { resumeAfterMs: 1_000 },
        });
        await runner.run(user, { command: 'view', path: '/memories' });
        let done = false;
        const first = runner
          .run(user, { command: 'rename', old_path: '/memories/src', new_path: '/memories/dst' })
          .finally(() => (done = true));
        await new Promise((r) => setTimeout(r, 500));
        let attempts = 0;
        while (!done) {
          const tried = await observer.run(user, {
            command: 'rename',
            old_path: '/memories/src',
            new_path: '/memories/dst',
          });
          // (Asked just after the runner dropped its journal, before it answered: nothing left to rename.)
          if (done || tried.code === 'NOT_FOUND') break;
          attempts += 1;
          expect(tried, `attempt ${attempts}: ${String(tried.content)}`).toMatchObject({
            isError: true,
            code: 'CONFLICT',
          });
          await new Promise((r) => setTimeout(r, 100));
        }
        expect(attempts, 'the observer tried while the rename ran, past resumeAfterMs').toBeGreaterThanOrEqual(5);
        expect(await first).toMatchObject({ isError: false });
        for (let i = 0; i < 60; i++) {
          expect((await files.read(`/memories/src/f${i}.md`)) === null, `f${i}`).toBe(true);
          expect(Buffer.from((await files.read(`/memories/dst/f${i}.md`))!.data).toString(), `f${i}`).toBe(`f${i}\n`);
        }
        await runner.close();
        await observer.close();
        await seedVault.close();
      },
    );
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
  },
);
