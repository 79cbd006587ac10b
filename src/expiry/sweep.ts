/**
 * The sweeper behind `memvault expire`: streams the listing of `u/` (one LIST per 1,000 keys, key
 * order), decides each file with decide.ts, and deletes the expired ones in batches through a
 * ConditionalDeleter (one DeleteObjects per 1,000 on S3). Memory holds one listing page and one
 * batch, never the whole key set, so it stays flat however many objects the bucket holds.
 *
 * Safe to run on several machines at once: every deletion is conditional on the version listed, so
 * the second sweeper's delete of a file the first one removed finds it gone (or deletes nothing: on
 * a versioned bucket, at worst one more delete marker, which the housekeeping rule removes). Both
 * sweepers may then report and audit the same deletion.
 */
import { createHash, randomUUID } from 'node:crypto';
import { MemvaultError } from '../errors.js';
import type { AuditEntry } from '../audit/record.js';
import { listAll, type ObjectStore } from '../store/port.js';
import { observeSweep } from '../telemetry/signals.js';
import { classOfMarkers, DEFAULT_SWEEP_GRACE_MS, resolveTtl, type ResolvedTtl, type TtlSettings } from './config.js';
import { idleDays, isDeletable } from './decide.js';
import { storeDeleter, type ConditionalDeleter, type DeleteMode, type ExpiryCandidate } from './deleter.js';
import { classMarkerPrefix, parseUserKey, USERS_PREFIX } from './layout.js';
import { HistoryPruner, type HistoryRetention } from './history-retention.js';
import { DELETE_BATCH_KEYS } from '../store/layout.js';

/** A real sweep may not judge a date later than this past its own clock (the vault still serves those files). */
const FUTURE_TOLERANCE_MS = 60_000;

export interface AuditSink {
  append(entry: AuditEntry): unknown;
}

export interface SweepDecision {
  uid: string;
  /** SHA-256 of the object key (hex, first 32 characters): identifies the object, never its name. */
  keyHash: string;
  key: string;
  lastModified: Date;
  idleDays: number;
  size: number;
}

export interface SweepProgress {
  scanned: number;
  expired: number;
  kept: number;
  errors: number;
}

export interface SweepOptions {
  store: ObjectStore;
  /** Idle expiry of files; without it no file expires (a run for history retention only). */
  ttl?: TtlSettings;
  /** History retention (src/expiry/history-retention.ts); without it, only an expired file's versions go. */
  history?: HistoryRetention;
  /** Judge idleness as of this instant. Default: now. */
  asOf?: Date;
  /** The sweeper's clock (tests). */
  now?: () => Date;
  /** Delete only this long after a file became hidden (decide.ts). Default one hour. */
  graceMs?: number;
  dryRun?: boolean;
  /** Default: conditional per-key deletes through the store (memory, file). S3: see deleter.ts. */
  deleter?: ConditionalDeleter;
  /** One 'expire' record per deletion plus one summary record. */
  audit?: AuditSink;
  /** Each file a real run deleted, or a dry run would delete. */
  onExpired?: (decision: SweepDecision) => void;
  onProgress?: (progress: SweepProgress) => void;
  /** Page size of the listing (tests); S3 caps it at 1,000. */
  pageSize?: number;
  /**
   * Resume a pass: look only at keys after this one (a `resumeAfter` an earlier run handed to
   * onCheckpoint). The user of that key has their TTL class markers listed again first, since they
   * sort before the user's files and so lie behind the resume point.
   */
  startAfter?: string;
  /**
   * Asked after each object: true stops the sweep cleanly (the pending batch is deleted first) with
   * `complete: false`, and onCheckpoint receives the key to resume after. A Lambda run asks whether
   * its remaining time is running out.
   */
  shouldStop?: () => boolean;
  /**
   * Called with a key such that every key up to it has been decided and its deletion (if any) is
   * done: after each deleted batch, every `checkpointEvery` files, and when the sweep stops early. A run that dies after this call resumes from here (`startAfter`) and loses at
   * most the work since. The key is an object key: keep it out of logs.
   */
  onCheckpoint?: (resumeAfter: string) => unknown;
  /** Files between checkpoints (the pending batch is deleted first). Default 10,000. */
  checkpointEvery?: number;
  /**
   * Finishes the directory renames of one user that were stopped part-way (their runner killed, or
   * silent long past `resumeAfterMs`), so that no file stays at two places however long the user is
   * away: `stoppedRenameFinisher` (src/tool/commands/stopped.ts) over the host's way of opening a
   * user's files. Called once for each user the sweep meets, with the user's store uid; a rename the
   * store failed counts as an error of the sweep. A dry run does not call it.
   */
  finishStoppedRenames?: (storeUid: string) => Promise<{ finished: number; failed: number }>;
}

