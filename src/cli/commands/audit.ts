import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import cliProgress from 'cli-progress';
import { InvalidArgumentError, type Command } from 'commander';
import type { ObjectStore } from '../../store/port.js';
import { exportRecords, type ExportFormat, type ExportSummary } from '../../audit/export.js';
import { collectFileChains, collectStoreChains, type CollectedChains } from '../../audit/sources.js';
import { verifyChains, type VerifyFailure, type VerifyReport } from '../../audit/verify.js';

export interface AuditCommandDeps {
  /** Opens the store behind `--store URL` (the vault's store opener). */
  openStore?: (url: string) => Promise<ObjectStore>;
  /** Maps a raw user id to its pseudonymous uid (the vault's keyed hash), for `export --user`. */
  uidOf?: (userId: string) => string | Promise<string>;
  /** Key prefix of the audit segments in the store (before `audit/`). Default ''. */
  storePrefix?: string;
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
  /** How a failed verify reports its exit status. Default: sets process.exitCode. */
  setExitCode?: (code: number) => void;
  /** Draw a progress bar. Default: when stderr is a TTY. */
  progress?: boolean;
}

/** Exports larger than this get a progress bar (when on a TTY). */
const PROGRESS_MIN_BYTES = 4 * 1024 * 1024;

interface SourceOptions {
  store?: string;
}

/**
 * `memvault audit verify` and `memvault audit export`. Both read either local files (an active
 * audit file brings its sealed segments along) or the segments shipped to a store.
 */
export function registerAuditCommands(program: Command, deps: AuditCommandDeps = {}): Command {
  const out = deps.stdout ?? ((text: string) => void process.stdout.write(text));
  const err = deps.stderr ?? ((text: string) => void process.stderr.write(text));
  const setExitCode = deps.setExitCode ?? ((code: number) => void (process.exitCode = code));

  const collect = async (files: string[], options: SourceOptions): Promise<{ collected: CollectedChains; close: () => Promise<void> }> => {
    if (options.store !== undefined && files.length > 0) throw new InvalidArgumentError('give either --store or FILES, not both');
    if (options.store !== undefined) {
      if (!deps.openStore) throw new InvalidArgumentError('--store is not available in this build');
      const store = await deps.openStore(options.store);
      return { collected: await collectStoreChains(store, deps.storePrefix ?? ''), close: () => store.close() };
    }
    if (files.length === 0) throw new InvalidArgumentError('give the audit FILES (or a directory) or --store URL');
    return { collected: await collectFileChains(files), close: async () => {} };
  };

  const audit = program.command('audit').description('verify and export the audit log');

  audit
    .command('verify')
    .description('check the hash chain of every instance; exit 1 at the first broken record')
    .argument('[files...]', 'audit files, sealed segments or directories')
    .option('--store <url>', 'verify the segments uploaded to this store instead')
    .action(async (files: string[], options: SourceOptions) => {
      const { collected, close } = await collect(files, options);
      try {
        const report = await verifyChains(collected);
        if (report.ok) {
          out(formatVerifySummary(report));
        } else {
          for (const failure of report.failures) err(formatFailure(failure));
          setExitCode(1);
        }
      } finally {
        await close();
      }
    });

  audit
    .command('export')
    .description('write the records of a time range, all instances merged in time order, as JSONL or CSV')
    .argument('[files...]', 'audit files, sealed segments or directories')
    .requiredOption('--from <date>', 'first day or instant included (YYYY-MM-DD or ISO 8601; dates are UTC)', (v) => parseDate(v, 'start'))
    .requiredOption('--to <date>', 'last day included (YYYY-MM-DD), or exclusive instant (ISO 8601)', (v) => parseDate(v, 'end'))
    .option('--user <id>', 'only the records of this user (raw id, mapped to its pseudonymous uid)')
    .option('--uid <uid>', 'only the records of this pseudonymous uid')
    .option('--format <format>', 'jsonl or csv', parseFormat, 'jsonl' as ExportFormat)
    .requiredOption('--out <file>', 'output file')
    .option('--bom', 'start the CSV with a UTF-8 byte order mark (for Excel)')
    .option('--store <url>', 'export the segments uploaded to this store instead')
    .action(
      async (
        files: string[],
        options: SourceOptions & { from: Date; to: Date; user?: string; uid?: string; format: ExportFormat; out: string; bom?: boolean },
      ) => {
        if (options.from.getTime() >= options.to.getTime()) throw new InvalidArgumentError('--from must be before --to');
        let uid = options.uid;
        if (options.user !== undefined) {
          if (!deps.uidOf) throw new InvalidArgumentError('--user is not available in this build; pass --uid');
          uid = await deps.uidOf(options.user);
        }
        const { collected, close } = await collect(files, options);
        const output = createWriteStream(options.out, { mode: 0o600 });
        const showProgress = (deps.progress ?? process.stderr.isTTY === true) && collected.totalBytes >= PROGRESS_MIN_BYTES;
        const bar = showProgress
          ? new cliProgress.SingleBar(
              { format: 'audit export [{bar}] {percentage}% | {value}/{total} MiB', stream: process.stderr, hideCursor: true },
              cliProgress.Presets.shades_classic,
            )
          : undefined;
        const mib = (bytes: number) => Math.round((bytes / (1024 * 1024)) * 10) / 10;
        bar?.start(mib(collected.totalBytes), 0);
        let summary: ExportSummary;
        try {
          summary = await exportRecords(collected.chains, {
            from: options.from,
            to: options.to,
            ...(uid !== undefined ? { uid } : {}),
            format: options.format,
            output,
            ...(options.bom ? { bom: true } : {}),
            ...(bar ? { onProgress: (bytes: number) => bar.update(mib(bytes)) } : {}),
          });
          output.end();
          await finished(output);
        } finally {
          bar?.stop();
          if (!output.closed) output.destroy();
          await close();
        }
        out(formatExportSummary(summary, options.out, options.format));
        if (summary.skippedLines > 0 || collected.unreadable.length > 0) {
          err(`warning: ${summary.skippedLines + collected.unreadable.length} unreadable line(s) or segment(s) skipped; run memvault audit verify\n`);
        }
      },
    );
  return audit;
}

