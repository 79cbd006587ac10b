import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import cliProgress from 'cli-progress';
import { InvalidArgumentError, type Command } from 'commander';
import { AuditWriter } from '../../audit/writer.js';
import { MemvaultError } from '../../errors.js';
import { ENV, readEnv } from '../../config/env.js';
import { historyFromEnv, sweeperFromEnv, ttlSettingsFromEnv } from '../../config/from-env.js';
import type { ConditionalDeleter } from '../../expiry/deleter.js';
import { sweep, type SweepSummary } from '../../expiry/sweep.js';
import { resolveHistoryOptions } from '../../vault/history-options.js';
import { withRequestCounter, type RequestCounter } from '../../store/accounting.js';
import { DEPLOYMENT_RECORD_KEY, firstDeploymentDataKey } from '../../crypto/layout.js';
import type { ObjectStore } from '../../store/port.js';
import { reportError } from '../errors.js';
import { storeUrlFrom } from '../config.js';
import { openCliS3Store, openCliStore } from '../store.js';
import { parseS3Url } from '../../store/s3/url.js';
import { parseRfc3339 } from '../../util/date-time.js';

export interface ExpireCommandDeps {
  env?: NodeJS.ProcessEnv;
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
  setExitCode?: (code: number) => void;
  /** Draw a progress bar. Default: when stderr is a TTY. */
  progress?: boolean;
  /** The sweeper's clock (tests). */
  now?: () => Date;
}

interface ExpireFlags {
  store?: string;
  ttlDays?: number;
  dryRun?: boolean;
  asOf?: Date;
  json?: boolean;
  auditFile?: string;
  auditStore?: string;
  conditionalDelete?: string;
  graceMinutes?: number;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number >= 1');
  return n;
}

function nonNegative(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError('must be a number >= 0');
  return n;
}

/**
 * YYYY-MM-DD (the end of that day, UTC: "idle as of that date") or a strict RFC 3339 date-time
 * with a timezone. `new Date` read "1" as 2001 and rolled 2026-02-31 into March: a typo must not
 * pick the date files are judged idle against.
 */
export function parseAsOf(value: string): Date {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const date = parseRfc3339(day ? `${value}T23:59:59.999Z` : value);
  if (date === undefined)
    throw new InvalidArgumentError(
      'must be a date YYYY-MM-DD or an RFC 3339 date-time with a timezone (e.g. 2026-12-01T09:30:00Z)',
    );
  return date;
}

interface SweepTarget {
  store: ObjectStore;
  deleter?: ConditionalDeleter;
}

async function openTarget(url: string, env: NodeJS.ProcessEnv, mode: 'native' | 'recheck'): Promise<SweepTarget> {
  if (!url.startsWith('s3://')) return { store: await openCliStore(url, env, { writes: true }) };
  // Loaded only for S3, so that a file-store sweep never loads the AWS SDK.
  const { s3Deleter } = await import('../../expiry/deleter.js');
  const store = await openCliS3Store(url, env);
  const { bucket, prefix } = parseS3Url(url);
  return { store, deleter: s3Deleter({ client: store.client, bucket, prefix, mode }) };
}

function formatSummary(summary: SweepSummary, requests: RequestCounter): string {
  const head = summary.dryRun
    ? `dry run as of ${summary.asOf}: would delete`
    : `expired as of ${summary.asOf}: deleted`;
  const lines = [
    `${head} ${summary.expired} of ${summary.scanned} files (${summary.users} users); kept ${summary.kept}, errors ${summary.errors}`,
  ];
  if (summary.changedDuringSweep > 0)
    lines.push(`  ${summary.changedDuringSweep} written or read during the sweep: kept`);
  if (summary.alreadyGone > 0)
    lines.push(`  ${summary.alreadyGone} already gone (another sweeper or a lifecycle rule)`);
  if (summary.versionsDropped !== undefined)
    lines.push(
      `  ${summary.versionsDropped} kept versions ${summary.dryRun ? 'would be ' : ''}dropped (history retention)`,
    );
  if (summary.unknownClass > 0)
    lines.push(
      `  ${summary.unknownClass} files of users in a TTL class this configuration does not know: kept (set ${ENV.ttlClasses.name})`,
    );
  const classes = Object.entries(summary.classes)
    .map(([name, days]) => `${name}=${days}d`)
    .join(', ');
  lines.push(
    `  TTL ${classes}; grace ${summary.graceMinutes} min; mode ${summary.mode}; requests ${
      Object.entries(requests)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ') || 'none'
    }`,
  );
  return `${lines.join('\n')}\n`;
}

/**
 * `memvault expire`: delete files idle past their TTL (docs/expiry.md). Safe from cron on
 * several machines at once. Exit 0 when the sweep had no errors, 1 when some files could not be
 * handled, 2 on a configuration error.
 */