export interface SweepSummary {
  asOf: string;
  dryRun: boolean;
  mode: DeleteMode | 'dry-run';
  ttlDays: number;
  classes: Record<string, number>;
  graceMinutes: number;
  users: number;
  /** Files looked at. scanned = expired + kept + errors. */
  scanned: number;
  /** Deleted (dry run: would be deleted), including files another sweeper removed first. */
  expired: number;
  kept: number;
  errors: number;
  /** Kept versions deleted (dry run: would be deleted) by history retention or with an expired file (docs/versions.md). */
  versionsDropped?: number;
  /** Written or touched between the listing and the delete: kept (part of `kept`). */
  changedDuringSweep: number;
  /** Already gone when deleted (another sweeper, an erasure, a lifecycle rule; part of `expired`). */
  alreadyGone: number;
  /** Files of users whose TTL class this configuration does not know: never deleted (part of `errors`). */
  unknownClass: number;
  /** Directory renames stopped part-way that this sweep finished (with `finishStoppedRenames`). */
  renamesFinished?: number;
  durationMs: number;
  /** false when shouldStop ended the sweep before the end of the listing (resume from the last checkpoint). */
  complete: boolean;
  /** true when this sweep continued an earlier one (startAfter). */
  resumed: boolean;
}

export function keyHash(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex').slice(0, 32);
}

interface UserState {
  uid: string;
  classes: string[];
  ttlDays: number | undefined;
}

export function sweep(options: SweepOptions): Promise<SweepSummary> {
  return observeSweep(options.dryRun ?? false, () => runSweep(options));
}

