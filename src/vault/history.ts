/**
 * File history (docs/versions.md): listing a file's or a tree's versions, restoring a file, a
 * directory or a whole user as of a point in time, and dropping one version for good.
 *
 * Every version is an object of its own under u/{uid}/v/ (src/store/layout.ts), written by
 * StoreUserFiles as the version is made; a delete or a move adds a tombstone. A restore writes the
 * chosen content back as a new version (actor `restore`), so it can itself be undone; a file that
 * did not exist at that time is deleted (fenced, as a delete is). Each file is restored by one
 * conditional write: a crash leaves every file at its old or its restored state, and a writer
 * racing the restore makes its condition fail, so it looks again (the writer's version is kept in
 * the history either way).
 */
import { MemvaultError } from '../errors.js';
import type { UserCodec } from '../crypto/user-codec.js';
import { newFenceId } from '../store/fence.js';
import { parseVersionKey, userHistoryPrefix, versionKeyOf } from '../store/layout.js';
import { PreconditionFailedError, type ObjectInfo, type ObjectStore } from '../store/port.js';
import { forEachLimit } from '../util/concurrency.js';
import { NameConflictError } from './names.js';
import { MEMORY_ROOT } from './paths.js';
import type { StoreUserFiles } from './store-user-files.js';
import { readKeptVersion } from '../crypto/verified-read.js';
import { SEQ_PER_MS, type VersionActor, type VersionEnd, type VersionRecord } from './version-record.js';

export interface HistoryContext {
  store: ObjectStore;
  codec: UserCodec;
  /** The user's files, writing history as `restore`. */
  files: StoreUserFiles;
}

export interface VersionInfo {
  path: string;
  /** The version's sequence number: its place in the file's history (pass it to dropVersion). */
  seq: number;
  actor: VersionActor;
  /** When the version was made (the writer's clock). */
  time: Date;
  /** Plaintext bytes (0 for a tombstone). */
  size: number;
  /** Present on a tombstone: how the file ended. */
  end?: VersionEnd;
}

export type RestoreAction = 'restored' | 'deleted' | 'unchanged' | 'conflict';

export interface RestoreResult {
  asOf: Date;
  dryRun: boolean;
  /** Per file: what the restore did (or, in a dry run, would do). */
  files: Array<{ path: string; action: RestoreAction; seq?: number }>;
  restored: number;
  deleted: number;
  unchanged: number;
  conflicts: number;
}

/** Versions listed per call at most (a file keeps at most `maxVersions`; a tree may have many). */
export const MAX_LISTED_VERSIONS = 10_000;
const RESTORE_CONCURRENCY = 8;
const RESTORE_ATTEMPTS = 5;

interface ListedVersion {
  path: string;
  fileKey: string;
  seq: number;
  object: ObjectInfo;
}

/** The history prefix of a path: the versions of the file at it and of every file below it. */
function scopePrefix(codec: UserCodec, path: string): string {
  const all = userHistoryPrefix(codec.uid);
  if (path === MEMORY_ROOT) return all;
  return `${all}${codec.keyFor(path).slice(codec.filesPrefix.length)}/`;
}

/**
 * Every version under the scope of `path`, grouped by file, each group newest first (a file's
 * version keys share `.../{name}/@` and sort by their counted-down number, so a group is one run
 * of the listing). Objects that are not version keys of this user, or whose name does not open,
 * are passed over.
 */
