/**
 * The scheduled sweeper as an AWS Lambda handler (`memvault/lambda`; the CDK construct bundles this
 * file). Each invocation runs the same sweep as `memvault expire` (src/expiry/sweep.ts) on the store
 * named by MEMVAULT_STORE, for at most the invocation's time: when fewer than
 * MEMVAULT_SWEEP_STOP_MARGIN_SECONDS remain it stops after the batch in hand and leaves a checkpoint
 * (src/expiry/checkpoint.ts), and the next invocation continues the pass from there.
 *
 * Events: `{ "mode": "start" }` (the daily schedule; the default) continues an unfinished pass or
 * starts a new one; `{ "mode": "continue" }` (the frequent schedule) only continues an unfinished
 * pass and otherwise returns after one GET.
 *
 * Output: one JSON line on stdout per invocation (`event` = `memvault.sweep`, the sweep summary of
 * `memvault expire --json` plus `requests` and `pass`), or `memvault.sweep.skipped` /
 * `memvault.sweep.failed`. No keys, user ids or names. The invocation fails (Lambda `Errors`, the
 * dead-letter queue) when the sweep could not do its work: configuration, store, or files it could
 * not handle (`errors` > 0).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditWriter } from '../audit/writer.js';
import { isMemvaultError, MemvaultError } from '../errors.js';
import {
  isSweepOverdue,
  readSweepState,
  repairSweepState,
  writeSweepState,
  type SweepState,
  type SweepStateRepair,
} from '../expiry/checkpoint.js';
import { ENV, readEnv } from '../config/env.js';
import { historyFromEnv, s3FromEnv, sweeperFromEnv, ttlSettingsFromEnv } from '../config/from-env.js';
import type { ConditionalDeleter } from '../expiry/deleter.js';
import { sweep, type SweepSummary } from '../expiry/sweep.js';
import { resolveHistoryOptions } from '../vault/history-options.js';
import type { HistoryRetention } from '../expiry/history-retention.js';
import { withRequestCounter, type RequestCounter } from '../store/accounting.js';
import { openStore } from '../store/open.js';
import type { ObjectStore } from '../store/port.js';
import { checkSweeperHandlerOptions, sweeperModeOf } from './arguments.js';

/**
 * The names of the variables the handler reads (the construct sets all but the S3 endpoint
 * overrides), from the one table (config/env.ts; docs/configuration.md).
 */
export const SWEEPER_ENV = {
  ttlDays: ENV.ttlDays.name,
  classes: ENV.ttlClasses.name,
  defaultClass: ENV.ttlDefaultClass.name,
  touchIntervalHours: ENV.touchIntervalHours.name,
  store: ENV.store.name,
  auditStore: ENV.auditStore.name,
  conditionalDelete: ENV.conditionalDelete.name,
  graceMinutes: ENV.graceMinutes.name,
  stopMarginSeconds: ENV.stopMarginSeconds.name,
  overdueHours: ENV.overdueHours.name,
} as const;

/** Time kept back for the last batch, the checkpoint and the audit upload. */
const DEFAULT_STOP_MARGIN_SECONDS = 60;
/** No finished pass for this long (the schedule is daily) and every run reports the sweep overdue and fails. */
const DEFAULT_OVERDUE_HOURS = 48;
/** At most one checkpoint write per this interval while sweeping (plus one when the run stops). */
const DEFAULT_CHECKPOINT_INTERVAL_MS = 10_000;

export interface SweeperEvent {
  mode?: 'start' | 'continue';
}

/** The part of the Lambda context the handler uses. */
export interface SweeperContext {
  getRemainingTimeInMillis(): number;
}

export type SkipReason = 'running' | 'nothing-to-continue' | 'concurrent-run';

export type SweeperResult =
  | { event: 'memvault.sweep'; complete: boolean; errors: number; expired: number; scanned: number }
  | { event: 'memvault.sweep.skipped'; reason: SkipReason };

export interface SweeperHandlerOptions {
  env?: NodeJS.ProcessEnv;
  /** One JSON line per invocation. Default: stdout (the function's log stream, one log event per line). */
  log?: (line: string) => void;
  /** The sweeper's clock (tests). */
  now?: () => Date;
  /** Minimum time between checkpoint writes while sweeping. */
  checkpointIntervalMs?: number;
  /** Page size of the listing (tests). */
  pageSize?: number;
  /** Files between checkpoints (tests; see SweepOptions.checkpointEvery). */
  checkpointEvery?: number;
}

interface SweeperConfig {
  storeUrl: string;
  ttl: NonNullable<ReturnType<typeof ttlSettingsFromEnv>>;
  /** File history's retention (on by default; MEMVAULT_HISTORY=0 turns it off): docs/versions.md. */
  history: HistoryRetention | undefined;
  mode: 'native' | 'recheck';
  graceMs: number | undefined;
  auditStoreUrl: string | undefined;
  stopMarginMs: number;
  overdueAfterMs: number;
}