export function registerExpire(program: Command, deps: ExpireCommandDeps = {}): Command {
  const env = deps.env ?? process.env;
  const out = deps.stdout ?? ((text: string) => void process.stdout.write(text));
  const err = deps.stderr ?? ((text: string) => void process.stderr.write(text));
  const setExitCode = deps.setExitCode ?? ((code: number) => void (process.exitCode = code));

  return program
    .command('expire')
    .description('delete memory files idle past their TTL (run it from cron; several at once are safe)')
    .option('--store <url>', `the store to sweep (env ${ENV.store.name})`)
    .option('--ttl-days <n>', `idle days of the default TTL class (env ${ENV.ttlDays.name})`, positiveInt)
    .option('--dry-run', 'report what a real run at the same --as-of would delete; delete nothing')
    .option(
      '--as-of <date>',
      'judge idleness as of this date (YYYY-MM-DD = end of that day UTC, or RFC 3339 with a timezone); default now',
      parseAsOf,
    )
    .option('--json', 'print the summary as one JSON object')
    .option('--audit-file <file>', `append one audit record per deletion to this file (env ${ENV.auditFile.name})`)
    .option('--audit-store <url>', `ship the audit records to this store (env ${ENV.auditStore.name})`)
    .option(
      '--conditional-delete <mode>',
      `recheck (default: HEAD each candidate first; any S3 server) or native (the server checks the ETag: AWS) (env ${ENV.conditionalDelete.name})`,
    )
    .option(
      '--grace-minutes <n>',
      `delete only this long after a file's TTL ran out (default 60; env ${ENV.graceMinutes.name})`,
      nonNegative,
    )
    .action(async (flags: ExpireFlags) => {
      let target: SweepTarget | undefined;
      let audit: AuditWriter | undefined;
      let tempAuditDir: string | undefined;
      let bar: cliProgress.SingleBar | undefined;
      try {
        const ttl = ttlSettingsFromEnv(env, flags.ttlDays);
        if (!ttl)
          throw new MemvaultError('CONFIG', `expire: no TTL configured; pass --ttl-days or set ${ENV.ttlDays.name}`);
        // File history is on by default: the sweep enforces its retention too (docs/versions.md).
        const history = resolveHistoryOptions(historyFromEnv(env));
        const sweeper = sweeperFromEnv(env);
        const mode = flags.conditionalDelete ?? sweeper.conditionalDelete ?? 'recheck';
        if (mode !== 'native' && mode !== 'recheck')
          throw new MemvaultError('CONFIG', 'expire: --conditional-delete must be native or recheck');
        const graceRaw = flags.graceMinutes ?? sweeper.graceMinutes;

        target = await openTarget(storeUrlFrom(flags, env), env, mode);
        // A sweep of a prefix that holds no memvault data (a mistyped --store) would report
        // "deleted 0 of 0" as if it had done its work.
        if (
          (await target.store.head(DEPLOYMENT_RECORD_KEY)) === null &&
          (await firstDeploymentDataKey(target.store)) === undefined
        ) {
          throw new MemvaultError(
            'CONFIG',
            `expire: there is no memvault deployment in this store (no ${DEPLOYMENT_RECORD_KEY} and no user data): check --store. Nothing was swept.`,
          );
        }
        const auditFile = flags.auditFile ?? readEnv(env, 'auditFile');
        const auditStoreUrl = flags.auditStore ?? sweeper.auditStore;
        if (!flags.dryRun && (auditFile || auditStoreUrl)) {
          const uploadStore = auditStoreUrl ? await openCliStore(auditStoreUrl, env, { create: true }) : undefined;
          // A store-only audit (the infra's Fargate task has no disk worth keeping) goes through a
          // temporary file that is sealed and uploaded on close.
          if (!auditFile) tempAuditDir = mkdtempSync(join(tmpdir(), 'memvault-expire-'));
          audit = await AuditWriter.open({
            file: auditFile ?? join(tempAuditDir!, 'audit.jsonl'),
            ...(uploadStore ? { upload: { store: uploadStore }, sealOnClose: true } : {}),
          });
        }

        if (deps.progress ?? process.stderr.isTTY === true) {
          bar = new cliProgress.SingleBar(
            {
              format: 'memvault expire | {value} files scanned | {expired} expired | {kept} kept | {errors} errors',
              stream: process.stderr,
              hideCursor: true,
            },
            cliProgress.Presets.shades_classic,
          );
          bar.start(0, 0, { expired: 0, kept: 0, errors: 0 });
        }
        const requests: RequestCounter = {};
        const store = target.store;
        const deleter = target.deleter;
        const summary = await withRequestCounter(requests, () =>
          sweep({
            store,
            ttl,
            ...(history ? { history } : {}),
            ...(flags.asOf ? { asOf: flags.asOf } : {}),
            ...(deps.now ? { now: deps.now } : {}),
            ...(graceRaw !== undefined ? { graceMs: graceRaw * 60_000 } : {}),
            dryRun: flags.dryRun ?? false,
            ...(deleter ? { deleter } : {}),
            ...(audit ? { audit } : {}),
            onProgress: (p) => {
              bar?.setTotal(p.scanned);
              bar?.update(p.scanned, { expired: p.expired, kept: p.kept, errors: p.errors });
            },
            ...(flags.dryRun && !flags.json
              ? { onExpired: (d) => out(`would delete uid=${d.uid} object=sha256:${d.keyHash} idle=${d.idleDays}d\n`) }
              : {}),
          }),
        );
        bar?.stop();
        bar = undefined;
        out(flags.json ? `${JSON.stringify({ ...summary, requests })}\n` : formatSummary(summary, requests));
        setExitCode(summary.errors > 0 ? 1 : 0);
      } catch (error) {
        bar?.stop();
        // One line, the CLI's exit-code scheme (usage 2, runtime 3); never a stack trace.
        setExitCode(reportError(error, err));
      } finally {
        await audit?.close();
        if (tempAuditDir) {
          // Keep the records on disk when shipping them failed; they are the only copy.
          if (audit?.uploadError) err(`memvault: audit upload failed; records kept in ${tempAuditDir}\n`);
          else rmSync(tempAuditDir, { recursive: true, force: true });
        }
        await target?.store.close();
      }
    });
}
