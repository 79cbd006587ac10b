/**
 * The recording helpers the rest of memvault calls: one call per event, each a no-op (one global
 * lookup) when no meter provider is registered. Attribute values come only from fixed sets.
 */
import type { Attributes, Span } from '@opentelemetry/api';
import { instruments, secondsSince } from './metrics.js';
import {
  ATTRS,
  boundedAuditRecordType,
  boundedCode,
  boundedQuotaLimit,
  isPiiType,
  SPANS,
  type ListingSkipReason,
  type RetryLoop,
} from './names.js';
import { withRequestTally } from './store.js';
import { activeTracer, codeOfError, failSpan, inSpan } from './tracing.js';

/** The part of a command result telemetry reads: never its content. */
export interface ResultOutcome {
  isError: boolean;
  code?: string;
}

/** `memvault.outcome` and, on an error, `memvault.error.code` of a result. */
export function outcomeAttributes(result: ResultOutcome): Attributes {
  return result.isError
    ? { [ATTRS.outcome]: 'error', [ATTRS.errorCode]: boundedCode(result.code) }
    : { [ATTRS.outcome]: 'ok' };
}

/** Sets a result's outcome on a span (and its error status when it failed). */
export function markResult(span: Span, result: ResultOutcome): void {
  span.setAttributes(outcomeAttributes(result));
  if (result.isError) failSpan(span, boundedCode(result.code));
}

/**
 * One command: span `memvault.command`, `memvault.commands` and `memvault.command.duration` with its
 * command name (already bounded by the caller) and outcome. A throw counts as INTERNAL (or its code).
 */
export function observeCommand<R extends ResultOutcome>(command: string, run: () => Promise<R>): Promise<R> {
  // Nothing registered: the command runs as if uninstrumented.
  if (!instruments() && !activeTracer()) return run();
  return observedCommand(command, run);
}

async function observedCommand<R extends ResultOutcome>(command: string, run: () => Promise<R>): Promise<R> {
  const started = performance.now();
  let attributes: Attributes = { [ATTRS.command]: command, [ATTRS.outcome]: 'error', [ATTRS.errorCode]: 'INTERNAL' };
  try {
    return await inSpan(SPANS.command, { [ATTRS.command]: command }, async (span) => {
      try {
        const result = await run();
        attributes = { [ATTRS.command]: command, ...outcomeAttributes(result) };
        markResult(span, result);
        return result;
      } catch (error) {
        attributes = { [ATTRS.command]: command, [ATTRS.outcome]: 'error', [ATTRS.errorCode]: codeOfError(error) };
        throw error;
      }
    });
  } finally {
    const m = instruments();
    if (m) {
      m.commands.add(1, attributes);
      m.commandDuration.record(secondsSince(started), attributes);
    }
  }
}

/**
 * The part of a command's decisions the metrics read: the quota's refusals, the input-size check's,
 * and PII findings by type. The pipeline's `CommandDecisions` (pipeline/decisions.ts) is one;
 * telemetry, a leaf, names only the fields it reads. Type names and rule names are still bounded
 * here, since a host middleware could write any string.
 */
export interface DecisionSignals {
  readonly validate?: { readonly refused: boolean };
  readonly quota?:
    { readonly checked: false } | { readonly checked: true; readonly rule: string; readonly allowed: boolean };
  readonly pii?: {
    readonly findings: Readonly<Partial<Record<string, number>>>;
    readonly rejected?: readonly string[];
  };
}

/**
 * The quota and PII decisions a command's chain recorded on `ctx.decisions` (the same record the
 * audit middleware reads): quota refusals by limit, PII findings by type and policy action. Only
 * counts and type names are read.
 */
