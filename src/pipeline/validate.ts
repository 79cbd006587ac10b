import { isMemvaultError, MemvaultError } from '../errors.js';
import { DEFAULT_LIMITS, type CommandLimits } from '../tool/commands/env.js';
import { messages } from '../tool/messages.js';
import { parseCommand } from '../tool/parse.js';
import type { MemoryCommand } from '../tool/types.js';
import type { Middleware } from './context.js';
import type { InputSizeDecision } from './decisions.js';

export type { InputSizeDecision } from './decisions.js';

/** The limits the input is held to before any work: the ones the commands and the quota will apply. */
export type InputLimits = Pick<CommandLimits, 'maxFileBytes'>;

/**
 * UTF-8 bytes of a string, or its length when that already settles that it is within the limit (a
 * UTF-16 unit is at most three bytes); Buffer.byteLength is native and does not copy.
 */
function utf8Bytes(text: string, limit: number): number {
  return text.length * 3 <= limit ? text.length : Buffer.byteLength(text, 'utf8');
}

function crlfCount(text: string): number {
  let count = 0;
  for (let i = text.indexOf('\r\n'); i !== -1; i = text.indexOf('\r\n', i + 2)) count += 1;
  return count;
}

/**
 * The smallest file each text field of a command implies, in bytes, measured on the input as sent:
 * - create: the file is file_text.
 * - str_replace: old_str must occur in a stored file (at most maxFileBytes; matching a CRLF file
 *   only lengthens it), and the edited file holds all of new_str.
 * - insert: the file holds every line of insert_text; its CRLF pairs may become LF and one final
 *   line break may merge with the file's own, nothing else shrinks.
 * PII redaction runs after this check and may change the length; the quota measures again what is
 * really written. This check only keeps input that no limit can admit from costing any work.
 */
function oversizedField(
  command: MemoryCommand,
  limit: number,
): { field: NonNullable<InputSizeDecision['field']>; bytes: number } | undefined {
  const over = (field: NonNullable<InputSizeDecision['field']>, text: string, slack = () => 0) => {
    const bytes = utf8Bytes(text, limit);
    return bytes > limit && bytes - slack() > limit ? { field, bytes } : undefined;
  };
  switch (command.command) {
    case 'create':
      return over('file_text', command.file_text);
    case 'str_replace':
      return over('old_str', command.old_str) ?? over('new_str', command.new_str);
    case 'insert':
      return over('insert_text', command.insert_text, () => crlfCount(command.insert_text) + 1);
    default:
      return undefined;
  }
}

function tooLarge(
  command: MemoryCommand,
  field: NonNullable<InputSizeDecision['field']>,
  bytes: number,
  limit: number,
): string {
  return field === 'old_str'
    ? messages.oldStrTooLarge(bytes, limit)
    : messages.inputTooLarge(command.command, field, bytes, limit);
}

/**
 * Parses the untrusted input into `ctx.command`, or answers with the parse error; then refuses,
 * before the path guard, the PII redactor or any store request, a text field that no file within
 * `limits.maxFileBytes` could hold. Always on; the default chain builds it with the limits the
 * commands and the quota use (one source of truth).
 */
export function validateInputWithin(limits: InputLimits): Middleware {
  const limit = limits.maxFileBytes;
  return async (ctx, next) => {
    try {
      ctx.command = parseCommand(ctx.input);
    } catch (error) {
      if (isMemvaultError(error)) throw error;
      // Whatever else the untrusted input did while being read (a throwing getter, a proxy), it is
      // the input's fault: answer it as invalid input, never as an internal failure.
      throw new MemvaultError('INVALID_INPUT', messages.unreadableInput, { cause: error });
    }
    const oversized = oversizedField(ctx.command, limit);
    if (oversized) {
      ctx.decisions.validate = { refused: true, field: oversized.field, bytes: oversized.bytes, limit };
      throw new MemvaultError('TOO_LARGE', tooLarge(ctx.command, oversized.field, oversized.bytes, limit));
    }
    return next();
  };
}

/** validateInputWithin the default limits (the default chain passes the configured ones). */
export const validateInput: Middleware = validateInputWithin(DEFAULT_LIMITS);
