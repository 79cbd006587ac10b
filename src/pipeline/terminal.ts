import { INTERNAL_ERROR_MESSAGE } from '../errors.js';
import type { CommandEnv } from '../tool/commands/env.js';
import { executeCommand } from '../tool/execute.js';
import type { CommandContext, CommandResult } from './context.js';
import { errorResult } from './error-result.js';

export interface TerminalOptions {
  env: Omit<CommandEnv, 'files'>;
  /** Called with unexpected faults (never shown to the model). */
  onInternalError(error: unknown, ctx: CommandContext): void;
}

/** The innermost step: runs the command and turns errors into results the model can act on. */
export function terminal(options: TerminalOptions): (ctx: CommandContext) => Promise<CommandResult> {
  return async (ctx) => {
    if (!ctx.command || !ctx.pathsCanonical) {
      // A chain without validation or the path guard is a programming error, not the model's.
      options.onInternalError(new Error('command reached the store without a canonical path'), ctx);
      return { content: INTERNAL_ERROR_MESSAGE, isError: true, code: 'INTERNAL' };
    }
    try {
      const content = await executeCommand(ctx.command, { ...options.env, files: ctx.files, ...(ctx.writeFilter ? { writeFilter: ctx.writeFilter } : {}) });
      return { content, isError: false };
    } catch (error) {
      return errorResult(error, (e) => options.onInternalError(e, ctx));
    }
  };
}
