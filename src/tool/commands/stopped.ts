/**
 * A directory rename whose runner is gone is finished by memvault itself (src/vault/tree/stopped.ts):
 * by the next command of its user, before that command answers, and by the sweeper. These are the
 * ways in with a command's environment and the protocol's texts.
 */
import type { UserFiles } from '../../vault/user-files.js';
import type { TreeOperation } from '../../vault/tree/journal.js';
import * as tree from '../../vault/tree/stopped.js';
import { messages } from '../messages.js';
import { DEFAULT_LIMITS, type CommandEnv, type CommandLimits } from './env.js';
import { treeEnv } from './tree.js';

export { journalLookInterval, type StoppedRenames } from '../../vault/tree/stopped.js';

/** Finish the user's stopped renames (at most once per journalLookInterval), before the command runs. */
export function finishStoppedRenames(env: CommandEnv, except?: TreeOperation): Promise<number> {
  return tree.finishStoppedRenames(treeEnv(env), except);
}

/** The sweeper's way in (SweepOptions.finishStoppedRenames), with no look interval. */
export function stoppedRenameFinisher(
  filesOf: (storeUid: string) => Promise<UserFiles>,
  limits: CommandLimits = DEFAULT_LIMITS,
): (storeUid: string) => Promise<tree.StoppedRenames> {
  return tree.stoppedRenameFinisher(filesOf, limits, messages);
}