async function* versionGroups(ctx: HistoryContext, path: string): AsyncGenerator<ListedVersion[]> {
  const prefix = scopePrefix(ctx.codec, path);
  let group: ListedVersion[] = [];
  let continuationToken: string | undefined;
  do {
    const page = await ctx.store.list(prefix, continuationToken ? { continuationToken } : {});
    for (const object of page.objects) {
      const parsed = parseVersionKey(ctx.codec.uid, object.key);
      if (!parsed) continue;
      let filePath: string;
      try {
        filePath = ctx.codec.pathFor(parsed.fileKey);
      } catch {
        continue; // not a name of this user's (copied in, or damaged)
      }
      if (group.length > 0 && group[0]!.fileKey !== parsed.fileKey) {
        yield group;
        group = [];
      }
      group.push({ path: filePath, fileKey: parsed.fileKey, seq: parsed.seq, object });
    }
    continuationToken = page.continuationToken;
  } while (continuationToken);
  if (group.length > 0) yield group;
}

/** What history tells of a kept version, from its opened record and body. */
export function versionInfoOf(path: string, record: VersionRecord, data: Uint8Array): VersionInfo {
  return {
    path,
    seq: record.seq,
    actor: record.actor,
    time: new Date(record.time),
    size: data.byteLength,
    ...(record.end ? { end: record.end } : {}),
  };
}

/** A kept version, read through the one verified read (src/crypto/verified-read.ts: its record opens, matches its body and names its key's number). */
async function openVersion(
  ctx: HistoryContext,
  version: ListedVersion,
): Promise<{ record: VersionInfo; data: Uint8Array; keptAt?: number } | null> {
  const opened = await readKeptVersion(ctx.store, ctx.codec, version.path, version.object.key, version.seq);
  if (!opened) return null; // dropped or expired meanwhile
  const { record, data } = opened;
  return {
    record: versionInfoOf(version.path, record, data),
    data,
    ...(record.keptAt !== undefined ? { keptAt: record.keptAt } : {}),
  };
}

/** The versions of the file at `path` and of every file below it, each file's newest first. */
export async function listHistory(
  ctx: HistoryContext,
  path: string,
  limit = MAX_LISTED_VERSIONS,
): Promise<{ versions: VersionInfo[]; truncated: boolean }> {
  const versions: VersionInfo[] = [];
  for await (const group of versionGroups(ctx, path)) {
    for (const version of group) {
      if (versions.length >= limit) return { versions, truncated: true };
      const opened = await openVersion(ctx, version);
      if (opened) versions.push(opened.record);
    }
  }
  return { versions, truncated: false };
}

/**
 * Restore the file at `path`, everything below it, or (`/memories`) the whole user, as of `asOf`.
 * Which version was current at a time is told by when the history stored it (the store's clock).
 * Files without history (written before history was on) are left as they are.
 */
export async function restore(
  ctx: HistoryContext,
  options: { path: string; asOf: Date; dryRun: boolean },
): Promise<RestoreResult> {
  const result: RestoreResult = {
    asOf: options.asOf,
    dryRun: options.dryRun,
    files: [],
    restored: 0,
    deleted: 0,
    unchanged: 0,
    conflicts: 0,
  };
  const op = newFenceId();
  const pending: ListedVersion[][] = [];
  const flush = async () => {
    const batch = pending.splice(0);
    await forEachLimit(batch, RESTORE_CONCURRENCY, async (group) => {
      const outcome = await restoreFile(ctx, group, options.asOf, options.dryRun, op);
      result.files.push({ path: group[0]!.path, ...outcome });
      const counter = {
        restored: 'restored',
        deleted: 'deleted',
        unchanged: 'unchanged',
        conflict: 'conflicts',
      } as const;
      result[counter[outcome.action]] += 1;
    });
  };
  for await (const group of versionGroups(ctx, options.path)) {
    pending.push(group);
    if (pending.length >= 100) await flush();
  }
  await flush();
  result.files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return result;
}

