import { INTERNAL_ERROR_MESSAGE, isMemvaultError, type ErrorCode, type MemvaultError } from '../errors.js';
import type { CommandContext, CommandResult, Middleware } from './context.js';

/**
 * Codes whose messages describe the infrastructure (the store, the key service, the deployment),
 * never the model's own input. Their text is written to name no key, ARN, account, bucket, endpoint
 * or host path; scrubbing them here is the backstop for a message that slips (an SDK error name, a
 * future message). Messages of the other codes echo the model's own input (paths, old_str) and
 * reach it unchanged, as the spec's wording requires.
 */
const INFRASTRUCTURE_CODES: ReadonlySet<ErrorCode> = new Set([
  'STORE_UNAVAILABLE',
  'KEY_UNAVAILABLE',
  'INTEGRITY',
  'CONFIG',
  'INTERNAL',
  'PRECONDITION_FAILED',
]);

const SCRUBS: Array<[RegExp, string]> = [
  [/\barn:aws[a-z-]*:[^\s"'`,;)\]]*/gi, '[ARN]'],
  [/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'`,;)\]]+/gi, '[URL]'],
  [/\b[a-z0-9][a-z0-9.-]*\.amazonaws\.com(?:\.cn)?\b/gi, '[host]'],
  [/\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b/g, '[address]'],
  // Key ids: KMS key UUIDs, multi-region keys, aliases.
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '[key]'],
  [/\bmrk-[0-9a-f]{32}\b/gi, '[key]'],
  [/\balias\/[\w/-]+/g, '[key]'],
  [/(?<!\d)\d{12}(?!\d)/g, '[account]'],
  [/\b(bucket)\s*[:=]?\s*["'`]?[a-z0-9][a-z0-9.-]{2,62}["'`]?/gi, '$1 [name]'],
  // Host paths (the model's own paths are /memories/...), POSIX and Windows.
  [/(?<![\w.:/])\/(?!memories(?:\/|\b))(?:[\w.@~-]+\/)+[\w.@~-]*/g, '[path]'],
  [/\b[A-Za-z]:\\[^\s"'`]*/g, '[path]'],
];

/** An infrastructure message with anything that names a resource replaced by a neutral word. */
export function scrubInfrastructureDetail(message: string): string {
  return SCRUBS.reduce((text, [pattern, replacement]) => text.replace(pattern, replacement), message);
}

/** What the model reads for an error of this code and message. */
export function modelMessage(error: MemvaultError): string {
  return INFRASTRUCTURE_CODES.has(error.code) ? scrubInfrastructureDetail(error.message) : error.message;
}

/**
 * The one conversion of a thrown error into the model's answer: a MemvaultError's own text (scrubbed
 * for infrastructure codes), anything else the generic internal message, reported to the host.
 * Middlewares and commands throw; only the error boundary below (and the stages that must record
 * what the boundary will answer: audit, telemetry) call this.
 */
export function errorResult(error: unknown, onInternalError?: (error: unknown) => void): CommandResult {
  if (isMemvaultError(error)) return { content: modelMessage(error), isError: true, code: error.code };
  onInternalError?.(error);
  return { content: INTERNAL_ERROR_MESSAGE, isError: true, code: 'INTERNAL' };
}

/**
 * The error boundary, like Koa's `ctx.onerror`: runs one command (key load, chain and commands) and
 * turns whatever it throws into the result the model reads. The one place a command's error becomes
 * a result; `onInternalError` hears of the faults that are not MemvaultErrors (never the model).
 */
export async function withErrorBoundary(
  run: () => Promise<CommandResult>,
  onInternalError: (error: unknown) => void,
): Promise<CommandResult> {
  try {
    return await run();
  } catch (error) {
    return errorResult(error, onInternalError);
  }
}

/**
 * A middleware whose `next()` answers through the error boundary: what the rest of the chain throws
 * reaches it as the result the model will read (its code, or INTERNAL for a fault, reported once, by
 * the innermost boundary that saw it). So a middleware can throw to refuse, and the ones around it
 * still see an error result, never a throw. The vault wraps every middleware of its chain with this;
 * `withErrorBoundary` around the whole run catches what the outermost middleware throws itself.
 */
export function answering(
  middleware: Middleware,
  onInternalError: (error: unknown, ctx: CommandContext) => void,
): Middleware {
  return (ctx, next) => middleware(ctx, () => withErrorBoundary(next, (error) => onInternalError(error, ctx)));
}
