import { createWriteStream, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { finished } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import cliProgress from 'cli-progress';
import { InvalidArgumentError, type Command } from 'commander';
import type { ObjectStore } from '../../store/port.js';
import { exportRecords, type ExportFormat, type ExportSummary } from '../../audit/export.js';
import { collectFileChains, collectStoreChains, type CollectedChains } from '../../audit/sources.js';
import { verifyChains, type ChainWitness, type VerifyFailure, type VerifyReport } from '../../audit/verify.js';
import { parseExpectedHead, readCheckpointFile } from '../../audit/checkpoints.js';
import { checkFailed, runtimeError, usageError } from '../errors.js';
import { commitTemporary, temporaryPathFor } from '../../util/fs.js';

export interface AuditCommandDeps {
  /** Opens the store behind `--store URL` (the vault's store opener; it must never create one). */
  openStore?: (url: string) => Promise<ObjectStore>;
  /** Maps a raw user id to its pseudonymous uid (the vault's keyed hash) in the given data store, for `export --user`. */
  uidOf?: (userId: string, dataStore: string | undefined) => string | Promise<string>;
  /**
   * The deployment's audit MAC key from the data store (--data-store, else MEMVAULT_STORE, else the
   * default), opened without creating anything; needed to check the MACs of v2 records.
   */
  auditKeyOf?: (dataStore: string | undefined) => Promise<Uint8Array>;
  /** Key prefix of the audit segments in the store (before `audit/`). Default ''. */
  storePrefix?: string;
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
  /** Where `--out -` writes. Default: process.stdout. */
  stdoutStream?: Writable;
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

interface CheckOptions {
  dataStore?: string;
  structureOnly?: boolean;
  checkpoints?: string[];
  expectHead?: ChainWitness[];
}

function collectValues<T>(parse: (value: string) => T): (value: string, previous: T[] | undefined) => T[] {
  return (value, previous) => [...(previous ?? []), parse(value)];
}

function parseHead(value: string): ChainWitness {
  const head = parseExpectedHead(value);
  if (!head) throw new InvalidArgumentError('give [INSTANCE:]SEQ:HASH (HASH: 64 hex digits)');
  return head;
}

/** The options verify and export share: how records are authenticated and what witnesses the tail. */
function addCheckOptions(command: Command): Command {
  return command
    .option(
      '--data-store <url>',
      'the data store whose deployment holds the audit key (env MEMVAULT_STORE; default ./.memvault); never created',
    )
    .option(
      '--structure-only',
      'check the hash chain only, not the MACs (the result then proves nothing about who wrote the records)',
    )
    .option(
      '--checkpoints <file>',
      "a checkpoint file (the writer's tail witness); repeatable",
      collectValues((v) => v),
    )
    .option(
      '--expect-head <head>',
      'a head recorded elsewhere, [INSTANCE:]SEQ:HASH; repeatable',
      collectValues(parseHead),
    );
}

/**
 * Every input must be there and readable: a missing file is a usage error, not "0 records"
 * (a verifier that reports success over nothing fails open).
 */
function checkInputFiles(files: readonly string[]): void {
  for (const file of files) {
    try {
      statSync(file);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') throw usageError(`no such audit file or directory: ${file}`);
      throw runtimeError(`cannot read ${file} (${code ?? 'error'})`, e);
    }
  }
}

/**
 * `memvault audit verify` and `memvault audit export`. Both read either local files (an active
 * audit file brings its sealed segments along) or the segments shipped to a store. Both fail
 * closed: no input, a missing input, no records at all, or (for export) a chain that does not
 * verify are errors with a non-zero exit, never an empty success.
 */
export function registerAuditCommands(program: Command, deps: AuditCommandDeps = {}): Command {
  const out = deps.stdout ?? ((text: string) => void process.stdout.write(text));
  const err = deps.stderr ?? ((text: string) => void process.stderr.write(text));
  const setExitCode = deps.setExitCode ?? ((code: number) => void (process.exitCode = code));

  const collect = async (
    files: string[],
    options: SourceOptions,
  ): Promise<{ collected: CollectedChains; what: string; close: () => Promise<void> }> => {
    if (options.store !== undefined && files.length > 0) throw usageError('give either --store or FILES, not both');
    let result: { collected: CollectedChains; what: string; close: () => Promise<void> };
    if (options.store !== undefined) {
      if (!deps.openStore) throw usageError('--store is not available in this build');
      const store = await deps.openStore(options.store);
      try {
        result = {
          collected: await collectStoreChains(store, deps.storePrefix ?? ''),
          what: options.store,
          close: () => store.close(),
        };
      } catch (e) {
        await store.close();
        throw e;
      }
    } else {
      if (files.length === 0) throw usageError('give the audit FILES (or a directory) or --store URL');
      checkInputFiles(files);
      result = { collected: await collectFileChains(files), what: files.join(' '), close: async () => {} };
    }
    for (const duplicate of result.collected.duplicates) {
      err(`note: ${duplicate.name} is an identical copy of ${duplicate.duplicateOf}; read once\n`);
    }
    if (result.collected.chains.length === 0 && result.collected.unreadable.length === 0) {
      await result.close();
      throw checkFailed(`no audit records found in ${result.what}`);
    }
    return result;
  };

  const audit = program.command('audit').description('verify and export the audit log');

  /**
   * Verify with the key when the records carry MACs: a chain of v2 records checked without the key
   * would accept a forged record with a random MAC, so the key is loaded (or the check fails),
   * unless --structure-only says the caller knows.
   */
  const check = async (
    collected: CollectedChains,
    options: CheckOptions,
  ): Promise<{ report: VerifyReport; macsChecked: boolean }> => {
    const witnesses: ChainWitness[] = [...(options.expectHead ?? [])];
    for (const file of options.checkpoints ?? []) {
      checkInputFiles([file]);
      try {
        witnesses.push(...(await readCheckpointFile(file)));
      } catch (e) {
        throw usageError(e instanceof Error ? e.message : String(e), e);
      }
    }
    let key: Uint8Array | undefined;
    const loadKey = async (): Promise<Uint8Array> => {
      if (!deps.auditKeyOf)
        throw checkFailed('the records carry MACs but this build cannot load the audit key; pass --structure-only');
      try {
        return await deps.auditKeyOf(options.dataStore);
      } catch (e) {
        const cause = e instanceof Error ? e.message.replace(/^(Error: |memvault: )/, '') : String(e);
        throw checkFailed(
          `cannot check the records' MACs: the audit key is not available (${cause}); pass --data-store URL with its key, or --structure-only`,
        );
      }
    };
    if (options.dataStore !== undefined && !options.structureOnly) key = await loadKey();
    let report = await verifyChains(collected, { ...(key ? { macKey: key } : {}), witnesses });
    if (!key && !options.structureOnly && report.chains.some((c) => c.macsUnchecked > 0)) {
      key = await loadKey();
      report = await verifyChains(collected, { macKey: key, witnesses });
    }
    return { report, macsChecked: key !== undefined };
  };

  addCheckOptions(
    audit
      .command('verify')
      .description(
        'check the hash chain and MACs of every instance and the tail against its witnesses; exit 1 at the first broken record, or when there are no records',
      )
      .argument('[files...]', 'audit files, sealed segments or directories')
      .option('--store <url>', 'verify the segments uploaded to this store instead'),
  ).action(async (files: string[], options: SourceOptions & CheckOptions) => {
    const { collected, close } = await collect(files, options);
    try {
      const { report, macsChecked } = await check(collected, options);
      if (report.ok) {
        out(formatVerifySummary(report, collected, macsChecked));
      } else {
        for (const failure of report.failures) err(formatFailure(failure));
        setExitCode(1);
      }
    } finally {
      await close();
    }
  });

  addCheckOptions(
    audit
      .command('export')
      .description(
        'verify, then write the records of a time range, all instances merged in time order, as JSONL or CSV',
      ),
  )
    .argument('[files...]', 'audit files, sealed segments or directories')
    .requiredOption('--from <date>', 'first day or instant included (YYYY-MM-DD or ISO 8601; dates are UTC)', (v) =>
      parseDate(v, 'start'),
    )
    .requiredOption('--to <date>', 'last day included (YYYY-MM-DD), or exclusive instant (ISO 8601)', (v) =>
      parseDate(v, 'end'),
    )
    .option('--user <id>', 'only the records of this user (raw id, mapped to its pseudonymous uid in --data-store)')
    .option('--uid <uid>', 'only the records of this pseudonymous uid')
    .option('--format <format>', 'jsonl or csv', parseFormat, 'jsonl' as ExportFormat)
    .requiredOption('--out <file>', 'output file, or - for standard output')
    .option('--bom', 'start the CSV with a UTF-8 byte order mark (for Excel)')
    .option('--allow-unverified', 'export even when the chain does not verify (the export is marked UNVERIFIED)')
    .option('--store <url>', 'export the segments uploaded to this store instead')
    .action(
      async (
        files: string[],
        options: SourceOptions &
          CheckOptions & {
            from: Date;
            to: Date;
            user?: string;
            uid?: string;
            format: ExportFormat;
            out: string;
            bom?: boolean;
            allowUnverified?: boolean;
          },
      ) => {
        if (options.from.getTime() >= options.to.getTime()) throw usageError('--from must be before --to');
        if (options.user !== undefined && options.uid !== undefined)
          throw usageError('give either --user or --uid, not both');
        const toStdout = options.out === '-';
        const outPath = toStdout ? undefined : resolve(options.out);
        if (outPath !== undefined) {
          const dir = dirname(outPath);
          let isDir = false;
          try {
            isDir = statSync(dir).isDirectory();
          } catch {
            // reported below
          }
          if (!isDir) throw usageError(`the output directory ${dir} does not exist`);
        }
        let uid = options.uid;
        if (options.user !== undefined) {
          if (!deps.uidOf) throw usageError('--user is not available in this build; pass --uid');
          uid = await deps.uidOf(options.user, options.dataStore);
        }
        const { collected, close } = await collect(files, options);
        // Verify first (one streaming pass): an export is evidence, and a tampered chain exported
        // without a word would pass for a genuine one.
        let report: VerifyReport;
        try {
          report = (await check(collected, options)).report;
        } catch (e) {
          await close();
          throw e;
        }
        if (!report.ok && !options.allowUnverified) {
          await close();
          for (const failure of report.failures) err(formatFailure(failure));
          throw checkFailed(
            'audit export refused: the audit chain does not verify (above); pass --allow-unverified to export it anyway, marked UNVERIFIED',
          );
        }
        const preamble = report.ok ? undefined : unverifiedMark(report, options.format);
        // Written beside the target and renamed into place: a failed or empty export leaves no file.
        const temporary = outPath !== undefined ? temporaryPathFor(outPath) : undefined;
        const output: Writable =
          temporary !== undefined
            ? createWriteStream(temporary, { mode: 0o600 })
            : (deps.stdoutStream ?? process.stdout);
        const showProgress =
          (deps.progress ?? process.stderr.isTTY === true) && collected.totalBytes >= PROGRESS_MIN_BYTES;
        const bar = showProgress
          ? new cliProgress.SingleBar(
              {
                format: 'audit export [{bar}] {percentage}% | {value}/{total} MiB',
                stream: process.stderr,
                hideCursor: true,
              },
              cliProgress.Presets.shades_classic,
            )
          : undefined;
        const mib = (bytes: number) => Math.round((bytes / (1024 * 1024)) * 10) / 10;
        bar?.start(mib(collected.totalBytes), 0);
        let summary: ExportSummary;
        let done = false;
        try {
          summary = await exportRecords(collected.chains, {
            from: options.from,
            to: options.to,
            ...(uid !== undefined ? { uid } : {}),
            format: options.format,
            output,
            ...(options.bom ? { bom: true } : {}),
            ...(preamble !== undefined ? { preamble } : {}),
            ...(bar ? { onProgress: (bytes: number) => bar.update(mib(bytes)) } : {}),
          });
          if (temporary !== undefined) {
            output.end();
            await finished(output);
          }
          if (summary.records === 0) {
            throw checkFailed(
              `no records matched ${uid !== undefined ? 'the user and ' : ''}the time range ${options.from.toISOString()} to ${options.to.toISOString()}; nothing was written`,
            );
          }
          if (temporary !== undefined && outPath !== undefined) await commitTemporary(temporary, outPath);
          done = true;
        } finally {
          bar?.stop();
          if (temporary !== undefined) {
            if (!output.closed) output.destroy();
            if (!done) await rm(temporary, { force: true });
          }
          await close();
        }
        // With --out - the records are on stdout; the summary goes to stderr.
        (toStdout ? err : out)(
          formatExportSummary(summary, toStdout ? 'standard output' : options.out, options.format, report.ok),
        );
        if (summary.skippedLines > 0 || collected.unreadable.length > 0) {
          err(
            `warning: ${summary.skippedLines + collected.unreadable.length} unreadable line(s) or segment(s) skipped; run memvault audit verify\n`,
          );
        }
      },
    );
  return audit;
}

/** The first line of an export whose chain did not verify, so the file itself carries the warning. */
function unverifiedMark(report: VerifyReport, format: ExportFormat): string {
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
    failure.seq !== undefined
      ? `seq ${failure.seq}`
      : failure.expectedSeq !== undefined
        ? `expected seq ${failure.expectedSeq}`
        : undefined,
  ].filter((part): part is string => part !== undefined);
  return `audit chain broken: ${where.join(', ')}: ${failure.reason}\n`;
}

function formatVerifySummary(report: VerifyReport, collected: CollectedChains, macsChecked: boolean): string {
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

function formatExportSummary(summary: ExportSummary, file: string, format: ExportFormat, verified: boolean): string {
  const range =
    summary.firstTime !== undefined ? `, ${summary.firstTime} to ${summary.lastTime ?? summary.firstTime}` : '';
  return `exported ${summary.records} record(s) from ${summary.instances} instance(s)${range} to ${file} (${format})${verified ? '' : ', marked UNVERIFIED'}\n`;
}