async function restoreFile(
  ctx: HistoryContext,
  group: ListedVersion[],
  asOf: Date,
  dryRun: boolean,
  op: string,
): Promise<{ action: RestoreAction; seq?: number }> {
  const path = group[0]!.path;
  ctx.files.noteNewestVersion(path, group[0]!.seq);
  const target = await versionAt(ctx, group, asOf);
  const wanted = target && !target.record.end ? target.data : null;
  for (let attempt = 0; attempt < RESTORE_ATTEMPTS; attempt++) {
    const current = await currentState(ctx, path);
    try {
      if (wanted === null) {
        if (!current) return { action: 'unchanged' };
        if (dryRun) return { action: 'deleted' };
        await (
          await ctx.files.fence(path, current.etag, 'deleted', op)
        ).settled;
        return { action: 'deleted' };
      }
      if (current?.data && sameBytes(current.data, wanted)) return { action: 'unchanged', seq: target!.record.seq };
      if (dryRun) return { action: 'restored', seq: target!.record.seq };
      await ctx.files.write(path, wanted, current ? { ifMatch: current.etag } : { ifNoneMatch: true });
      return { action: 'restored', seq: target!.record.seq };
    } catch (error) {
      if (error instanceof NameConflictError) return { action: 'conflict' };
      if (!(error instanceof PreconditionFailedError)) throw error;
      // Written, deleted or moved meanwhile: look again (what was written is in the history too).
    }
  }
  return { action: 'conflict' };
}

/**
 * A version numbered past `asOf` by more than this was made after it (a number is never above its
 * writer's clock x 1,000: version-record.ts). The margin allows for a writer's clock ahead of the
 * store's; a re-keyed version made less than a writer's skew beyond it before `asOf` may be passed over.
 */
const SEQ_CLOCK_MARGIN_MS = 2_000;

/**
 * The version of one file that was newest at `asOf`, by when the store kept it: its LastModified,
 * or, for a version re-keying rewrote (src/crypto/rekey.ts), the time its record says the store
 * first kept it. A version listed as kept by `asOf` was (a rewrite only moves the time later). One
 * listed after it was made after it when its number says so (clock-numbered versions: creates,
 * overwrites, tombstones); otherwise (an edit, numbered one past what it replaced) it is opened to
 * see whether it was rewritten: one GET each, newest first, at most the file's versions.
 */
async function versionAt(
  ctx: HistoryContext,
  group: ListedVersion[],
  asOf: Date,
): Promise<{ record: VersionInfo; data: Uint8Array } | null> {
  for (const version of group) {
    if (version.object.lastModified.getTime() <= asOf.getTime()) return openVersion(ctx, version);
    if (version.seq / SEQ_PER_MS > asOf.getTime() + SEQ_CLOCK_MARGIN_MS) continue;
    const opened = await openVersion(ctx, version);
    if (opened?.keptAt !== undefined && opened.keptAt <= asOf.getTime()) return opened;
  }
  return null;
}

/**
 * The file now at `path`: its bytes and ETag, or only its ETag when it does not open (a damaged or
 * put-back object, which the restore replaces), or null when no file is there.
 */
async function currentState(ctx: HistoryContext, path: string): Promise<{ etag: string; data?: Uint8Array } | null> {
  try {
    // Checked for freshness: a put-back older version is rewritten even when its bytes are the ones wanted.
    const state = await ctx.files.inspect(path);
    return state?.file ? { etag: state.file.etag, data: state.file.data } : null;
  } catch (error) {
    if (!(error instanceof MemvaultError) || error.code !== 'INTEGRITY') throw error;
    const head = await ctx.store.head(ctx.codec.keyFor(path));
    return head ? { etag: head.etag } : null;
  }
}

/** Drop one version for good (a version holding what must not be kept). Returns false when there was none. */
export async function dropVersion(ctx: HistoryContext, path: string, seq: number): Promise<boolean> {
  if (!Number.isSafeInteger(seq) || seq < 1)
    throw new MemvaultError('INVALID_INPUT', 'memvault: a version is named by its sequence number, a positive integer');
  const key = versionKeyOf(ctx.codec.uid, ctx.codec.keyFor(path), seq);
  if (!(await ctx.store.head(key))) return false;
  await ctx.store.delete(key);
  return true;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}
