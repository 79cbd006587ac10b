import type { CommandSettings } from '../tool/commands/env.js';
import { commandEnv } from '../tool/commands/command-env.js';
import { executeCommand } from '../tool/execute.js';
import type { CommandContext, CommandResult } from './context.js';

export interface TerminalOptions {
  env: CommandSettings;
}

/**
 * The innermost step: runs the command. It throws what the command throws; the error boundary
 * (error-result.ts, `withErrorBoundary`) turns it into the model's answer.
 */
export function terminal(options: TerminalOptions): (ctx: CommandContext) => Promise<CommandResult> {
  return async (ctx) => {
    // A chain without validation or the path guard is a programming error, not the model's.
    if (!ctx.command || !ctx.pathsCanonical) throw new Error('command reached the store without a canonical path');
    const content = await executeCommand(
      ctx.command,
      commandEnv(ctx.files, { ...options.env, ...(ctx.writeFilter ? { writeFilter: ctx.writeFilter } : {}) }),
      ctx.precondition,
    );
    return { content, isError: false };
  };
}
