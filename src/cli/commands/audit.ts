import { createWriteStream, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { finished } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import type { ObjectStore } from '../../store/port.js';
import { exportRecords, type ExportFormat, type ExportSummary } from '../../audit/export.js';
import { collectFileChains, collectStoreChains, type CollectedChains } from '../../audit/sources.js';
import { verifyChains, type ChainWitness, type VerifyReport } from '../../audit/verify.js';
import { readCheckpointFile } from '../../audit/checkpoints.js';
import { checkFailed, usageError } from '../errors.js';
import { commitTemporary, temporaryPathFor } from '../../util/fs.js';
import {
  addCheckOptions,
  checkInputFiles,
  parseDate,
  parseFormat,
  type CheckOptions,
  type SourceOptions,
} from './audit-options.js';
import { formatExportSummary, formatFailure, formatVerifySummary, unverifiedMark } from './audit-text.js';

export { parseDate } from './audit-options.js';

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
