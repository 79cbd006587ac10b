import { createHmac, randomBytes } from 'node:crypto';
import { MemvaultError } from '../errors.js';
import { countByType, redact, scan } from '../pii/index.js';
import { cleanSegmentsMemo, scopedSegments, type CleanSegments } from '../pii/clean-segments.js';
import { redactEdit, redactPathValues, replaceFindings } from '../pii/edit.js';
import type { PiiFinding, PiiType, RedactOptions } from '../pii/index.js';
import type { WriteFilter } from '../tool/commands/env.js';
import { messages } from '../tool/messages.js';
import type { MemoryCommand } from '../tool/types.js';
import type { CommandContext, CommandResult, Middleware } from './context.js';
import type { PiiDecision } from './decisions.js';

export type { PiiDecision } from './decisions.js';
import { canonicalizePath } from './path-guard.js';

/** Same knobs as `redact` (policy per type, allow-list, phone regions), and the key for redacted names. */
export interface PiiMiddlewareOptions extends RedactOptions {
  /**
   * Key of the hash that makes redacted file names unique (`REDACTED-EMAIL-1a2b3c4d`). Give every
   * process of a deployment the same secret so a name maps to the same stored name everywhere;
   * default: a random key per process (names are stable until it restarts).
   */
  pathKey?: Uint8Array | string;
}

/**
 * Clean path segments one redactor remembers, each user's apart (pii/clean-segments.ts): an entry
 * is a user id and a segment of at most 255 bytes, a few MiB at most.
 */
const CLEAN_SEGMENTS_REMEMBERED = 4096;

function refuse(content: string, code: 'PII_REJECTED' | 'INVALID_PATH' = 'PII_REJECTED'): CommandResult {
  return { content, isError: true, code };
}

type PathField = 'path' | 'old_path' | 'new_path';

/** Path fields of a command, and whether the command stores something under that name. */
function pathFields(command: MemoryCommand): Array<{ field: PathField; written: boolean }> {
  switch (command.command) {
    case 'create':
      return [{ field: 'path', written: true }];
    case 'rename':
      return [
        { field: 'old_path', written: false },
        { field: 'new_path', written: true },
      ];
    default:
      return [{ field: 'path', written: false }];
  }
}

/**
 * Strips personal data and secrets from everything a command stores. Runs after the path guard,
 * so `ctx.command` is parsed and its paths canonical.
 *
 * - Paths: a name a command writes (create, rename destination) with a `reject` type is refused;
 *   other values in any path are replaced by `REDACTED-<TYPE>-<hash>` (see redactPathValues), the
 *   same for the path a command writes and the paths it looks up, so the model can keep using the
 *   name it wrote.
 * - create: `file_text` is the whole new file; it is scanned and redacted here.
 * - str_replace / insert: the command is left as the model wrote it (old_str matches verbatim, so
 *   any text the model can see can be edited, and an error never quotes a placeholder the model did
 *   not write). Instead the middleware hands the command a write filter (`ctx.writeFilter`) that
 *   scans what the file will hold after the edit, around the change, and redacts that or refuses
 *   the edit: the same final file gets the same redaction whichever way it was produced.
 */
export function piiRedactor(options?: PiiMiddlewareOptions): Middleware {
  const pathKey = options?.pathKey ?? randomBytes(32);
  const clean = cleanSegmentsMemo(CLEAN_SEGMENTS_REMEMBERED);
  return async (ctx, next) => {
    const command = ctx.command;
    if (command === undefined) return next();
    const decision: PiiDecision = { action: 'none', findings: {} };

    const pathResult = redactPaths(ctx, command, pathKey, options, scopedSegments(clean, ctx.uid));
    if (pathResult !== undefined) {
      ctx.decisions.pii = decision;
      decision.pathFindings = countByType(pathResult.findings);
      if (pathResult.refusal !== undefined) {
        decision.action = 'rejected';
        if (pathResult.rejected.length > 0) decision.rejected = pathResult.rejected;
        return pathResult.refusal;
      }
      decision.action = 'redacted';
    }

    if (command.command === 'create') {
      ctx.decisions.pii = decision;
      const { findings, rejected } = scan(command.file_text, options);
      if (!record(decision, findings, rejected)) return refuse(messages.piiRejected(rejected));
      if (findings.length > 0)
        ctx.command = { ...(ctx.command as typeof command), file_text: replaceFindings(command.file_text, findings) };
    } else if (command.command === 'str_replace' || command.command === 'insert') {
      ctx.decisions.pii = decision;
      ctx.writeFilter = editFilter(decision, options);
    }
    return next();
  };
}

