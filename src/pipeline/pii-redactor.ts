import { countByType, describeTypes, redact, scan } from '../pii/index.js';
import type { PiiFinding, PiiType, RedactOptions } from '../pii/index.js';
import type { MemoryCommand } from '../tool/types.js';
import type { CommandResult, Middleware } from './context.js';

/** Same knobs as `redact`: policy per type, allow-list, phone regions. */
export type PiiMiddlewareOptions = RedactOptions;

/** What the middleware writes to `ctx.decisions.pii`: counts only, never values. */
export interface PiiDecision {
  action: 'none' | 'redacted' | 'rejected';
  /** Findings by type in the text that would be written. */
  findings: Partial<Record<PiiType, number>>;
  /** Types refused by policy (only when action is 'rejected'). */
  rejected?: PiiType[];
  /** Placeholders put into str_replace.old_str so it matches text redacted when it was stored. */
  oldStrRedacted?: number;
}

/** The text a command would write, and where it goes back into the command. */
function writtenText(command: MemoryCommand): { text: string; put: (text: string) => MemoryCommand } | undefined {
  switch (command.command) {
    case 'create':
      return { text: command.file_text, put: (file_text) => ({ ...command, file_text }) };
    case 'str_replace':
      return { text: command.new_str, put: (new_str) => ({ ...command, new_str }) };
    case 'insert':
      return { text: command.insert_text, put: (insert_text) => ({ ...command, insert_text }) };
    default:
      return undefined;
  }
}

function rejection(types: readonly PiiType[]): CommandResult {
  return {
    content:
      `Error: Nothing was saved: the text contains ${describeTypes(types)}, which may not be stored in memory. ` +
      'Remove it (or replace it with a short description) and try again.',
    isError: true,
    code: 'PII_REJECTED',
  };
}

function replaceFindings(text: string, findings: readonly PiiFinding[]): string {
  let out = '';
  let last = 0;
  for (const f of findings) {
    out += `${text.slice(last, f.start)}[REDACTED:${f.type}]`;
    last = f.end;
  }
  return out + text.slice(last);
}

/**
 * Strips personal data and secrets before anything is written. Runs after the path guard, so
 * `ctx.command` is parsed. For create / str_replace / insert it scans the text to be written:
 * a type whose policy is `reject` refuses the command (the model is told the kind of data, never
 * the data) without calling the rest of the chain; other findings are replaced by
 * `[REDACTED:TYPE]`. `str_replace.old_str` is redacted the same way (never rejected: it is not
 * written), so an edit still matches text that was redacted when it was stored.
 */
export function piiRedactor(options?: PiiMiddlewareOptions): Middleware {
  return async (ctx, next) => {
    const command = ctx.command;
    if (command === undefined) return next();
    const target = writtenText(command);
    if (target === undefined) return next();

    const { findings, rejected } = scan(target.text, options);
    const decision: PiiDecision = { action: 'none', findings: countByType(findings) };
    ctx.decisions.pii = decision;
    if (rejected.length > 0) {
      decision.action = 'rejected';
      decision.rejected = rejected;
      return rejection(rejected);
    }

    let updated = findings.length > 0 ? target.put(replaceFindings(target.text, findings)) : command;
    if (findings.length > 0) decision.action = 'redacted';
    if (updated.command === 'str_replace') {
      const old = redact(updated.old_str, options);
      if (old.findings.length > 0) {
        updated = { ...updated, old_str: old.text };
        decision.oldStrRedacted = old.findings.length;
      }
    }
    ctx.command = updated;
    return next();
  };
}

/**
 * A path or other short string with every detected item replaced, for audit records and logs
 * (e.g. `/memories/[REDACTED:EMAIL]/notes.md`). Uses the default policy: everything is redacted,
 * whatever the write policy is, because logs must never carry the data.
 */
export function redactForLog(text: string): string {
  return redact(text).text;
}
