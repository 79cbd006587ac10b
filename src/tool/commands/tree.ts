/**
 * The delete and rename commands: the argument checks only a command makes (/memories itself, a
 * move into itself), the user's tree lock, the tree operation (src/vault/tree/), the answer.
 */
import type { DeleteCommand, RenameCommand } from '../types.js';
import { messages } from '../messages.js';
import { isWithin, MEMORY_ROOT } from '../../vault/paths.js';
import { fail, type CommandEnv } from './env.js';

export { journalPath, RENAME_JOURNAL_TTL_MS, RESERVED_DIR } from '../../vault/tree/journal.js';

export async function remove(command: DeleteCommand, env: CommandEnv): Promise<string> {
  const { path } = command;
  if (path === MEMORY_ROOT) fail('INVALID_PATH', messages.deleteRoot());
  return env.locks.withTree(env.files.uid, async () => {
    await env.tree.remove(path);
    return messages.deleted(path);
  });
}

export async function rename(command: RenameCommand, env: CommandEnv): Promise<string> {
  const from = command.old_path;
  const to = command.new_path;
  if (from === MEMORY_ROOT) fail('INVALID_PATH', messages.renameRoot());
  if (to === MEMORY_ROOT) fail('ALREADY_EXISTS', messages.destinationExists(to));
  // Onto itself: the destination exists exactly when the source does; a missing source has the
  // spec's answer for one.
  if (from === to) {
    if (await exists(from, env)) fail('ALREADY_EXISTS', messages.destinationExists(to));
    fail('NOT_FOUND', messages.renameMissing(from));
  }
  if (isWithin(to, from)) fail('INVALID_PATH', messages.renameIntoItself(from, to));
  return env.locks.withTree(env.files.uid, async () => {
    await env.tree.rename(from, to);
    return messages.renamed(from, to);
  });
}

/** Whether a file or a directory (a file below it) is at `path`. */
async function exists(path: string, env: CommandEnv): Promise<boolean> {
  if (await env.files.read(path)) return true;
  for await (const _ of env.files.listFiles(path)) return true;
  return false;
}
