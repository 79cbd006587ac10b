/**
 * A directory rename whose runner is gone (its process killed, or silent past `resumeAfterMs`) is
 * finished by memvault itself: by the next command of its user that meets its journal, before that
 * command answers, and by the sweeper. Until then its files can be seen at both places; after, never.
 * docs/s3.md, "Directory rename journals".
 */
import { LruMap } from '../../util/lru.js';
import type { VaultLocks } from '../../vault/locks.js';
import type { CommandEnv, CommandLimits } from './env.js';
import { JOURNAL_DIR, openJournal, runnerIsGone, sameOperation, type TreeOperation } from './journal.js';
import { runnerOf } from './runner.js';
import { renameTree } from './tree.js';

/**
 * The longest a vault instance goes without looking for stopped renames of a user it serves (one
 * LIST of the user's journals, made by the first command after that long). A quarter of
 * `resumeAfterMs` when that is shorter, so a silent journal is seen often enough to be judged idle.
 */
const JOURNAL_LOOK_MS = 10_000;

export function journalLookInterval(limits: CommandLimits): number {
  return Math.min(JOURNAL_LOOK_MS, limits.resumeAfterMs / 4);
}

/** When each user's journals were last looked at, per vault instance (bounded like every memo). */
const lastLooks = new WeakMap<VaultLocks, LruMap<string, number>>();
const LOOKS_LIMIT = 10_000;

/**
 * Look for the user's stopped renames (at most once per journalLookInterval) and finish each one
 * whose runner is gone, under the user's tree lock, before the caller's command runs. `except`: the
 * command's own rename, which resumes its journal itself. A rename that cannot be finished (its
 * destination changed) drops its journal as when it is asked again; any other failure leaves it for
 * the next look and does not fail the caller's command. The LIST itself is the command's: a store
 * that cannot list fails the command as its own requests would. Returns how many were finished.
 */
export async function finishStoppedRenames(env: CommandEnv, except?: TreeOperation): Promise<number> {
  const uid = env.files.uid;
  let looks = lastLooks.get(env.locks);
  if (looks === undefined) lastLooks.set(env.locks, (looks = new LruMap(LOOKS_LIMIT)));
  const now = performance.now();
  const last = looks.get(uid);
  if (last !== undefined && now - last < journalLookInterval(env.limits)) return 0;
  looks.set(uid, now);
  const journals: string[] = [];
  for await (const file of env.files.listFiles(JOURNAL_DIR)) journals.push(file.path);
  let finished = 0;
  for (const path of journals) {
    try {
      await env.locks.withTree(uid, async () => {
        const found = await openJournal(path, env);
        const journal = found.journal;
        // This instance's own journal was left by a command that answered with an error; the same
        // rename asked again resumes it (or another instance, once this one is silent).
        if (journal === null || journal.op !== 'rename' || journal.runner === runnerOf(env)) return;
        if (except !== undefined && sameOperation(journal, except)) return;
        if (!runnerIsGone(found, path, env)) return;
        await renameTree(journal.from, journal.to!, env);
        finished += 1;
      });
    } catch {
      // Left for the next look (or the sweeper); the user's own command goes on.
    }
  }
  return finished;
}
