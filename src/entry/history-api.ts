/**
 * The vault's history methods (docs/versions.md): history, restore and dropVersion, each checked
 * first (src/entry/arguments.ts), then opened on the user's existing key and audited whatever the
 * outcome. src/vault/history.ts does the work; createVault (memvault.ts) gives the opening.
 */
import type { AuditEntry } from '../audit/record.js';
import { isMemvaultError } from '../errors.js';
import { dropVersion, listHistory, restore as restoreHistory, type HistoryContext } from '../vault/history.js';
import { checkDropVersionArgs, checkHistoryArgs, checkRestoreArgs } from './arguments.js';
import type { LifecycleOptions, Vault } from './vault-types.js';

export interface HistoryApiDeps {
  /** The user's history context and audit pseudonym; throws CONFIG with history off, NOT_FOUND for an unknown user. */
  open(userId: string): Promise<{ ctx: HistoryContext; auditUid: string }>;
  /** Appends a record for a failure before the user was opened. */
  appendAudit(entry: AuditEntry): void;
  /** Runs `work` and appends its record, ok or error, with its counts. */
  audited<T>(entry: AuditEntry, work: () => Promise<T>, countsOf: (result: T) => Record<string, number>): Promise<T>;
}

const actorOf = (options: LifecycleOptions | undefined) => (options?.actor !== undefined ? { actor: options.actor } : {});

export function createHistoryApi(deps: HistoryApiDeps): Pick<Vault, 'history' | 'restore' | 'dropVersion'> {
  const withHistory = async <T>(userId: string, entry: AuditEntry, work: (ctx: HistoryContext) => Promise<T>, countsOf: (r: T) => Record<string, number>) => {
    let opened: { ctx: HistoryContext; auditUid: string };
    try {
      opened = await deps.open(userId);
    } catch (error) {
      deps.appendAudit({ ...entry, outcome: 'error', code: isMemvaultError(error) ? error.code : 'INTERNAL' });
      throw error;
    }
    return deps.audited({ ...entry, uid: opened.auditUid }, () => work(opened.ctx), countsOf);
  };
  return {
    history: async (userId, path, options) => {
      const canonical = checkHistoryArgs(userId, path, options);
      return withHistory(
        userId,
        { type: 'history', ...actorOf(options) },
        (ctx) => listHistory(ctx, canonical),
        (r) => ({ versions: r.versions.length }),
      );
    },
    restore: async (userId, options) => {
      const checked = checkRestoreArgs(userId, options);
      return withHistory(
        userId,
        { type: 'restore', ...actorOf(options) },
        (ctx) => restoreHistory(ctx, checked),
        (r) => ({ restored: r.restored, deleted: r.deleted, unchanged: r.unchanged, conflicts: r.conflicts, dryRun: r.dryRun ? 1 : 0 }),
      );
    },
    dropVersion: async (userId, path, seq, options) => {
      const canonical = checkDropVersionArgs(userId, path, seq, options);
      return withHistory(
        userId,
        { type: 'restore', ...actorOf(options) },
        (ctx) => dropVersion(ctx, canonical, seq),
        (dropped) => ({ dropped: dropped ? 1 : 0 }),
      );
    },
  };
}
