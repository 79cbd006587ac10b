import type { MemoryCommand, ResultContent } from './types.js';
import type { CommandEnv } from './commands/env.js';
import { view } from './commands/view.js';
import { create, insert, strReplace } from './commands/edit.js';
import { remove, rename } from './commands/tree.js';
import { createIf, removeIf } from './commands/conditional.js';
import { fail } from './commands/env.js';
import { messages } from './messages.js';
import type { Precondition } from './commands/env.js';

/**
 * Runs one validated command whose paths are canonical. Errors are thrown as MemvaultError. A host's
 * `precondition` makes a create or delete conditional (commands/conditional.ts); on any other command it is refused.
 */
export async function executeCommand(
  command: MemoryCommand,
  env: CommandEnv,
  precondition?: Precondition,
): Promise<ResultContent> {
  if (precondition !== undefined && command.command !== 'create' && command.command !== 'delete')
    fail('INVALID_INPUT', messages.preconditionUnsupported(command.command));
  // A directory rename another process left half done is finished first (src/vault/tree/stopped.ts).
  await env.tree.finishStopped(
    command.command === 'rename' ? { op: 'rename', from: command.old_path, to: command.new_path } : undefined,
  );
  switch (command.command) {
    case 'view':
      return view(command, env);
    case 'create':
      return precondition ? createIf(command, precondition, env) : create(command, env);
    case 'str_replace':
      return strReplace(command, env);
    case 'insert':
      return insert(command, env);
    case 'delete':
      return precondition ? removeIf(command, precondition, env) : remove(command, env);
    case 'rename':
      return rename(command, env);
  }
}
