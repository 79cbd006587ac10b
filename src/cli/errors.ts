import { isMemvaultError } from '../errors.js';

/** Exit with a one-line message for the operator; never a stack trace unless MEMVAULT_DEBUG is set. */
export function exitWithError(error: unknown): never {
  const message = isMemvaultError(error)
    ? error.message.replace(/^(Error: |memvault: )/, '')
    : error instanceof Error
      ? error.message
      : String(error);
  process.stderr.write(`memvault: ${message}\n`);
  if (process.env['MEMVAULT_DEBUG'] && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
  process.exit(2);
}
