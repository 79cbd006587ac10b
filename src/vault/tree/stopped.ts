/**
 * A directory rename whose runner is gone (its process killed, or silent past `resumeAfterMs`) is
 * finished by memvault itself: by the next command of its user that meets its journal, before that
 * command answers, and by the sweeper. Until then its files can be seen at both places; after, never.
 * docs/s3.md, "Directory rename journals".
 */
import { MemvaultError } from '../../errors.js';
import { LruMap } from '../../util/lru.js';
import { VaultLocks } from '../locks.js';
import type { TreeFiles } from '../tree-files.js';
import type { TreeEnv, TreeLimits, TreeMessages } from './env.js';
import { JOURNAL_DIR, openJournal, runnerIsGone, sameOperation, type TreeOperation } from './journal.js';
import { renameTree } from './operations.js';

/**
 * The longest a vault instance goes without looking for stopped renames of a user it serves (one
 * LIST of the user's journals, made by the first command after that long). A quarter of
 * `resumeAfterMs` when that is shorter, so a silent journal is seen often enough to be judged idle.
 */
const JOURNAL_LOOK_MS = 10_000;

export function journalLookInterval(limits: Pick<TreeLimits, 'resumeAfterMs'>): number {
  return Math.min(JOURNAL_LOOK_MS, limits.resumeAfterMs / 4);
}

/** When each user's journals were last looked at, per vault instance (bounded like every memo). */
const lastLooks = new WeakMap<VaultLocks, LruMap<string, number>>();
const LOOKS_LIMIT = 10_000;

/**
 * Look for the user's stopped renames (at most once per journalLookInterval) and finish each one
 * whose runner is gone, before the caller's command runs. `except`: the command's own rename, which
 * resumes its journal itself. Any failure leaves the journal for the next look and does not fail
 * the caller's command. The LIST itself is the command's: a store that cannot list fails the
 * command as its own requests would. Returns how many were finished.
 */
export async function finishStoppedRenames(env: TreeEnv, except?: TreeOperation): Promise<number> {
  const uid = env.files.uid;
  let looks = lastLooks.get(env.locks);
  if (looks === undefined) lastLooks.set(env.locks, (looks = new LruMap(LOOKS_LIMIT)));
  const now = performance.now();
  const last = looks.get(uid);
  if (last !== undefined && now - last < journalLookInterval(env.limits)) return 0;
  looks.set(uid, now);
  return (await finishAll(env, except)).finished;
}

/** What one look did: renames finished, and renames that could not be (the store failed them). */
export interface StoppedRenames {
  finished: number;
  failed: number;
}

/** Codes of a resume that ended the matter without an error of the store: its runner is back (busy), or it can never resume (its destination changed: its journal is dropped). */
const SETTLED = new Set(['CONFLICT', 'ALREADY_EXISTS', 'NOT_A_DIRECTORY', 'NOT_FOUND']);

/** Every journal of the user, each under the user's tree lock: finished when its runner is gone, else left. */
async function finishAll(env: TreeEnv, except?: TreeOperation): Promise<StoppedRenames> {
  const journals: string[] = [];
  for await (const file of env.files.listFiles(JOURNAL_DIR)) journals.push(file.path);
  const outcome: StoppedRenames = { finished: 0, failed: 0 };
  for (const path of journals) {
    try {
      await env.locks.withTree(env.files.uid, async () => {
        const found = await openJournal(path, env);
        const journal = found.journal;
        if (journal === null || journal.op !== 'rename') return;
        if (except !== undefined && sameOperation(journal, except)) return;
        // This instance's own journal too: left by a command that answered with an error (this
        // instance runs one tree operation of a user at a time, under the lock held here). The same
        // rename asked again resumes it at once; left alone, it is finished like another's.
        if (!runnerIsGone(found, path, env)) return;
        await renameTree(journal.from, journal.to!, env);
        outcome.finished += 1;
      });
    } catch (error) {
      if (!(error instanceof MemvaultError && SETTLED.has(error.code))) outcome.failed += 1;
    }
  }
  return outcome;
}

/**
 * The sweeper's way in (SweepOptions.finishStoppedRenames): finishes the stopped renames of the
 * user `storeUid`, whose files `filesOf` opens, with no look interval. The sweeper is a process of
 * its own: a runner on its host is known gone by its pid; any other only by a journal stamped by
 * the store longer than `resumeAfterMs` (and the slack in journal.ts) ago.
 */
export function stoppedRenameFinisher(
  filesOf: (storeUid: string) => Promise<TreeFiles>,
  limits: TreeLimits,
  messages: TreeMessages,
): (storeUid: string) => Promise<StoppedRenames> {
  const locks = new VaultLocks();
  return async (storeUid) => finishAll({ files: await filesOf(storeUid), locks, limits, messages });
}
