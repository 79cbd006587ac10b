/**
 * A directory rename stopped part-way is finished by memvault itself, on any
 * store several processes share (run on the file store by stopped-rename.test.ts, on radosgw by
 * test/s3/stopped-rename.test.ts):
 * - killed (kill -9 of a worker process on this host): the next command of the user, whatever it
 *   is, finishes it before answering, at once (its runner's process is known gone);
 * - paused (alive; what another host sees of a dead one): another instance's commands finish it
 *   once they have seen its journal silent for `resumeAfterMs`.
 * Each case prints how long the rename's files could be seen at both places.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/index.js';
import type { ObjectStore } from '../../src/store/port.js';
import { JOURNAL_DIR } from '../../src/vault/tree/journal.js';
import { startWorker } from '../kit/worker-process.js';
import { PausingStore, type PausePoint } from './pausing-store.js';

const FILES = 60;
const RESUME_AFTER_MS = 500;
const worker = fileURLToPath(new URL('./fixtures/stopping-rename-worker.ts', import.meta.url));
const SOURCE = Object.fromEntries(
  Array.from({ length: FILES }, (_, i) => [`f${String(i).padStart(2, '0')}.md`, `file ${i}\n${'y'.repeat(i * 11)}\n`]),
);

export interface StoppedRenameTarget {
  /** A fresh store (its own directory or prefix) and its URL, for a worker process to open too. */
  open(): Promise<{ store: ObjectStore; url: string }>;
  /** The worker's environment (S3 settings). */
  env?: NodeJS.ProcessEnv;
  /** Whether the store offers deleteExactly (the file store). */
  deleteExactly: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A vault on `store` that leaves it open when closed (the test closes the store itself). */
export function vaultOn(
  store: ObjectStore,
  deleteExactly: boolean,
  limits?: { resumeAfterMs: number },
): Promise<Vault> {
  return createVault({
    store: new PausingStore(store, { deleteExactly }),
    encryption: false,
    ...(limits ? { limits } : {}),
  });
}

export async function seed(store: ObjectStore, user: string): Promise<void> {
  const vault = await vaultOn(store, false);
  const files = await vault.files(user);
  await Promise.all(
    Object.entries(SOURCE).map(([name, text]) => files.write(`/memories/src/${name}`, new TextEncoder().encode(text))),
  );
  await files.write('/memories/keep.md', new TextEncoder().encode('not involved\n'));
  await vault.close();
}

/** Where each file of the rename is: how many at both places, how many at neither (with the right text). */
export async function places(vault: Vault, user: string): Promise<{ both: number; lost: number; oldOnly: number }> {
  const files = await vault.files(user);
  const text = async (path: string) => {
    const file = await files.read(path);
    return file ? Buffer.from(file.data).toString('utf8') : null;
  };
  let both = 0;
  let lost = 0;
  let oldOnly = 0;
  for (const [name, want] of Object.entries(SOURCE)) {
    const [old, moved] = await Promise.all([text(`/memories/src/${name}`), text(`/memories/dst/${name}`)]);
    if (old !== null && moved !== null) both += 1;
    else if (old === null && moved !== want) lost += 1;
    else if (moved === null) oldOnly += 1;
  }
  return { both, lost, oldOnly };
}

async function journalsOf(vault: Vault, user: string): Promise<number> {
  let n = 0;
  for await (const _ of (await vault.files(user)).listFiles(JOURNAL_DIR)) n += 1;
  return n;
}

/** Run the worker until it stops at its pause point, then kill -9 it. */
export async function killPartWay(
  url: string,
  user: string,
  kind: PausePoint,
  nth: number,
  env?: NodeJS.ProcessEnv,
): Promise<number> {
  const child = await startWorker(worker, [url, user, kind, String(nth)], { ready: 'paused', ...(env ? { env } : {}) });
  await child.kill();
  return performance.now();
}

