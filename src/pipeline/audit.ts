import { performance } from 'node:perf_hooks';
import { commandEntry, type CommandRecordOptions } from './command-record.js';
import type { AuditEntry } from '../audit/record.js';
import { MemvaultError } from '../errors.js';
import type { CommandResult, Middleware } from './context.js';
import { errorResult } from './error-result.js';

/** What the middleware needs from the audit service. */
export interface AuditAppender {
  /** Writes one record; throws if it cannot (the caller must not report success unaudited). */
  append(entry: AuditEntry): unknown;
  /** False once the sink has failed or was closed. */
  readonly writable: boolean;
}

export type AuditMiddlewareOptions = CommandRecordOptions;

export class AuditUnavailableError extends MemvaultError {
  constructor() {
    super(
      'INTERNAL',
      'Error: The memory store cannot record commands in its audit log right now, so nothing was changed. Please try again later.',
    );
    this.name = 'AuditUnavailableError';
  }
}

/**
 * The outermost middleware: one record per command, including those that inner middlewares reject
 * (they return an error result, which is recorded with its code). It swallows nothing: a throw from
 * below is recorded as INTERNAL and rethrown. The record is written before the result is returned,
 * so with the synchronous sink a result never reaches the model before its record is on disk.
 */
export function auditMiddleware(logger: AuditAppender, options: AuditMiddlewareOptions = {}): Middleware {
  return async (ctx, next) => {
    // Fail closed: once the audit sink has failed, refuse commands instead of running them unrecorded.
    if (!logger.writable) throw new AuditUnavailableError();
    const started = performance.now();
    let result: CommandResult;
    try {
      result = await next();
    } catch (error) {
      // Recorded with the code the error boundary will answer with (INTERNAL for a fault).
      logger.append(commandEntry(ctx, errorResult(error), performance.now() - started, options));
      throw error;
    }
    logger.append(commandEntry(ctx, result, performance.now() - started, options));
    return result;
  };
}