/** Adds findings to the decision; false when the policy refuses the write. */
function record(decision: PiiDecision, findings: readonly PiiFinding[], rejected: readonly PiiType[]): boolean {
  decision.findings = countByType(findings);
  if (rejected.length > 0) {
    decision.action = 'rejected';
    decision.rejected = [...rejected];
    return false;
  }
  if (findings.length > 0) decision.action = 'redacted';
  return true;
}

function editFilter(decision: PiiDecision, options: RedactOptions | undefined): WriteFilter {
  const pathAction = decision.action;
  return {
    edited(_path, before, after) {
      // An edit is retried on a write conflict: each attempt decides afresh.
      decision.action = pathAction;
      delete decision.rejected;
      const result = redactEdit(before, after, options);
      if (!record(decision, result.findings, result.rejected))
        throw new MemvaultError('PII_REJECTED', messages.piiRejected(result.rejected));
      if (result.redactsStored) decision.redactedStored = true;
      else delete decision.redactedStored;
      return { text: result.text, redactedStored: result.redactsStored };
    },
    storedForm(oldStr) {
      const { text, findings } = redact(oldStr, options);
      return findings.length === 0 ? undefined : text;
    },
  };
}

/**
 * Applies the policy to the command's paths. Undefined when no path holds a finding; otherwise the
 * findings, and a refusal when a written name has a `reject` type or its redacted form is not a
 * valid path. On redaction `ctx.command` gets the new paths.
 */
function redactPaths(
  ctx: CommandContext,
  command: MemoryCommand,
  pathKey: Uint8Array | string,
  options: RedactOptions | undefined,
  clean: CleanSegments,
): { findings: PiiFinding[]; rejected: PiiType[]; refusal?: CommandResult } | undefined {
  const tag = (value: string) =>
    createHmac('sha256', pathKey).update(ctx.uid).update('\0').update(value).digest('hex').slice(0, 8);
  const fields = command as unknown as Record<PathField, string>;
  const updated: Partial<Record<PathField, string>> = {};
  const findings: PiiFinding[] = [];
  for (const { field, written } of pathFields(command)) {
    const result = redactPathValues(fields[field], tag, options, clean);
    if (result.findings.length === 0) continue;
    findings.push(...result.findings);
    if (written && result.rejected.length > 0)
      return { findings, rejected: result.rejected, refusal: refuse(messages.piiPathRejected(result.rejected)) };
    // A path that is only looked up keeps a rejected value: no file can have been stored under it.
    if (result.rejected.length > 0) continue;
    try {
      updated[field] = canonicalizePath(result.path);
    } catch (error) {
      if (!(error instanceof MemvaultError)) throw error;
      // The placeholder made a name too long: say so without echoing the value.
      return { findings, rejected: [], refusal: refuse(messages.piiPathTooLong(), 'INVALID_PATH') };
    }
  }
  if (findings.length === 0) return undefined;
  ctx.command = { ...command, ...updated };
  return { findings, rejected: [] };
}

/**
 * A path or other short string with every detected item replaced, for audit records and logs
 * (e.g. `/memories/[REDACTED:EMAIL]/notes.md`). Uses the default policy: everything is redacted,
 * whatever the write policy is, because logs must never carry the data.
 */
export function redactForLog(text: string): string {
  return redact(text).text;
}