async function runSweep(options: SweepOptions): Promise<SweepSummary> {
  const started = Date.now();
  const now = options.now ?? (() => new Date());
  const asOf = options.asOf ?? now();
  if (Number.isNaN(asOf.getTime())) throw new MemvaultError('CONFIG', 'expire: the --as-of date is not valid');
  const dryRun = options.dryRun ?? false;
  if (!dryRun && asOf.getTime() > now().getTime() + FUTURE_TOLERANCE_MS) {
    // Files idle "as of next week" are still served and touched today: only a dry run may look ahead.
    throw new MemvaultError('CONFIG', 'expire: a real run cannot use an --as-of date in the future (use --dry-run)');
  }
  const expireFiles = options.ttl !== undefined;
  // Without TTL settings no file is judged; the resolved placeholder only fills the summary's shape.
  const ttl = options.ttl ? resolveTtl(options.ttl) : { ttlDays: 0, defaultClass: 'default', classes: {} };
  const graceMs = options.graceMs ?? DEFAULT_SWEEP_GRACE_MS;
  if (!Number.isFinite(graceMs) || graceMs < 0)
    throw new MemvaultError('CONFIG', 'expire: the grace period must be >= 0');
  const deleter = options.deleter ?? storeDeleter(options.store);
  const sweepId = randomUUID();
  const audit = options.audit;

  const summary: SweepSummary = {
    asOf: asOf.toISOString(),
    dryRun,
    mode: dryRun ? 'dry-run' : deleter.mode,
    ttlDays: ttl.ttlDays,
    classes: { ...ttl.classes },
    graceMinutes: graceMs / 60_000,
    users: 0,
    scanned: 0,
    expired: 0,
    kept: 0,
    errors: 0,
    changedDuringSweep: 0,
    alreadyGone: 0,
    unknownClass: 0,
    durationMs: 0,
    complete: true,
    resumed: options.startAfter !== undefined,
  };
  const pruner = new HistoryPruner(options.history, asOf, graceMs);
  let droppedVersions: string[] = [];
  const dropVersions = async (): Promise<void> => {
    const batch = droppedVersions;
    droppedVersions = [];
    if (batch.length === 0) return;
    summary.versionsDropped = (summary.versionsDropped ?? 0) + batch.length;
    if (dryRun) return;
    const { failed } = await options.store.deleteMany(batch);
    summary.versionsDropped -= failed.length;
    summary.errors += failed.length;
  };
  if (options.history) summary.versionsDropped = 0;
  const finishRenames = dryRun ? undefined : options.finishStoppedRenames;
  if (finishRenames) summary.renamesFinished = 0;
  /** The user's stopped renames, finished as the sweep meets the user (before their files are judged). */
  const meetUser = async (uid: string): Promise<void> => {
    if (!finishRenames) return;
    try {
      const { finished, failed } = await finishRenames(uid);
      summary.renamesFinished! += finished;
      summary.errors += failed;
    } catch {
      summary.errors += 1; // the user's files could not be opened or listed
    }
  };

  const decision = (c: ExpiryCandidate): SweepDecision => ({
    uid: c.uid,
    keyHash: keyHash(c.key),
    key: c.key,
    lastModified: c.lastModified,
    idleDays: idleDays(c.lastModified, asOf),
    size: c.size,
  });

  let pending: ExpiryCandidate[] = [];
  const flush = async (): Promise<void> => {
    const batch = pending;
    pending = [];
    if (batch.length === 0) return;
    if (dryRun) {
      summary.expired += batch.length;
      for (const c of batch) {
        pruner.noteExpired(c.uid, c.key, c.lastModified); // its versions count as a real run's would
        options.onExpired?.(decision(c));
      }
      return;
    }
    const outcome = await deleter.deleteUnchanged(batch);
    for (const c of [...outcome.deleted, ...outcome.gone]) pruner.noteExpired(c.uid, c.key, c.lastModified);
    summary.kept += outcome.changed.length;
    summary.changedDuringSweep += outcome.changed.length;
    summary.errors += outcome.failed.length;
    summary.expired += outcome.deleted.length + outcome.gone.length;
    summary.alreadyGone += outcome.gone.length;
    for (const c of outcome.deleted) {
      const d = decision(c);
      // The key's hash identifies the object in the record; names (even encrypted) never go there,
      // nor the store uid: anyone with the master key can recompute it from a user id, also after an
      // erasure (audit uids are keyed by the user's own key, which the sweeper does not load).
      audit?.append({
        type: 'expire',
        requestId: sweepId,
        path: `sha256:${d.keyHash}`,
        outcome: 'ok',
        counts: { bytes: c.size, idleDays: d.idleDays },
      });
      options.onExpired?.(d);
    }
  };

  let user: UserState | undefined;
  const startAfter = options.startAfter;
  if (startAfter !== undefined) user = await resumedUser(options.store, ttl, startAfter, summary);
  if (user) await meetUser(user.uid);
  if (user) pruner.resumeInside(user.uid);
  /** Every key up to `key` decided and its deletion done (the files' and the versions'), then the checkpoint. */
  const checkpoint = async (key: string | undefined): Promise<void> => {
    await flush();
    await dropVersions();
    if (key !== undefined) await options.onCheckpoint?.(key);
  };
  let lastKey: string | undefined;
  let sinceCheckpoint = 0;
  const checkpointEvery = options.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY;
  if (!(Number.isInteger(checkpointEvery) && checkpointEvery >= 1))
    throw new MemvaultError('CONFIG', 'expire: checkpointEvery must be a whole number >= 1');
  for await (const object of listAll(options.store, USERS_PREFIX, options.pageSize ?? 1000, startAfter)) {
    lastKey = object.key;
    pruner.noteTime(object.lastModified);
    const parsed = parseUserKey(object.key);
    if (parsed.uid !== undefined) {
      if (user?.uid !== parsed.uid) {
        user = { uid: parsed.uid, classes: [], ttlDays: ttl.ttlDays };
        summary.users += 1;
        await meetUser(parsed.uid);
      }
      if (parsed.kind === 'other' && pruner.isVersion(parsed.uid, object.key)) {
        // The user's files are all decided: settle the pending deletions first, so that only the
        // versions of files this sweep really deleted go with them.
        if (pending.length > 0) await flush();
        if (pruner.shouldDrop(parsed.uid, object.key, object.lastModified, object.size)) {
          droppedVersions.push(object.key);
          if (droppedVersions.length >= DELETE_BATCH_KEYS) await dropVersions();
        }
      } else if (parsed.kind === 'class') {
        user.classes.push(parsed.className);
        user.ttlDays = classOfMarkers(ttl, user.classes)?.ttlDays;
      } else if (parsed.kind === 'file' && !expireFiles) {
        pruner.noteFile(parsed.uid, object.key); // a sweep of the history only: no file is judged
      } else if (parsed.kind === 'file') {
        pruner.noteFile(parsed.uid, object.key);
        summary.scanned += 1;
        sinceCheckpoint += 1;
        if (user.ttlDays === undefined) {
          summary.errors += 1;
          summary.unknownClass += 1;
        } else if (isDeletable(object.lastModified, user.ttlDays, asOf, graceMs)) {
          pending.push({
            key: object.key,
            uid: user.uid,
            etag: object.etag,
            lastModified: object.lastModified,
            size: object.size,
          });
          if (pending.length >= deleter.batchSize) {
            sinceCheckpoint = 0;
            await checkpoint(lastKey);
          }
        } else {
          summary.kept += 1;
        }
        if (summary.scanned % 1000 === 0) options.onProgress?.(progressOf(summary, pending.length));
        // Bound the work a run that dies can lose: every so many files, delete what is pending
        // (a smaller batch, at most one extra request per checkpointEvery files) and checkpoint.
        if (sinceCheckpoint >= checkpointEvery) {
          sinceCheckpoint = 0;
          await checkpoint(lastKey);
        }
      }
    }
    if (options.shouldStop?.()) {
      summary.complete = false;
      break;
    }
  }
  await flush();
  await dropVersions();
  if (!summary.complete) await checkpoint(lastKey ?? startAfter);
  summary.durationMs = Date.now() - started;
  options.onProgress?.(progressOf(summary, 0));
  if (!dryRun) {
    audit?.append({
      type: 'expire',
      requestId: sweepId,
      outcome: summary.errors > 0 ? 'error' : 'ok',
      counts: {
        scanned: summary.scanned,
        expired: summary.expired,
        kept: summary.kept,
        errors: summary.errors,
        changedDuringSweep: summary.changedDuringSweep,
        ...(summary.versionsDropped !== undefined ? { versionsDropped: summary.versionsDropped } : {}),
      },
    });
  }
  return summary;
}

