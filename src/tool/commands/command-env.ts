/**
 * A command's environment for one user: the commands see their files as UserFiles (what a command
 * needs), and reach the rest of the storage protocol (fences, journals, deletes) only through the
 * tree operations, bound here to the user's TreeFiles with the protocol's texts.
 */
import type { TreeFiles } from '../../vault/tree-files.js';
import { newFenceId } from '../../store/fence.js';
import { journalledTree, type TreeEnv } from '../../vault/tree/index.js';
import { withdrawCopy } from '../../vault/tree/fences.js';
import { messages } from '../messages.js';
import type { CommandEnv, CommandSettings } from './env.js';

/** What the tree operations need of a command: the user's files, the vault's locks, two limits, the texts. */
export function treeEnv(files: TreeFiles, settings: Pick<CommandSettings, 'locks' | 'limits'>): TreeEnv {
  return { files, locks: settings.locks, limits: settings.limits, messages };
}

/** The command's environment over `files`: the store's own tree operations when it has them, else the journalled protocols. */
export function commandEnv(files: TreeFiles, settings: CommandSettings): CommandEnv {
  const { tree: operations = journalledTree, ...rest } = settings;
  const env = treeEnv(files, settings);
  return {
    ...rest,
    files,
    tree: {
      remove: (path) => operations.remove(path, env),
      // One fence of exactly this version: a conditional delete where the store has one, else a marker put If-Match.
      removeExactly: (path, etag) => withdrawCopy(path, etag, newFenceId(), env),
      rename: (from, to) => operations.rename(from, to, env),
      finishStopped: async (except) => (operations.finishStopped ? operations.finishStopped(env, except) : 0),
    },
  };
}
