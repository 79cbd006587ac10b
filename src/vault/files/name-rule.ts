/**
 * The file-or-directory name rule (src/vault/names.ts) as a write applies it: a write that created a
 * name checks it after it landed, takes itself back on a conflict, and, when the rival took itself
 * back too, tries again after a random pause.
 */
import type { ObjectStore } from '../../store/port.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileNameConflict, NameConflictError, type NameConflict } from '../names.js';
import type { TreeFiles } from '../tree-files.js';
import { deleteVersion } from './capabilities.js';

/** Tries of a create whose rival took itself back too (names.ts), and the longest pause before the next. */
const NAME_CONFLICT_TRIES = 3;
const NAME_CONFLICT_PAUSE_MS = 40;

/**
 * Write, then check (src/vault/names.ts): a created name that a rival made a directory (or put
 * below a file) is taken back, only as we wrote it (If-Match: an edit made meanwhile by someone
 * who saw it stays). Returns the conflict, or null when the name is ours.
 */
export async function takeBackOnConflict(
  files: TreeFiles,
  store: ObjectStore,
  path: string,
  key: string,
  etag: string,
): Promise<{ conflict: NameConflict; takenBack: boolean } | null> {
  const conflict = await fileNameConflict(files, path);
  if (!conflict) return null;
  // Only the version written here: where a DELETE's condition is not atomic (RGW 16 ignores it)
  // it is reaped (a conditional PUT first), so an edit another instance made of the briefly
  // visible file makes the take-back fail and the edited file stays (and so does its version).
  const takenBack = await deleteVersion(store, key, etag).then(
    () => true,
    () => false,
  );
  return { conflict, takenBack };
}

/**
 * Two rivals that saw each other have both taken themselves back. After a random pause, the first
 * to look again finds the way clear and tries once more (this returns); a rival still there has won
 * (NameConflictError), as has one met on the last attempt.
 */
export async function tryAgainAfterRival(
  files: TreeFiles,
  path: string,
  attempt: number,
  conflict: NameConflict,
): Promise<void> {
  if (attempt >= NAME_CONFLICT_TRIES) throw new NameConflictError(conflict);
  await sleep(Math.random() * NAME_CONFLICT_PAUSE_MS * attempt);
  const still = await fileNameConflict(files, path);
  if (still) throw new NameConflictError(still);
}
