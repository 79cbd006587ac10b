import type { MemoryCommand, ResultContent } from './types.js';
import type { CommandEnv } from './commands/env.js';
import { view } from './commands/view.js';
import { create, insert, strReplace } from './commands/edit.js';
import { remove, rename } from './commands/tree.js';

/** Runs one validated command whose paths are canonical. Errors are thrown as MemvaultError. */
export async function executeCommand(command: MemoryCommand, env: CommandEnv): Promise<ResultContent> {
  // A directory rename another process left half done is finished first (src/vault/tree/stopped.ts).
  await env.tree.finishStopped(
    command.command === 'rename' ? { op: 'rename', from: command.old_path, to: command.new_path } : undefined,
  );
  switch (command.command) {
    case 'view':
      return view(command, env);
    case 'create':
      return create(command, env);
    case 'str_replace':
      return strReplace(command, env);
    case 'insert':
      return insert(command, env);
    case 'delete':
      return remove(command, env);
    case 'rename':
      return rename(command, env);
  }
}
