import { knownCommandName, sanitizeDecisions, type AuditEntry } from '../audit/record.js';
import type { MemoryCommand } from '../tool/types.js';
import type { CommandContext, CommandResult } from './context.js';

export interface CommandRecordOptions {
  /**
   * Applied to canonical paths before they are recorded. The vault passes the PII redactor's
   * function, so an e-mail address in a file name is recorded as its placeholder. Default: identity.
   */
  redactPath?: (path: string, ctx: CommandContext) => string;
  /** Record the raw user id (from `rawUserIdOf`) next to the pseudonymous uid. Default false. */
  includeUserId?: boolean;
  rawUserIdOf?: (ctx: CommandContext) => string | undefined;
  /**
   * The uid to record for a command (the vault passes the user's audit pseudonym, src/audit/pseudonyms.ts,
   * so that erasure unlinks it). Default, or when it returns undefined: `ctx.uid`.
   */
  auditUidOf?: (ctx: CommandContext) => string | undefined;
}

export type CommandOutcome = Pick<CommandResult, 'isError' | 'code'>;

/**
 * Builds a command's audit entry from an allow-list of context fields. Nothing is copied
 * wholesale: `ctx.input` (the model's raw object, with file text and raw paths) is read only for
 * its command name, and only when that name is one of the six; paths are taken only from a command
 * whose paths the guard has made canonical, and only after `redactPath`.
 */
export function commandEntry(
  ctx: CommandContext,
  outcome: CommandOutcome,
  latencyMs: number,
  options: CommandRecordOptions = {},
): AuditEntry {
  const entry: AuditEntry = {
    type: 'command',
    requestId: ctx.requestId,
    uid: options.auditUidOf?.(ctx) ?? ctx.uid,
    command: knownCommandName(ctx.command?.command ?? commandNameOfInput(ctx.input)),
    outcome: outcome.isError ? 'error' : 'ok',
    bytesRead: ctx.stats.bytesRead,
    bytesWritten: ctx.stats.bytesWritten,
    requests: { ...ctx.stats.requests },
    latencyMs: Math.round(latencyMs * 1000) / 1000,
  };
  if (ctx.actor !== undefined) entry.actor = ctx.actor;
  if (outcome.code !== undefined) entry.code = outcome.code;
  else if (outcome.isError) entry.code = 'UNSPECIFIED';
  const decisions = sanitizeDecisions(ctx.decisions);
  if (decisions) entry.decisions = decisions;
  if (options.includeUserId && options.rawUserIdOf) {
    const userId = options.rawUserIdOf(ctx);
    if (userId !== undefined) entry.userId = userId;
  }
  if (ctx.pathsCanonical && ctx.command) {
    const redactPath = options.redactPath;
    const redact = redactPath ? (path: string) => redactPath(path, ctx) : (path: string) => path;
    const [path, newPath] = pathsOf(ctx.command);
    const redactedPath = safeRedact(redact, path);
    if (redactedPath !== undefined) entry.path = redactedPath;
    if (newPath !== undefined) {
      const redactedNewPath = safeRedact(redact, newPath);
      if (redactedNewPath !== undefined) entry.newPath = redactedNewPath;
    }
  }
  return entry;
}

function commandNameOfInput(input: unknown): unknown {
  return typeof input === 'object' && input !== null ? (input as { command?: unknown }).command : undefined;
}

function pathsOf(command: MemoryCommand): [string, string?] {
  return command.command === 'rename' ? [command.old_path, command.new_path] : [command.path];
}

/** A redactor that throws must not let the unredacted path through: the path is left out instead. */
function safeRedact(redact: (path: string) => string, path: string): string | undefined {
  try {
    return redact(path);
  } catch {
    return undefined;
  }
}
