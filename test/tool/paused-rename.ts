/**
 * A directory rename whose process is paused (SIGSTOP, a long GC, a partition: not killed) past
 * `limits.resumeAfterMs` is taken over by another instance, which finishes it and answers success.
 * When the paused run wakes up, whatever step it was in (a copy, between a copy and its source's
 * fence, a fence, a tombstone, the journal's final delete), it must fail safely: every file ends at
 * exactly one place, whole (files once ended at neither place, their newest kept version a
 * `deleted` tombstone). Run on the memory and file stores by paused-rename.test.ts, on
 * radosgw by test/s3/stopped-rename.test.ts. The pause is in-process: every request of the paused instance,
 * from the chosen one on, is held until it wakes (its heartbeat's too), then sent as it was.
 */
import { describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/index.js';
import type { ObjectStore } from '../../src/store/port.js';
import { PausingStore, type PausePoint } from './pausing-store.js';
import { seedSource, textAt } from '../kit/vault.js';

const U = 'paused-user';
const FILES = 60;
const RESUME_AFTER_MS = 300;
export interface PausedStore {
  name: string;
  make: () => Promise<ObjectStore>;
  deleteExactly: boolean;
}

const SOURCE = Object.fromEntries(
  Array.from({ length: FILES }, (_, i) => [`f${String(i).padStart(2, '0')}.md`, `file ${i}\n${'x'.repeat(i * 13)}\n`]),
);

async function seed(store: ObjectStore): Promise<void> {
  const vault = await createVault({ store: new PausingStore(store), encryption: false }); // (a wrapper: the store stays open)
  await seedSource(vault, U, SOURCE);
  await vault.close();
}

/** Every file of the rename at exactly one place, whole: its new one. */
async function expectAllMovedOnce(vault: Vault): Promise<void> {
  const lost: string[] = [];
  const twice: string[] = [];
  for (const [name, text] of Object.entries(SOURCE)) {
    const [old, moved] = await Promise.all([
      textAt(vault, U, `/memories/src/${name}`),
      textAt(vault, U, `/memories/dst/${name}`),
    ]);
    if (moved !== text) lost.push(name);
    if (old !== null) twice.push(name);
  }
  expect(lost, 'files not at their new place').toEqual([]);
  expect(twice, 'files still at their old place').toEqual([]);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 5) {
    if (waited > 20_000) throw new Error('the paused run never reached its pause point');
    await sleep(5);
  }
}

const POINTS: Array<[PausePoint, number]> = [
  ['copy', 1],
  ['copy', 30],
  ['fence', 1],
  ['fence', 30],
  ['tombstone', 1],
  ['tombstone', 30],
  ['journal-drop', 1],
];

export function runPausedRenameSuite(stores: PausedStore[]): void {
  describe.each(stores)(
    'a paused directory rename taken over by another instance ($name)',
    ({ make, deleteExactly }) => {
      it.each(POINTS)(
        'paused at its %s #%i: the take-over answers success, the woken run fails safely, every file at exactly one place',
        async (kind, nth) => {
          const inner = await make();
          await seed(inner);
          const pausing = new PausingStore(inner, { deleteExactly });
          const paused = await createVault({
            store: pausing,
            encryption: false,
            limits: { resumeAfterMs: RESUME_AFTER_MS },
          });
          const other = await createVault({
            store: new PausingStore(inner, { deleteExactly }),
            encryption: false,
            limits: { resumeAfterMs: RESUME_AFTER_MS },
          });
          await paused.run(U, { command: 'view', path: '/memories/keep.md' }); // its key loaded before the pause
          pausing.pauseAt(kind, nth);
          const first = paused.run(U, { command: 'rename', old_path: '/memories/src', new_path: '/memories/dst' });
          await until(() => pausing.paused);
          await sleep(150); // a beat already past the pause lands before the other instance first looks
          // The other instance meets the journal, sees it silent for resumeAfterMs by its own clock, and takes the rename over.
          expect(await other.run(U, { command: 'view', path: '/memories/keep.md' })).toMatchObject({ isError: false });
          await sleep(RESUME_AFTER_MS + 100);
          const claimer = await other.run(U, {
            command: 'rename',
            old_path: '/memories/src',
            new_path: '/memories/dst',
          });
          expect(claimer, JSON.stringify(claimer.content)).toMatchObject({
            isError: false,
            content: 'Successfully renamed /memories/src to /memories/dst',
          });
          await expectAllMovedOnce(other);
          pausing.wake();
          const woken = await first;
          // It finds its rename taken over (busy, naming the claimer's rename), or nothing left to do.
          if (woken.isError) expect(woken, String(woken.content)).toMatchObject({ code: 'CONFLICT' });
          await expectAllMovedOnce(other);
          expect(await other.run(U, { command: 'view', path: '/memories/keep.md' })).toMatchObject({ isError: false });
          await expectAllMovedOnce(other);
          // Nothing of the rename is left: a rename back starts at once.
          expect(
            await other.run(U, { command: 'rename', old_path: '/memories/dst', new_path: '/memories/back' }),
          ).toMatchObject({ isError: false });
          await paused.close();
          await other.close();
        },
      );
    },
  );
}
