/**
 * history (docs/versions.md): the versions of a file and of every file below it. The opening shared
 * by history, restore and dropVersion (src/lifecycle/restore.ts) lives here too: on the user's
 * existing key (an unknown user is NOT_FOUND, never created), audited whatever the outcome.
 */
import { auditPseudonymsOf } from '../audit/index.js';
import type { AuditEntry } from '../audit/record.js';
import { validateUserId } from '../crypto/user-id.js';
import { MemvaultError } from '../errors.js';
import { listHistory, type HistoryContext, type VersionInfo } from '../vault/history.js';
import { actorOf, auditFailure } from './audited.js';
import type { LifecycleContext } from './context.js';
import type { LifecycleOptions } from './types.js';

async function openHistory(
  ctx: LifecycleContext,
  userId: string,
): Promise<{ history: HistoryContext; auditUid: string }> {
  validateUserId(userId);
  if (!ctx.history)
    throw new MemvaultError(
      'CONFIG',
      'memvault: file history is turned off for this vault (history: false, or MEMVAULT_HISTORY=0)',
    );
  // Reading or restoring never creates a user: an unknown user is NOT_FOUND (encrypted stores).
  const { encryption, codec } = ctx;
  const userCodec = encryption
    ? await encryption.codecProvider.forUid(encryption.codecProvider.uidOf(userId))
    : await codec.forUser(userId);
  const files = await ctx.restoreFiles(userId, userCodec);
  return {
    history: { store: ctx.observedStore, codec: userCodec, files },
    auditUid: auditPseudonymsOf(userCodec, codec).uid,
  };
}

/** Opens the user's history and runs `work` audited; a failure to open is audited too. */
export async function withHistory<T>(
  ctx: LifecycleContext,
  userId: string,
  entry: AuditEntry,
  work: (history: HistoryContext) => Promise<T>,
  countsOf: (result: T) => Record<string, number>,
): Promise<T> {
  let opened: { history: HistoryContext; auditUid: string };
  try {
    opened = await openHistory(ctx, userId);
  } catch (error) {
    auditFailure(ctx.audit, entry, error);
    throw error;
  }
  return ctx.audited({ ...entry, uid: opened.auditUid }, () => work(opened.history), countsOf);
}

/** `path` is canonical (checked by src/entry/arguments.ts). */
export function history(ctx: LifecycleContext) {
  return async (
    userId: string,
    path: string,
    options?: LifecycleOptions,
  ): Promise<{ versions: VersionInfo[]; truncated: boolean }> =>
    withHistory(
      ctx,
      userId,
      { type: 'history', ...actorOf(options) },
      (h) => listHistory(h, path),
      (r) => ({ versions: r.versions.length }),
    );
}
