/**
 * A directory rename whose runner is gone is finished by memvault itself (src/vault/tree/stopped.ts):
 * by the next command of its user, before that command answers (CommandEnv.tree.finishStopped), and
 * by the sweeper. This is the sweeper's way in, with the protocol's texts.
 */
import type { TreeFiles } from '../../vault/tree-files.js';
import * as tree from '../../vault/tree/stopped.js';
import { messages } from '../messages.js';
import { DEFAULT_LIMITS, type CommandLimits } from './env.js';

export { journalLookInterval, type StoppedRenames } from '../../vault/tree/stopped.js';

/** The sweeper's way in (SweepOptions.finishStoppedRenames), with no look interval. */
export function stoppedRenameFinisher(
  filesOf: (storeUid: string) => Promise<TreeFiles>,
  limits: CommandLimits = DEFAULT_LIMITS,
): (storeUid: string) => Promise<tree.StoppedRenames> {
  return tree.stoppedRenameFinisher(filesOf, limits, messages);
}
