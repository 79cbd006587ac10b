/**
 * What `memvault audit verify` and `export` (audit.ts) print: the summaries, a broken chain's
 * place, and the mark an unverified export carries in its first line.
 */
import type { ExportFormat, ExportSummary } from '../../audit/export.js';
import type { CollectedChains } from '../../audit/sources.js';
import type { VerifyFailure, VerifyReport } from '../../audit/verify.js';

/** The first line of an export whose chain did not verify, so the file itself carries the warning. */
export function unverifiedMark(report: VerifyReport, format: ExportFormat): string {
  const failures = report.failures.map((f) => ({
    ...(f.instance !== undefined ? { instance: f.instance } : {}),
    source: f.source,
    line: f.line,
    reason: f.reason,
  }));
  if (format === 'jsonl') return `${JSON.stringify({ memvaultExport: 'UNVERIFIED', failures })}\n`;
  const text = `UNVERIFIED EXPORT: the audit chain does not verify (${failures.map((f) => `${f.source} line ${f.line}: ${f.reason}`).join('; ')})`;
  return `"${text.replace(/"/g, '""')}"\r\n`;
}

export function formatFailure(failure: VerifyFailure): string {
  const where = [
    failure.instance !== undefined ? `instance ${failure.instance}` : undefined,
    failure.source,
    `line ${failure.line}`,
    failure.seq !== undefined
      ? `seq ${failure.seq}`
      : failure.expectedSeq !== undefined
        ? `expected seq ${failure.expectedSeq}`
        : undefined,
  ].filter((part): part is string => part !== undefined);
  return `audit chain broken: ${where.join(', ')}: ${failure.reason}\n`;
}

export function formatVerifySummary(report: VerifyReport, collected: CollectedChains, macsChecked: boolean): string {
  const { totals } = report;
  const range = totals.firstTime !== undefined ? `, ${totals.firstTime} to ${totals.lastTime ?? totals.firstTime}` : '';
  const dupes = collected.duplicates.length > 0 ? `, ${collected.duplicates.length} duplicate segment(s) ignored` : '';
  const lines = [
    `audit chains verified: ${totals.instances} instance(s), ${totals.segments} segment(s), ${totals.records} record(s)${range}${dupes}`,
  ];
  for (const chain of report.chains) {
    // What verify vouches for, exactly: authenticity (MACs) and the tail (witness).
    const auth =
      chain.authenticatedFrom === undefined
        ? 'NOT authenticated (records carry no MAC: anyone with write access could have rewritten them)'
        : macsChecked
          ? `authenticated seq ${chain.authenticatedFrom}-${chain.lastSeq}${chain.authenticatedFrom > 1 ? ` (seq 1-${chain.authenticatedFrom - 1} legacy, no MAC)` : ''}`
          : 'MACs NOT checked (--structure-only)';
    const tail = chain.witnessedThrough
      ? chain.witnessedThrough.seq === chain.lastSeq
        ? `tail witnessed (${chain.witnessedThrough.source})`
        : `tail witnessed through seq ${chain.witnessedThrough.seq} (${chain.witnessedThrough.source}); seq ${chain.witnessedThrough.seq + 1}-${chain.lastSeq} could be cut off unnoticed`
      : 'tail NOT witnessed: records cut off the end would go unnoticed (--checkpoints, --expect-head)';
    lines.push(`  ${chain.instance}: ${chain.segments} segment(s), seq 1-${chain.lastSeq}; ${auth}; ${tail}`);
  }
  return `${lines.join('\n')}\n`;
}

export function formatExportSummary(
  summary: ExportSummary,
  file: string,
  format: ExportFormat,
  verified: boolean,
): string {
  const range =
    summary.firstTime !== undefined ? `, ${summary.firstTime} to ${summary.lastTime ?? summary.firstTime}` : '';
  return `exported ${summary.records} record(s) from ${summary.instances} instance(s)${range} to ${file} (${format})${verified ? '' : ', marked UNVERIFIED'}\n`;
}
