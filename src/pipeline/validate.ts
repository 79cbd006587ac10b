import { isMemvaultError } from '../errors.js';
import { parseCommand } from '../tool/parse.js';
import type { Middleware } from './context.js';

/** Parses the untrusted input into `ctx.command`, or answers with the parse error. Always on. */
export const validateInput: Middleware = async (ctx, next) => {
  try {
    ctx.command = parseCommand(ctx.input);
  } catch (error) {
    if (isMemvaultError(error)) return { content: error.message, isError: true, code: error.code };
    throw error;
  }
  return next();
};
