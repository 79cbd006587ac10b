/**
 * restore and dropVersion (docs/versions.md): put files back as of a time (each file restored is a
 * new version), or drop one version for good. Opened and audited as history is (./history.ts).
 */
import { dropVersion as dropOneVersion, restore as restoreHistory, type RestoreResult } from '../vault/history.js';
import { actorOf } from './audited.js';
import type { LifecycleContext } from './context.js';
import { withHistory } from './history.js';
import type { LifecycleOptions } from './types.js';

/** `checked` is the restore's arguments as src/entry/arguments.ts checked them (a canonical path). */
export function restore(ctx: LifecycleContext) {
  return async (
    userId: string,
    checked: { path: string; asOf: Date; dryRun: boolean },
    options: LifecycleOptions | undefined,
  ): Promise<RestoreResult> =>
    withHistory(
      ctx,
      userId,
      { type: 'restore', ...actorOf(options) },
      (h) => restoreHistory(h, checked),
      (r) => ({
        restored: r.restored,
        deleted: r.deleted,
        unchanged: r.unchanged,
        conflicts: r.conflicts,
        dryRun: r.dryRun ? 1 : 0,
      }),
    );
}

/** `path` is canonical (checked by src/entry/arguments.ts). */
export function dropVersion(ctx: LifecycleContext) {
  return async (userId: string, path: string, seq: number, options?: LifecycleOptions): Promise<boolean> =>
    withHistory(
      ctx,
      userId,
      { type: 'restore', ...actorOf(options) },
      (h) => dropOneVersion(h, path, seq),
      (dropped) => ({ dropped: dropped ? 1 : 0 }),
    );
}
