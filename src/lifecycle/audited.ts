/**
 * The one audit wrapper of the lifecycle operations: each leaves one audit record, whatever its
 * outcome, with the counts it reached (on failure, those reached before it failed).
 */
import type { AuditEntry } from '../audit/record.js';
import { isMemvaultError } from '../errors.js';
import type { LifecycleOptions } from './types.js';

/** Where lifecycle records go: the vault's audit logger (absent when auditing is off). */
export interface AuditSink {
  append(entry: AuditEntry): unknown;
}

/** Runs `run` (which fills `counts` as it goes) and appends its record, ok or error. */
export type Audited = <T>(
  entry: AuditEntry,
  run: (counts: Record<string, number>) => Promise<T>,
  countsOf: (result: T) => Record<string, number>,
) => Promise<T>;

export function auditedBy(audit: AuditSink | undefined): Audited {
  return async (entry, run, countsOf) => {
    const counts: Record<string, number> = {};
    try {
      const result = await run(counts);
      audit?.append({ ...entry, outcome: 'ok', counts: { ...counts, ...countsOf(result) } });
      return result;
    } catch (error) {
      audit?.append({ ...entry, outcome: 'error', code: errorCode(error), counts });
      throw error;
    }
  };
}

/** The record of an operation that failed before it could start (no such user, history off). */
export function auditFailure(
  audit: AuditSink | undefined,
  entry: AuditEntry,
  error: unknown,
  counts?: Record<string, number>,
): void {
  audit?.append({ ...entry, outcome: 'error', code: errorCode(error), ...(counts ? { counts } : {}) });
}

const errorCode = (error: unknown): string => (isMemvaultError(error) ? error.code : 'INTERNAL');

/** The record's actor field, when the caller named one. */
export const actorOf = (options: LifecycleOptions | undefined): { actor?: string } =>
  options?.actor !== undefined ? { actor: options.actor } : {};
