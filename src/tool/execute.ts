import type { MemoryCommand, ResultContent } from './types.js';
import type { CommandEnv } from './commands/env.js';
import { view } from './commands/view.js';
import { create, insert, strReplace } from './commands/edit.js';
import { remove, rename } from './commands/tree.js';

/** Runs one validated command whose paths are canonical. Errors are thrown as MemvaultError. */
export function executeCommand(command: MemoryCommand, env: CommandEnv): Promise<ResultContent> {
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
