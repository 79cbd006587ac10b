import { MemvaultError } from '../errors.js';
import { messages } from './messages.js';
import { COMMAND_NAMES, type CommandName, type MemoryCommand } from './types.js';

/**
 * Turns the untrusted tool input into a typed command, or a MemvaultError('INVALID_INPUT') whose
 * message tells the model which field is wrong and what it must be. Unknown extra fields are
 * ignored (the protocol may grow); values are never coerced (a string "3" is not a line number).
 */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number') return `the number ${String(value)}`;
  return typeof value === 'object' || typeof value === 'undefined' ? `an ${typeof value}` : `a ${typeof value}`;
}

function invalid(message: string): MemvaultError {
  return new MemvaultError('INVALID_INPUT', `Error: ${message}`);
}

function requireString(input: Record<string, unknown>, field: string, command: string): string {
  const value = input[field];
  if (value === undefined) throw invalid(`The ${command} command needs \`${field}\` (a string), and it is missing.`);
  if (typeof value !== 'string') throw invalid(`\`${field}\` of ${command} must be a string, not ${describe(value)}.`);
  return value;
}

/** A text the command writes into a file: a NUL would make the file binary to view and to every edit (text.ts, decodeText). */
function requireText(input: Record<string, unknown>, field: string, command: string): string {
  const value = requireString(input, field, command);
  if (value.includes('\u0000')) throw new MemvaultError('INVALID_INPUT', messages.nulInText(command, field));
  return value;
}

function optionalText(input: Record<string, unknown>, field: string, command: string): string | undefined {
  return input[field] === undefined || input[field] === null ? undefined : requireText(input, field, command);
}

/** A short, safe rendering of an unknown command name for the error message. */
function showName(value: unknown): string {
  let text: string;
  try {
    // Not every value is JSON: BigInt throws, a cycle throws, a getter may throw.
    text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    text = describe(value);
  }
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
  return clean.length > 40 ? `${clean.slice(0, 40)}…` : clean;
}

export function parseCommand(input: unknown): MemoryCommand {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw invalid(`The tool input must be an object with a \`command\` field, not ${describe(input)}.`);
  }
  const fields = input as Record<string, unknown>;
  const name = fields['command'];
  if (typeof name !== 'string' || !(COMMAND_NAMES as readonly string[]).includes(name)) {
    if (name === undefined)
      throw invalid(`The tool input has no \`command\`. Valid commands are: ${COMMAND_NAMES.join(', ')}.`);
    throw invalid(`Unknown command "${showName(name)}". Valid commands are: ${COMMAND_NAMES.join(', ')}.`);
  }
  const command = name as CommandName;
  switch (command) {
    case 'view': {
      const path = requireString(fields, 'path', command);
      const range = fields['view_range'];
      if (range === undefined || range === null) return { command, path };
      if (
        !Array.isArray(range) ||
        range.length !== 2 ||
        !range.every((n) => typeof n === 'number' && Number.isSafeInteger(n))
      ) {
        throw invalid(
          `\`view_range\` must be two whole numbers [start, end] (end = -1 for the end of the file), not ${showName(range)}.`,
        );
      }
      return { command, path, view_range: [range[0] as number, range[1] as number] };
    }
    case 'create':
      return {
        command,
        path: requireString(fields, 'path', command),
        file_text: requireText(fields, 'file_text', command),
      };
    case 'str_replace':
      return {
        command,
        path: requireString(fields, 'path', command),
        old_str: requireString(fields, 'old_str', command),
        // The protocol makes new_str optional: a missing new_str deletes old_str.
        new_str: optionalText(fields, 'new_str', command) ?? '',
      };
    case 'insert': {
      const path = requireString(fields, 'path', command);
      const line = fields['insert_line'];
      if (line === undefined)
        throw invalid('The insert command needs `insert_line` (a whole number from 0), and it is missing.');
      // Numbers out of range or not whole get the spec's message, which names the file's line
      // range, from the insert command itself; values that are not numbers at all stop here.
      if (typeof line !== 'number' || !Number.isFinite(line)) {
        throw invalid(
          `Invalid \`insert_line\` parameter: ${showName(line)}. It must be a whole number from 0 (0 inserts at the start of the file).`,
        );
      }
      return { command, path, insert_line: line, insert_text: requireText(fields, 'insert_text', command) };
    }
    case 'delete':
      return { command, path: requireString(fields, 'path', command) };
    case 'rename':
      return {
        command,
        old_path: requireString(fields, 'old_path', command),
        new_path: requireString(fields, 'new_path', command),
      };
  }
}

/** The path fields of a command, by name (the path guard rewrites each of them). */
export function pathFieldsOf(command: MemoryCommand): Array<'path' | 'old_path' | 'new_path'> {
  return command.command === 'rename' ? ['old_path', 'new_path'] : ['path'];
}
