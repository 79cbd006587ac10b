import { isMemvaultError } from '../errors.js';
import { parseCommand } from '../tool/parse.js';
import type { Middleware } from './context.js';

/** Parses the untrusted input into `ctx.command`, or answers with the parse error. Always on. */
export const validateInput: Middleware = async (ctx, next) => {
  try {
    ctx.command = parseCommand(ctx.input);
  } catch (error) {
    if (isMemvaultError(error)) return { content: error.message, isError: true, code: error.code };
    // Whatever else the untrusted input did while being read (a throwing getter, a proxy), it is
    // the input's fault: answer it as invalid input, never as an internal failure.
    return { content: 'Error: The tool input could not be read as a memory command object.', isError: true, code: 'INVALID_INPUT' };
  }
  return next();
};
