/**
 * The directory operations a command calls (src/tool/commands/tree.ts), behind one small interface.
 * `journalledTree` runs them on any ObjectStore with the protocols of this folder: fences, rename
 * journals, their heartbeat, and the resumption of a rename whose runner stopped. A store that can
 * run a whole command as one transaction supplies its own TreeOperations instead, and needs none of
 * that machinery (nor `finishStopped`: no command of it is ever left part-way).
 */
import type { TreeEnv } from './env.js';
import type { TreeOperation } from './journal.js';
import { deleteTree, renameTree } from './operations.js';
import { finishStoppedRenames } from './stopped.js';

export interface TreeOperations {
  /** Delete the file or directory at `path`, under the user's tree lock (held by the caller). */
  remove(path: string, env: TreeEnv): Promise<void>;
  /** Rename a file or a directory, under the user's tree lock (held by the caller). */
  rename(from: string, to: string, env: TreeEnv): Promise<void>;
  /**
   * Before a command runs: finish the user's renames whose runner stopped part-way, except the
   * command's own (`except`, which resumes its journal itself). Returns how many were finished.
   */
  finishStopped?(env: TreeEnv, except?: TreeOperation): Promise<number>;
}

/** The protocols over an object store: fences for deletes, journals for directory renames. */
export const journalledTree: TreeOperations = {
  remove: deleteTree,
  rename: renameTree,
  finishStopped: finishStoppedRenames,
};

export type { TreeEnv, TreeLimits, TreeMessages } from './env.js';
export type { TreeOperation } from './journal.js';