function configFrom(env: NodeJS.ProcessEnv): SweeperConfig {
  const storeUrl = readEnv(env, 'store');
  if (!storeUrl) throw new MemvaultError('CONFIG', `expire: ${ENV.store.name} is not set`);
  const ttl = ttlSettingsFromEnv(env);
  if (!ttl) throw new MemvaultError('CONFIG', `expire: no TTL configured; set ${ENV.ttlDays.name}`);
  const sweeper = sweeperFromEnv(env);
  const grace = sweeper.graceMinutes;
  return {
    storeUrl,
    ttl,
    history: resolveHistoryOptions(historyFromEnv(env)),
    mode: sweeper.conditionalDelete ?? 'recheck',
    graceMs: grace === undefined ? undefined : grace * 60_000,
    auditStoreUrl: sweeper.auditStore,
    stopMarginMs: (sweeper.stopMarginSeconds ?? DEFAULT_STOP_MARGIN_SECONDS) * 1000,
    overdueAfterMs: (sweeper.overdueHours ?? DEFAULT_OVERDUE_HOURS) * 3_600_000,
  };
}

interface SweepTarget {
  store: ObjectStore;
  deleter?: ConditionalDeleter;
}

async function openTarget(config: SweeperConfig, env: NodeJS.ProcessEnv): Promise<SweepTarget> {
  if (!config.storeUrl.startsWith('s3://')) return { store: await openStore(config.storeUrl) };
  // Loaded only for S3, so that a file-store sweep never loads the AWS SDK.
  const { createS3Store, parseS3Url } = await import('../store/s3.js');
  const { s3Deleter } = await import('../expiry/deleter.js');
  const store = createS3Store({ url: config.storeUrl, s3: s3FromEnv(env) });
  const { bucket, prefix } = parseS3Url(config.storeUrl);
  return { store, deleter: s3Deleter({ client: store.client, bucket, prefix, mode: config.mode }) };
}

interface OpenAudit {
  writer: AuditWriter;
  dir: string;
  uploadStore: ObjectStore;
}

async function openAudit(url: string, env: NodeJS.ProcessEnv): Promise<OpenAudit> {
  const uploadStore = await openStore(url, { env });
  // /tmp is the function's only disk: the records go through a file that is sealed and shipped on close.
  const dir = mkdtempSync(join(tmpdir(), 'memvault-sweep-'));
  const writer = await AuditWriter.open({
    file: join(dir, 'audit.jsonl'),
    upload: { store: uploadStore },
    sealOnClose: true,
  });
  return { writer, dir, uploadStore };
}