export function recordDecisions(decisions: DecisionSignals): void {
  const m = instruments();
  if (!m) return;
  const quota = decisions.quota;
  if (quota?.checked === true && !quota.allowed) {
    m.quotaRefusals.add(1, { [ATTRS.quotaLimit]: boundedQuotaLimit(quota.rule) ?? 'unknown' });
  }
  // Input that no file within the per-file limit could hold is refused by validation, before the
  // quota runs: the same limit, so it counts as a file_bytes refusal.
  if (decisions.validate?.refused === true) m.quotaRefusals.add(1, { [ATTRS.quotaLimit]: 'file_bytes' });
  const pii = decisions.pii;
  if (pii) {
    const rejected = pii.rejected ?? [];
    for (const [type, count] of Object.entries(pii.findings)) {
      if (!isPiiType(type) || typeof count !== 'number' || !Number.isSafeInteger(count) || count <= 0) continue;
      m.piiFindings.add(count, {
        [ATTRS.piiType]: type,
        [ATTRS.piiAction]: rejected.includes(type) ? 'reject' : 'redact',
      });
    }
  }
}

/** A conflict retried: the read-modify-write runs again. */
export function writeRetried(loop: RetryLoop): void {
  instruments()?.writeRetries.add(1, { [ATTRS.retryLoop]: loop });
}

/** A listing passed over an object under a user's prefix that is not one of their files (src/vault/store-user-files.ts). */
export function listingSkipped(reason: ListingSkipReason): void {
  instruments()?.listingSkipped.add(1, { [ATTRS.listingSkipReason]: reason });
}

/** A user-key cache lookup. */
export function keyCacheLookup(hit: boolean): void {
  instruments()?.keyCacheLookups.add(1, { [ATTRS.keyCacheResult]: hit ? 'hit' : 'miss' });
}

/** Hands one audit record to its sink (`write` throws if it could not): counted and timed. */
export function observeAuditWrite<T>(recordType: string, write: () => T): T {
  const m = instruments();
  if (!m) return write();
  const started = performance.now();
  let status = 'error';
  try {
    const written = write();
    status = 'ok';
    return written;
  } finally {
    const attributes = { [ATTRS.auditRecordType]: boundedAuditRecordType(recordType), [ATTRS.auditStatus]: status };
    m.auditRecords.add(1, attributes);
    m.auditWriteDuration.record(secondsSince(started), attributes);
  }
}

/** What a sweep reports that its metrics read (src/expiry/sweep.ts SweepSummary). */
export interface SweepCounts {
  scanned: number;
  expired: number;
  alreadyGone: number;
  errors: number;
}

/**
 * One sweeper run: span `memvault.sweep`, `memvault.sweeper.runs` (outcome error when any file could
 * not be decided or deleted, or the run failed), files scanned and deleted, and the store requests
 * the run made. A dry run deletes nothing, so it adds nothing to the deleted count.
 */
export async function observeSweep<T extends SweepCounts>(dryRun: boolean, run: () => Promise<T>): Promise<T> {
  const mode = dryRun ? 'dry_run' : 'delete';
  const outcomeOf = (summary: SweepCounts) => (summary.errors > 0 ? 'error' : 'ok');
  return inSpan(SPANS.sweep, { [ATTRS.sweepMode]: mode }, async (span) => {
    let runAttributes: Attributes = { [ATTRS.sweepMode]: mode, [ATTRS.outcome]: 'error' };
    try {
      const summary = await withRequestTally(run, (o) => (o.ok ? outcomeOf(o.result) : 'error'));
      runAttributes = { [ATTRS.sweepMode]: mode, [ATTRS.outcome]: outcomeOf(summary) };
      span.setAttributes(runAttributes);
      const m = instruments();
      if (m) {
        m.sweeperScanned.add(summary.scanned, { [ATTRS.sweepMode]: mode });
        if (!dryRun)
          m.sweeperDeleted.add(Math.max(0, summary.expired - summary.alreadyGone), { [ATTRS.sweepMode]: mode });
      }
      return summary;
    } catch (error) {
      runAttributes = { [ATTRS.sweepMode]: mode, [ATTRS.outcome]: 'error', [ATTRS.errorCode]: codeOfError(error) };
      throw error;
    } finally {
      instruments()?.sweeperRuns.add(1, runAttributes);
    }
  });
}