/** Files between checkpoints besides those after each deleted batch (what a run that dies may redo). */
const DEFAULT_CHECKPOINT_EVERY = 10_000;

/**
 * The state of the user a resumed sweep starts inside: their class markers (`u/{uid}/c/`) sort
 * before their files, so they lie behind the resume point and are listed again (one LIST). A
 * resume point between two users (or on a key of no user) needs nothing.
 */
async function resumedUser(
  store: ObjectStore,
  ttl: ResolvedTtl,
  startAfter: string,
  summary: SweepSummary,
): Promise<UserState | undefined> {
  const parsed = parseUserKey(startAfter);
  if (parsed.uid === undefined) return undefined;
  const user: UserState = { uid: parsed.uid, classes: [], ttlDays: ttl.ttlDays };
  summary.users += 1;
  for await (const object of listAll(store, classMarkerPrefix(`${USERS_PREFIX}${parsed.uid}/`))) {
    const marker = parseUserKey(object.key);
    if (marker.kind === 'class') user.classes.push(marker.className);
  }
  user.ttlDays = classOfMarkers(ttl, user.classes)?.ttlDays;
  return user;
}

function progressOf(summary: SweepSummary, pending: number): SweepProgress {
  return { scanned: summary.scanned, expired: summary.expired + pending, kept: summary.kept, errors: summary.errors };
}