function defaultLog(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** A handler with injected environment, clock and log (tests); `handler` is the default one. */
export function createSweeperHandler(
  options: SweeperHandlerOptions = {},
): (event: SweeperEvent | undefined, context: SweeperContext) => Promise<SweeperResult> {
  checkSweeperHandlerOptions(options);
  const log = options.log ?? defaultLog;
  const now = options.now ?? (() => new Date());
  const checkpointIntervalMs = options.checkpointIntervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS;

  return async (event, context) => {
    const env = options.env ?? process.env;
    let target: SweepTarget | undefined;
    let audit: OpenAudit | undefined;
    try {
      const config = configFrom(env);
      const mode = sweeperModeOf(event); // before the store is opened: a misspelt mode must not start a sweep
      target = await openTarget(config, env);
      const store = target.store;

      const read = await readSweepState(store);
      const startedAt = now();
      // Believed only as far as a run could have written it: what it could not is dropped, swept past, reported.
      const { state: previous, repaired } = read.state
        ? repairSweepState(read.state, startedAt)
        : { state: undefined, repaired: [] as SweepStateRepair[] };
      const overdue = isSweepOverdue(previous, startedAt, config.overdueAfterMs);
      const notes = { ...(repaired.length > 0 ? { stateRepaired: repaired } : {}), ...(overdue ? { overdue } : {}) };
      if (previous?.leaseUntil !== undefined && Date.parse(previous.leaseUntil) > startedAt.getTime()) {
        return skipped(log, 'running', notes);
      }
      if (mode === 'continue' && previous?.resumeAfter === undefined && repaired.length === 0)
        return skipped(log, 'nothing-to-continue', notes);

      const resumeAfter = previous?.resumeAfter;
      let state: SweepState = {
        v: 1,
        ...(resumeAfter !== undefined ? { resumeAfter } : {}),
        passStartedAt:
          resumeAfter !== undefined && previous?.passStartedAt ? previous.passStartedAt : startedAt.toISOString(),
        runs: resumeAfter !== undefined ? (previous?.runs ?? 0) + 1 : 1,
        leaseUntil: new Date(startedAt.getTime() + context.getRemainingTimeInMillis()).toISOString(),
        ...(previous?.lastCompletedAt ? { lastCompletedAt: previous.lastCompletedAt } : {}),
      };
      let etag = await writeSweepState(store, state, read.etag);
      if (etag === undefined) return skipped(log, 'concurrent-run', notes);
      const save = async (next: SweepState): Promise<void> => {
        const written = await writeSweepState(store, next, etag);
        if (written === undefined)
          throw new MemvaultError('CONFLICT', 'expire: another run replaced the sweep checkpoint');
        state = next;
        etag = written;
      };

      let latest: string | undefined;
      let savedAt = startedAt.getTime();
      const requests: RequestCounter = {};
      let summary: SweepSummary;
      try {
        if (config.auditStoreUrl) audit = await openAudit(config.auditStoreUrl, env);
        const auditWriter = audit?.writer;
        summary = await withRequestCounter(requests, () =>
          sweep({
            store,
            ttl: config.ttl,
            ...(config.history ? { history: config.history } : {}),
            now,
            ...(config.graceMs !== undefined ? { graceMs: config.graceMs } : {}),
            ...(target?.deleter ? { deleter: target.deleter } : {}),
            ...(auditWriter ? { audit: auditWriter } : {}),
            ...(options.pageSize ? { pageSize: options.pageSize } : {}),
            ...(options.checkpointEvery ? { checkpointEvery: options.checkpointEvery } : {}),
            ...(resumeAfter !== undefined ? { startAfter: resumeAfter } : {}),
            shouldStop: () => context.getRemainingTimeInMillis() < config.stopMarginMs,
            onCheckpoint: async (key) => {
              latest = key;
              if (now().getTime() - savedAt < checkpointIntervalMs) return;
              savedAt = now().getTime();
              await save({ ...state, resumeAfter: key });
            },
          }),
        );
      } catch (error) {
        // Keep the place reached so far, and let the next run start without waiting for the lease.
        const { leaseUntil: _held, ...rest } = state;
        await save({ ...rest, ...(latest !== undefined ? { resumeAfter: latest } : {}) }).catch(() => undefined);
        throw error;
      }
      // Ship the audit segment; whether that worked is reported after the pass's place is saved.
      await audit?.writer.close();
      const auditShipped = audit ? audit.writer.uploadError === undefined : undefined;

      const { leaseUntil: _held, resumeAfter: _old, ...rest } = state;
      const finished: SweepState = summary.complete
        ? { ...rest, lastCompletedAt: now().toISOString() }
        : { ...rest, ...((latest ?? resumeAfter) !== undefined ? { resumeAfter: (latest ?? resumeAfter)! } : {}) };
      await save(finished);

      const line = {
        event: 'memvault.sweep' as const,
        ...summary,
        requests,
        pass: { startedAt: finished.passStartedAt, runs: finished.runs },
        ...(auditShipped !== undefined ? { auditShipped } : {}),
        ...(notes.stateRepaired ? { stateRepaired: notes.stateRepaired } : {}),
        // Judged again after the run: a pass it finished is no longer overdue.
        ...(isSweepOverdue(finished, now(), config.overdueAfterMs) ? { overdue: true } : {}),
      };
      log(JSON.stringify(line));
      failOnNotes(line);
      if (auditShipped === false)
        throw new MemvaultError(
          'STORE_UNAVAILABLE',
          'expire: the audit records could not be shipped to the audit store',
        );
      if (summary.errors > 0) {
        throw new MemvaultError(
          'STORE_UNAVAILABLE',
          `expire: ${summary.errors} of ${summary.scanned} files could not be handled (see the summary line)`,
        );
      }
      return {
        event: 'memvault.sweep',
        complete: summary.complete,
        errors: summary.errors,
        expired: summary.expired,
        scanned: summary.scanned,
      };
    } catch (error) {
      // The message of a MemvaultError is written for operators and carries no key or path; anything else is summarised by its name.
      const detail = isMemvaultError(error)
        ? { code: error.code, message: error.message }
        : { code: 'INTERNAL', message: `unexpected ${error instanceof Error ? error.name : 'failure'}` };
      log(JSON.stringify({ event: 'memvault.sweep.failed', ...detail }));
      throw isMemvaultError(error)
        ? error
        : new MemvaultError('INTERNAL', 'expire: the sweep failed unexpectedly', { cause: error });
    } finally {
      if (audit) {
        await audit.writer.close().catch(() => undefined);
        if (!audit.writer.uploadError) rmSync(audit.dir, { recursive: true, force: true });
        await audit.uploadStore.close();
      }
      await target?.store.close();
    }
  };
}

interface RunNotes {
  stateRepaired?: SweepStateRepair[];
  overdue?: boolean;
}

/** A run that swept or stepped aside still fails (Lambda Errors: the alarm) when its notes say the sweep is unwell. */
function failOnNotes(notes: RunNotes): void {
  if (notes.stateRepaired) {
    throw new MemvaultError(
      'INTEGRITY',
      `expire: the sweep checkpoint held what no run writes (${notes.stateRepaired.join(', ')}); it was dropped and the sweep ran without it`,
    );
  }
  if (notes.overdue)
    throw new MemvaultError(
      'STORE_INCONSISTENT',
      'expire: no sweep pass has finished within MEMVAULT_SWEEP_OVERDUE_HOURS',
    );
}

function skipped(log: (line: string) => void, reason: SkipReason, notes: RunNotes): SweeperResult {
  const result = { event: 'memvault.sweep.skipped' as const, reason };
  log(JSON.stringify({ ...result, ...notes }));
  failOnNotes(notes);
  return result;
}

/** The Lambda entry point: `memvault/lambda` `handler`, configured from the function's environment. */
export const handler = createSweeperHandler();