export function runStoppedRenameSuite(name: string, target: StoppedRenameTarget): void {
  describe(`a directory rename stopped part-way is finished by memvault itself (${name})`, () => {
    it.each([
      ['copy', 20],
      ['fence', 20],
    ] as Array<[PausePoint, number]>)(
      'killed (kill -9) at its %s #%i: the next unrelated command of the user finishes it before answering',
      async (kind, nth) => {
        const { store, url } = await target.open();
        const user = `killed-${kind}`;
        await seed(store, user);
        const killedAt = await killPartWay(url, user, kind, nth, target.env);
        // A fresh instance with the default resumeAfterMs (two minutes): the runner's death is an OS-level fact.
        const vault = await vaultOn(store, target.deleteExactly);
        const left = await places(vault, user);
        expect(left.lost, 'nothing lost by the kill').toBe(0);
        expect(left.both + left.oldOnly, 'the rename was stopped part-way').toBeGreaterThan(0);
        if (kind === 'fence') expect(left.both, 'files at both places after the kill').toBeGreaterThan(0);
        const askedAt = performance.now();
        const answered = await vault.run(user, { command: 'view', path: '/memories/keep.md' });
        const finishedAt = performance.now();
        expect(answered).toMatchObject({ isError: false });
        expect(await places(vault, user)).toEqual({ both: 0, lost: 0, oldOnly: 0 });
        expect(await journalsOf(vault, user)).toBe(0);
        const listing = await vault.run(user, { command: 'view', path: '/memories' });
        expect(String(listing.content)).not.toContain('/memories/src');
        console.log(
          `[stopped-rename] ${name}, killed at ${kind} #${nth}: files at both places until the user's next command (here ${Math.round(askedAt - killedAt)} ms after the kill), which finished the rename before answering, in ${Math.round(finishedAt - askedAt)} ms`,
        );
        await vault.close();
        await store.close();
      },
      120_000,
    );

    it('paused (alive: only silence tells) past resumeAfterMs: another instance finishes it at its first command after seeing it silent that long', async () => {
      const { store } = await target.open();
      const user = 'paused';
      await seed(store, user);
      const pausing = new PausingStore(store, { deleteExactly: target.deleteExactly });
      const paused = await createVault({
        store: pausing,
        encryption: false,
        limits: { resumeAfterMs: RESUME_AFTER_MS },
      });
      await paused.run(user, { command: 'view', path: '/memories/keep.md' });
      pausing.pauseAt('fence', 20);
      const first = paused.run(user, { command: 'rename', old_path: '/memories/src', new_path: '/memories/dst' });
      while (!pausing.paused) await sleep(5);
      const pausedAt = performance.now();
      const other = await vaultOn(store, target.deleteExactly, { resumeAfterMs: RESUME_AFTER_MS });
      // The model's view through the other instance, command after command, until the duplicates are gone.
      let seenBoth = 0;
      let finishedAt: number | undefined;
      while (finishedAt === undefined) {
        const listing = String((await other.run(user, { command: 'view', path: '/memories' })).content);
        if (listing.includes('/memories/src/')) seenBoth += 1;
        else finishedAt = performance.now();
        if (performance.now() - pausedAt > 30_000) throw new Error('the stopped rename was never finished');
        await sleep(25);
      }
      expect(seenBoth, 'before it was silent for resumeAfterMs, the rename was left alone').toBeGreaterThan(0);
      expect(finishedAt - pausedAt).toBeGreaterThanOrEqual(RESUME_AFTER_MS);
      expect(await places(other, user)).toEqual({ both: 0, lost: 0, oldOnly: 0 });
      console.log(
        `[stopped-rename] ${name}, paused at fence #20 with resumeAfterMs ${RESUME_AFTER_MS}: files at both places for ${Math.round(finishedAt - pausedAt)} ms after the pause (the other instance viewing every 25 ms)`,
      );
      pausing.wake();
      const woken = await first;
      if (woken.isError) expect(woken, String(woken.content)).toMatchObject({ code: 'CONFLICT' });
      expect(await places(other, user)).toEqual({ both: 0, lost: 0, oldOnly: 0 });
      expect(await journalsOf(other, user)).toBe(0);
      await paused.close();
      await other.close();
      await store.close();
    }, 60_000);
  });
}