export function parseDate(value: string, bound: 'start' | 'end'): Date {
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const ms = Date.parse(dateOnly ? `${value}T00:00:00.000Z` : value);
  if (Number.isNaN(ms)) throw new InvalidArgumentError(`not a date: ${value}`);
  // A day given as --to is included whole: the bound becomes the next midnight (UTC), exclusive.
  return new Date(dateOnly && bound === 'end' ? ms + 24 * 60 * 60 * 1000 : ms);
}

function parseFormat(value: string): ExportFormat {
  if (value !== 'jsonl' && value !== 'csv') throw new InvalidArgumentError('format must be jsonl or csv');
  return value;
}

function formatFailure(failure: VerifyFailure): string {
  const where = [
    failure.instance !== undefined ? `instance ${failure.instance}` : undefined,
    failure.source,
    `line ${failure.line}`,
    failure.seq !== undefined ? `seq ${failure.seq}` : failure.expectedSeq !== undefined ? `expected seq ${failure.expectedSeq}` : undefined,
  ].filter((part): part is string => part !== undefined);
  return `audit chain broken: ${where.join(', ')}: ${failure.reason}\n`;
}

function formatVerifySummary(report: VerifyReport): string {
  const { totals } = report;
  const range = totals.firstTime !== undefined ? `, ${totals.firstTime} to ${totals.lastTime ?? totals.firstTime}` : '';
  const lines = [`audit chains verified: ${totals.instances} instance(s), ${totals.segments} segment(s), ${totals.records} record(s)${range}`];
  for (const chain of report.chains) {
    lines.push(`  ${chain.instance}: ${chain.segments} segment(s), seq 1-${chain.lastSeq}`);
  }
  return `${lines.join('\n')}\n`;
}

function formatExportSummary(summary: ExportSummary, file: string, format: ExportFormat): string {
  const range = summary.firstTime !== undefined ? `, ${summary.firstTime} to ${summary.lastTime ?? summary.firstTime}` : '';
  return `exported ${summary.records} record(s) from ${summary.instances} instance(s)${range} to ${file} (${format})\n`;
}
