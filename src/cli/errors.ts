import { readEnv } from '../config/env.js';
import { CommanderError, InvalidArgumentError } from 'commander';
import { isMemvaultError, type ErrorCode } from '../errors.js';

/**
 * The exit codes of every memvault command (README, "The CLI"):
 *   0  done
 *   1  a check failed: verify found a broken chain, doctor found something missing, export refused
 *      an unverified chain, expire could not handle some files
 *   2  usage or configuration: a flag, an input file, the store URL or the key is wrong or missing
 *   3  runtime: the store or KMS failed or is unreachable, the store is inconsistent, an I/O error
 */
export const EXIT = { ok: 0, checkFailed: 1, usage: 2, runtime: 3 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error the CLI reports as one line with a chosen exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.usage,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'CliError';
  }
}

export const usageError = (message: string, cause?: unknown): CliError =>
  new CliError(message, EXIT.usage, cause !== undefined ? { cause } : undefined);
export const runtimeError = (message: string, cause?: unknown): CliError =>
  new CliError(message, EXIT.runtime, cause !== undefined ? { cause } : undefined);
export const checkFailed = (message: string): CliError => new CliError(message, EXIT.checkFailed);

const USAGE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'CONFIG',
  'INVALID_USER',
  'INVALID_INPUT',
  'INVALID_PATH',
  'KEY_UNAVAILABLE',
  'NOT_FOUND',
]);

export function exitCodeOf(error: unknown): ExitCode {
  if (error instanceof CliError) return error.exitCode;
  if (error instanceof InvalidArgumentError || error instanceof CommanderError) return EXIT.usage;
  if (isMemvaultError(error)) return USAGE_CODES.has(error.code) ? EXIT.usage : EXIT.runtime;
  return EXIT.runtime;
}

/** The one line an operator reads: no stack, no "Error: " prefixes, only the first line of a message. */
export function errorLine(error: unknown): string {
  const raw = error instanceof Error ? error.message : String(error);
  const message = raw
    .replace(/^(Error: |memvault: |error: )+/, '')
    .split('\n')[0]!
    .trim();
  const errno = (error as { code?: unknown } | null)?.code;
  // A Node system error without a memvault wording (EACCES on an output file...) keeps its code.
  const suffix =
    !isMemvaultError(error) &&
    !(error instanceof CliError) &&
    typeof errno === 'string' &&
    /^E[A-Z]+$/.test(errno) &&
    !message.includes(errno)
      ? ` (${errno})`
      : '';
  return `memvault: ${message.length > 0 ? message : 'failed'}${suffix}\n`;
}

/** Report an error as one line and return its exit code; the stack only with MEMVAULT_DEBUG. */
export function reportError(
  error: unknown,
  write: (text: string) => void = (t) => void process.stderr.write(t),
): ExitCode {
  write(errorLine(error));
  if (readEnv(process.env, 'debug') !== undefined && error instanceof Error && error.stack) write(`${error.stack}\n`);
  return exitCodeOf(error);
}

/** Exit with a one-line message for the operator; never a stack trace unless MEMVAULT_DEBUG is set. */
export function exitWithError(error: unknown): never {
  process.exit(reportError(error));
}
