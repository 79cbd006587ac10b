/**
 * The directory operations a command calls (src/tool/commands/tree.ts), behind one small interface.
 * `journalledTree` runs them on any ObjectStore with the protocols of this folder: fences, rename
 * journals, their heartbeat, and the resumption of a rename whose runner stopped. A store that can
 * run a whole command as one transaction supplies its own TreeOperations instead, and needs none of
 * that machinery.
 */
import type { TreeEnv } from './env.js';
import { deleteTree, renameTree } from './operations.js';

export interface TreeOperations {
  /** Delete the file or directory at `path`, under the user's tree lock (held by the caller). */
  remove(path: string, env: TreeEnv): Promise<void>;
  /** Rename a file or a directory, under the user's tree lock (held by the caller). */
  rename(from: string, to: string, env: TreeEnv): Promise<void>;
}

/** The protocols over an object store: fences for deletes, journals for directory renames. */
export const journalledTree: TreeOperations = { remove: deleteTree, rename: renameTree };

export type { TreeEnv, TreeLimits, TreeMessages } from './env.js';
